#pragma once
// `nmt prepare`: a parallel corpus of any size → a binary dataset (dataset.h) for
// `nmt train --data`, streaming in bounded memory: the text is read once to sample the subword
// model's training sentences (unless a model is given) and once to encode, never held whole.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nmt/data/corpus.h"
#include "nmt/text/subword.h"

namespace nmt::data {

struct PrepareOptions {
  // The corpus: parallel files PREFIX.SRC_LANG / PREFIX.TGT_LANG, or a tab-separated pair file
  // ("-" = standard input, which needs subword_model: it can be read only once). Either may be
  // gzip, xz or zstd compressed (by the file name's ending).
  std::string train_prefix, train_tsv;
  std::string src_lang = "en", tgt_lang = "fr";
  ReadOptions read;  // skip rules, as `nmt train` reads text
  std::string out_dir;
  // An existing SentencePiece model (e.g. a model directory's spm.model) instead of training one.
  std::string subword_model;
  // For a new subword model: vocab_size, model_type and seed are used; its training sentences
  // are a seeded uniform sample of input_sentence_size sentences (reservoir sampling over the
  // pairs, both sides of each sampled pair), so a corpus of any size trains it in fixed memory.
  text::SubwordOptions subword;
  uint64_t shard_pairs = 1'000'000;
  size_t max_len = 1024;  // pairs with a side of more subwords are left out (and counted)
  int threads = 2;        // encoding threads
  size_t chunk_pairs = 16384;
  bool quiet = false;
};

struct PrepareReport {
  uint64_t lines = 0, pairs = 0, skipped = 0, too_long = 0, tokens = 0, bytes = 0, shards = 0;
  uint64_t sampled_sentences = 0;
  double sample_seconds = 0, subword_seconds = 0, encode_seconds = 0;
};

// Writes the dataset into out_dir, which must not exist yet: everything goes to a temporary
// directory beside it, renamed to out_dir when complete, so a failed or interrupted run leaves
// no half dataset (and the temporary directory is removed). UsageError for bad options, an
// existing out_dir or mismatched parallel files; RuntimeError for unreadable input or a failed
// write (naming the file).
PrepareReport prepare_dataset(const PrepareOptions& options);

}  // namespace nmt::data
