// libnmt_spm: the C ABI of nmt_spm.h over SentencePiece's C++ API. Nothing here may throw across
// the boundary: every entry point catches and reports through `error`.
#include "nmt_spm.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#define NMT_SPM_EXPORT extern "C" __attribute__((visibility("default")))

namespace sentencepiece::random {
// SentencePiece's per-thread generator, which SampleEncode draws from (src/util.h; exported by
// libsentencepiece but not in its installed headers). It is seeded once per thread from the
// process-wide seed, so SetRandomGeneratorSeed alone cannot make one call reproducible; seeding
// this generator right before the call does. Should a SentencePiece version drop or change it,
// this library fails to link, which is the point of compiling it against SentencePiece.
std::mt19937* GetRandomGenerator();
}  // namespace sentencepiece::random

struct nmt_spm_processor {
  sentencepiece::SentencePieceProcessor sp;
};

namespace {

// A malloc'ed copy that the caller releases with nmt_spm_free.
char* copy_string(std::string_view s) {
  auto* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (!out) throw std::bad_alloc();
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

void set_error(char** error, std::string_view message) {
  if (!error) return;
  *error = static_cast<char*>(std::malloc(message.size() + 1));
  if (!*error) return;
  std::memcpy(*error, message.data(), message.size());
  (*error)[message.size()] = '\0';
}

// Runs `body` (returning a util::Status), turning a failed status or any exception into `error`.
template <typename Body>
int guarded(char** error, Body body) {
  if (error) *error = nullptr;
  try {
    const sentencepiece::util::Status status = body();
    if (status.ok()) return 0;
    set_error(error, status.ToString());
  } catch (const std::exception& e) {
    set_error(error, e.what());
  } catch (...) {
    set_error(error, "unknown exception in libnmt_spm");
  }
  return 1;
}

int copy_ids(const std::vector<int>& ids, int** out, size_t* count) {
  *count = ids.size();
  *out = static_cast<int*>(std::malloc(std::max<size_t>(ids.size(), 1) * sizeof(int)));
  if (!*out) throw std::bad_alloc();
  if (!ids.empty()) std::memcpy(*out, ids.data(), ids.size() * sizeof(int));
  return 0;
}

// Feeds the caller's sentences to the trainer without a temporary file.
class SentenceSpans : public sentencepiece::SentenceIterator {
 public:
  SentenceSpans(const char* const* sentences, const size_t* sizes, size_t count)
      : sentences_(sentences), sizes_(sizes), count_(count) {
    load();
  }
  bool done() const override { return next_ > count_; }
  void Next() override { load(); }
  const std::string& value() const override { return value_; }
  sentencepiece::util::Status status() const override { return sentencepiece::util::Status(); }

 private:
  void load() {
    if (next_ < count_) value_.assign(sentences_[next_], sizes_[next_]);
    ++next_;
  }
  const char* const* sentences_;
  const size_t* sizes_;
  size_t count_;
  size_t next_ = 0;
  std::string value_;
};

// Samples one of the `nbest` best segmentations with probability proportional to
// exp(alpha * score); false where the model has no n-best list (BPE), leaving it to SampleEncode.
// Not SampleEncode's own n-best path: SentencePiece 0.1.97 computes the weights exp(alpha * score)
// in float without normalising them, so for a long sentence (alpha * score < -103 for every
// candidate, e.g. scores below -1030 with alpha 0.1) all weights underflow to 0 and
// std::discrete_distribution then always picks the best: no sampling at all. Here the weights are
// relative to the best score, in double.
bool sample_nbest(const sentencepiece::SentencePieceProcessor& sp, std::string_view text, int nbest, float alpha,
                  std::mt19937& rng, std::vector<int>* ids) {
  sentencepiece::ImmutableNBestSentencePieceText nbests;
  if (!sp.NBestEncode(text, nbest, nbests.mutable_proto()).ok() || nbests.nbests_size() == 0) return false;
  std::vector<double> weights(nbests.nbests_size());
  double best = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < weights.size(); ++i) best = std::max<double>(best, nbests.nbests(i).score());
  double total = 0;
  for (size_t i = 0; i < weights.size(); ++i) total += weights[i] = std::exp(alpha * (nbests.nbests(i).score() - best));
  double u = std::generate_canonical<double, 53>(rng) * total;
  size_t chosen = 0;
  while (chosen + 1 < weights.size() && u >= weights[chosen]) u -= weights[chosen++];
  for (const auto& piece : nbests.nbests(chosen).pieces()) ids->push_back(static_cast<int>(piece.id()));
  return true;
}

}  // namespace

NMT_SPM_EXPORT int nmt_spm_abi_version(void) { return NMT_SPM_ABI_VERSION; }

NMT_SPM_EXPORT void nmt_spm_free(void* buffer) { std::free(buffer); }

