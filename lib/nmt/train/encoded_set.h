#pragma once
// Data preparation shared by `nmt train` and `nmt bench` (so the benchmark trains on what
// training does): a corpus encoded into subword ids, the per-epoch subword sampling, and the
// subword model a run trains.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/data/batching.h"
#include "nmt/data/corpus.h"
#include "nmt/text/subword.h"
#include "nmt/text/token_ids.h"
#include "nmt/train/options.h"

namespace nmt::train {

struct EncodedSet {
  std::vector<text::TokenIds> src, tgt;
  std::vector<std::string> src_text, tgt_text;  // raw sentences (validation references, subword sampling)
  std::vector<data::ExampleLength> lengths;     // with EOS / BOS added (data::lengths_with_eos)
};

// Encodes a corpus; with `drop_long`, pairs with a side longer than max_len subwords (EOS
// included: data::pair_fits_with_eos) are left out and counted in *dropped.
EncodedSet encode_set(const data::ParallelCorpus& corpus, const text::SubwordPair& sp, int64_t max_len, bool drop_long,
                      size_t* dropped);

// Subword regularisation (Kudo 2018; BPE-dropout for BPE models): re-segments every pair of
// `set` from its raw text with SubwordModel::sample_encode, replacing its ids and lengths. Pair i
// of epoch e draws with seed mix_seed(mix_seed(mix_seed(seed, kSubwordSamplingStream), e), i)
// (its target with that mixed with 1 once more), so an epoch's segmentation depends on (seed,
// epoch) alone, whatever the thread count, and a resumed run redoes it exactly. A sampled side
// longer than max_len subwords (EOS included) falls back to encode()'s segmentation, which fits:
// encode_set kept only pairs whose plain segmentation does. Runs on LibTorch's intra-op threads.
inline constexpr uint64_t kSubwordSamplingStream = 0x5357'5245'474CULL;  // "SWREGL"
void sample_segmentations(EncodedSet& set, const text::SubwordPair& sp, int nbest, double alpha, uint64_t seed,
                          int64_t epoch, int64_t max_len);

// The subword model a run trains on its training corpus: --vocab-size (the source side's of
// --separate-vocab: --src-vocab-size when given), --subword-type, seeded.
text::SubwordOptions subword_options(const TrainOptions& options, bool source_side = false);
// Source and target sentences of the corpus, one list (the joint subword model's input).
std::vector<std::string> joint_sentences(const data::ParallelCorpus& corpus);

}  // namespace nmt::train
