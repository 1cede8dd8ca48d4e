#pragma once
// Subword segmentation: a thin wrapper over a SentencePiece model with a fixed special-id layout.
// SentencePiece itself lives in libnmt_spm.so (nmt/text/spm_c_abi), which subword.cc loads at
// run time; nothing else in the project includes SentencePiece's headers or links it.
//
// Every model this project trains or loads has the special ids of nmt/text/special_ids.h:
//   id 0 = "<pad>", id 1 = "<unk>", id 2 = "<s>" (BOS), id 3 = "</s>" (EOS),
// so tensors can be padded with 0 without consulting the model. load() rejects models with any
// other layout. Text is NFKC-normalised by the model (normalization "nmt_nfkc"), which also
// trims and collapses whitespace: decode(encode(s)) == s holds for NFKC-normal text with single
// spaces whose characters were seen in training.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nmt/text/special_ids.h"
#include "nmt/text/token_ids.h"

namespace nmt::text {

struct SubwordOptions {
  std::string model_type = "unigram";  // "unigram" or "bpe"
  int vocab_size = 8000;               // including the 4 special pieces
  double character_coverage = 1.0;     // 1.0: every character of the training text gets a piece
  std::string normalization = "nmt_nfkc";  // a SentencePiece rule name: nmt_nfkc, nfkc, identity...
  // At most this many sentences are used (sampled by our own seeded shuffle, so the sample is the
  // same on every machine); 0 = all.
  size_t input_sentence_size = 1000000;
  bool shuffle = true;  // sample randomly rather than take the first input_sentence_size sentences
  uint64_t seed = 1;
  // Threads for the trainer's E-step. The model is reproducible for a fixed value; different
  // thread counts may round differently and give a slightly different model.
  int num_threads = 1;
  // false lets vocab_size be an upper bound (useful for tiny corpora that cannot fill it).
  bool hard_vocab_limit = true;
  // Add 256 byte pieces so unseen characters encode as bytes instead of <unk>.
  bool byte_fallback = false;
  bool verbose = false;  // let SentencePiece log its training progress to stderr
};

class SubwordModel {
 public:
  static constexpr int kPadId = text::kPadId;
  static constexpr int kUnkId = text::kUnkId;
  static constexpr int kBosId = text::kBosId;
  static constexpr int kEosId = text::kEosId;
  static constexpr int kMaxSampleNbest = 512;  // SentencePiece's limit for n-best sampling

  // Whether SentencePiece can be used in this process (false when libnmt_spm.so is missing or
  // stale; see subword.cc); `why` receives the reason.
  static bool available(std::string* why = nullptr);

  // Trains a model on `sentences` (the caller chooses: joint source+target by default in this
  // project) and writes it atomically to `model_path`. Deterministic for fixed sentences and
  // options. Throws UsageError for invalid options, RuntimeError when SentencePiece fails (e.g.
  // vocab_size too large for the text with hard_vocab_limit).
  static void train(const std::vector<std::string>& sentences, const SubwordOptions& options,
                    const std::string& model_path);
  // Same, returning the serialized model instead of writing a file.
  static std::string train_serialized(const std::vector<std::string>& sentences, const SubwordOptions& options);

  // Missing, unreadable or corrupt file, or a model with a different special-id layout →
  // RuntimeError naming the file.
  static SubwordModel load(const std::string& path);
  // `name` is used in error messages (e.g. the checkpoint the bytes came from).
  static SubwordModel load_from_serialized(const std::string& bytes, const std::string& name = "serialized model");

  SubwordModel();  // empty; every other method throws RuntimeError until a model is assigned
  ~SubwordModel();
  SubwordModel(const SubwordModel&);  // cheap: loaded models are immutable and shared
  SubwordModel& operator=(const SubwordModel&);
  SubwordModel(SubwordModel&&) noexcept;
  SubwordModel& operator=(SubwordModel&&) noexcept;

  bool loaded() const { return impl_ != nullptr; }

  // Subword ids of `text`; no BOS/EOS are added.
  TokenIds encode(const std::string& text) const;
  // One segmentation of `text` sampled for subword regularisation (Kudo 2018): ids as encode()
  // gives, decoding to the same text, but drawn at random among the possible segmentations.
  // Unigram models: nbest = -1 samples from the whole segmentation lattice (forward-filtering
  // backward-sampling), nbest in 2..kMaxSampleNbest among the nbest best segmentations, nbest = 1
  // gives encode()'s segmentation; alpha is the inverse temperature (0: uniform; larger: closer
  // to encode()'s). BPE models: BPE-dropout (Provilkov et al. 2020) whatever nbest is, alpha
  // being the probability of dropping each merge (values above 1 act as 1).
  // Deterministic: the result depends on (model, text, nbest, alpha, seed) only, not on earlier
  // calls, other threads or the call order, so an epoch's sampling can be redone exactly on
  // resume from a seed per (epoch, sentence). Thread-safe. Invalid nbest or alpha → UsageError.
  TokenIds sample_encode(const std::string& text, int nbest, float alpha, uint64_t seed) const;
  // Detokenised text; pad, BOS and EOS ids are ignored. Out-of-range ids → RuntimeError.
  std::string decode(const TokenIds& ids) const;
  // The piece strings of `ids` (e.g. "▁a", "<s>"), for attention displays and debugging.
  std::vector<std::string> pieces(const TokenIds& ids) const;
  TokenId piece_to_id(const std::string& piece) const;  // kUnkId when unknown
  int vocab_size() const;
  // The model proto bytes (what train_serialized returns and load_from_serialized accepts).
  std::string serialized() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
  const Impl& impl() const;
};

// The subword models of a translation direction: with a joint vocabulary (nmt's default) one
// model twice; with separate vocabularies (`nmt train --separate-vocab`) the source text's and
// the target text's own models, whose ids mean different pieces.
struct SubwordPair {
  SubwordModel source, target;
  static SubwordPair joint(const SubwordModel& model) { return {model, model}; }
};

}  // namespace nmt::text