NMT_SPM_EXPORT int nmt_spm_load(const char* bytes, size_t size, nmt_spm_processor** out, char** error) {
  *out = nullptr;
  return guarded(error, [&] {
    auto processor = std::make_unique<nmt_spm_processor>();
    sentencepiece::util::Status status = processor->sp.LoadFromSerializedProto(std::string_view(bytes, size));
    if (status.ok()) *out = processor.release();
    return status;
  });
}

NMT_SPM_EXPORT void nmt_spm_processor_free(nmt_spm_processor* processor) { delete processor; }

NMT_SPM_EXPORT int nmt_spm_piece_size(const nmt_spm_processor* processor) { return processor->sp.GetPieceSize(); }

NMT_SPM_EXPORT void nmt_spm_special_ids(const nmt_spm_processor* processor, int* pad, int* unk, int* bos, int* eos) {
  *pad = processor->sp.pad_id();
  *unk = processor->sp.unk_id();
  *bos = processor->sp.bos_id();
  *eos = processor->sp.eos_id();
}

NMT_SPM_EXPORT void nmt_spm_id_to_piece(const nmt_spm_processor* processor, int id, const char** piece, size_t* size) {
  const std::string& s = processor->sp.IdToPiece(id);
  *piece = s.data();
  *size = s.size();
}

NMT_SPM_EXPORT int nmt_spm_piece_to_id(const nmt_spm_processor* processor, const char* piece, size_t size) {
  return processor->sp.PieceToId(std::string_view(piece, size));
}

NMT_SPM_EXPORT float nmt_spm_score(const nmt_spm_processor* processor, int id) { return processor->sp.GetScore(id); }

NMT_SPM_EXPORT int nmt_spm_piece_type(const nmt_spm_processor* processor, int id) {
  const auto& sp = processor->sp;
  if (sp.IsUnknown(id)) return 2;
  if (sp.IsControl(id)) return 3;
  if (sp.IsUnused(id)) return 5;
  if (sp.IsByte(id)) return 6;
  return 1;
}

NMT_SPM_EXPORT int nmt_spm_encode(const nmt_spm_processor* processor, const char* text, size_t size, int** ids,
                                  size_t* count, char** error) {
  *ids = nullptr;
  *count = 0;
  return guarded(error, [&] {
    std::vector<int> out;
    sentencepiece::util::Status status = processor->sp.Encode(std::string_view(text, size), &out);
    if (status.ok()) copy_ids(out, ids, count);
    return status;
  });
}

NMT_SPM_EXPORT int nmt_spm_sample_encode(const nmt_spm_processor* processor, const char* text, size_t size,
                                         int nbest_size, float alpha, uint32_t seed, int** ids, size_t* count,
                                         char** error) {
  *ids = nullptr;
  *count = 0;
  return guarded(error, [&] {
    std::vector<int> out;
    std::mt19937& rng = *sentencepiece::random::GetRandomGenerator();
    rng.seed(seed);
    if (nbest_size > 1 && sample_nbest(processor->sp, std::string_view(text, size), nbest_size, alpha, rng, &out)) {
      copy_ids(out, ids, count);
      return sentencepiece::util::Status();
    }
    sentencepiece::util::Status status =
        processor->sp.SampleEncode(std::string_view(text, size), nbest_size, alpha, &out);
    if (status.ok()) copy_ids(out, ids, count);
    return status;
  });
}

NMT_SPM_EXPORT int nmt_spm_decode(const nmt_spm_processor* processor, const int* ids, size_t count, char** text,
                                  size_t* size, char** error) {
  *text = nullptr;
  *size = 0;
  return guarded(error, [&] {
    std::string out;
    sentencepiece::util::Status status = processor->sp.Decode(std::vector<int>(ids, ids + count), &out);
    if (status.ok()) {
      *text = copy_string(out);
      *size = out.size();
    }
    return status;
  });
}

NMT_SPM_EXPORT int nmt_spm_train(const char* const* keys, const char* const* values, size_t nargs,
                                 const char* const* sentences, const size_t* sizes, size_t count, uint32_t seed,
                                 char** model, size_t* model_size, char** error) {
  *model = nullptr;
  *model_size = 0;
  return guarded(error, [&] {
    std::unordered_map<std::string, std::string> args;
    for (size_t i = 0; i < nargs; ++i) args[keys[i]] = values[i];
    SentenceSpans input(sentences, sizes, count);
    sentencepiece::SetRandomGeneratorSeed(seed);
    std::string proto;
    sentencepiece::util::Status status = sentencepiece::SentencePieceTrainer::Train(args, &input, &proto);
    if (status.ok()) {
      *model = copy_string(proto);
      *model_size = proto.size();
    }
    return status;
  });
}
