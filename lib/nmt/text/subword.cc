#include "nmt/text/subword.h"

// SentencePiece is reached through libnmt_spm.so, a small library of ours with a C ABI
// (nmt/text/spm_c_abi/nmt_spm.h), which this file dlopen()s with RTLD_LOCAL | RTLD_DEEPBIND and
// calls through dlsym'd pointers; nothing links SentencePiece directly. Why: Debian's
// libsentencepiece bundles and exports its own protobuf-lite 3.14, while libtorch needs the
// system libprotobuf 3.21. In one process only one copy of each protobuf symbol wins: with
// libsentencepiece first libtorch segfaults in static initialisation, with libprotobuf first (how
// this project links executables) SentencePiece aborts ("compiled against 3.14.0") or fails
// protobuf CHECKs. RTLD_LOCAL keeps SentencePiece's symbols out of the global scope; RTLD_DEEPBIND
// (which applies to the library's dependencies too) makes libsentencepiece bind to its own
// protobuf before the global scope's libprotobuf, which RTLD_LOCAL alone does not do: tried in a
// program linking libprotobuf, RTLD_LOCAL alone fails the first model load with protobuf's
// "compiled against version 3.14.0 ... installed version (3.21.12)" FATAL error.
//
// libnmt_spm is compiled against SentencePiece's headers and linked with --no-undefined, so a
// SentencePiece whose API changed fails to build; across the boundary only C functions whose
// signatures come from nmt_spm.h (the pointers below are declared with decltype of them) and an
// ABI version number.
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nmt/util/rng.h"
#include "nmt/text/spm_c_abi/nmt_spm.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

#if defined(__SANITIZE_ADDRESS__)
// See loader_dlopen(): memory SentencePiece allocates with operator new is seen as malloc'ed.
extern "C" const char* __asan_default_options() { return "alloc_dealloc_mismatch=0"; }
#endif

namespace nmt::text {
namespace {

namespace fs = std::filesystem;

struct SpmApi {
  void* handle = nullptr;
#define NMT_SPM_FN(name) decltype(&::nmt_spm_##name) name = nullptr
  NMT_SPM_FN(abi_version);
  NMT_SPM_FN(free);
  NMT_SPM_FN(load);
  NMT_SPM_FN(processor_free);
  NMT_SPM_FN(piece_size);
  NMT_SPM_FN(special_ids);
  NMT_SPM_FN(id_to_piece);
  NMT_SPM_FN(piece_to_id);
  NMT_SPM_FN(encode);
  NMT_SPM_FN(sample_encode);
  NMT_SPM_FN(decode);
  NMT_SPM_FN(train);
#undef NMT_SPM_FN
};

template <typename Fn>
void bind(void* handle, Fn*& fn, const char* symbol, std::string& missing) {
  fn = reinterpret_cast<Fn*>(dlsym(handle, symbol));
  if (!fn) missing += fmt::format(" {}", symbol);
}

using DlopenFn = void* (*)(const char*, int);

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// AddressSanitizer's (and ThreadSanitizer's: the interceptor is common to both) dlopen
// interceptor refuses RTLD_DEEPBIND, because a deep-bound library
// resolves operator new/delete and malloc/free in its own dependencies first and so may bypass
// the sanitizer's allocator. Here that is harmless: SentencePiece's dependencies are the
// process's own libstdc++ and libc, whose operator new calls the (intercepted) malloc. The one
// visible effect is that a block SentencePiece allocates with new is recorded as malloc'ed, so
// the alloc/dealloc-kind check is switched off below. glibc's own dlopen, looked up in libc,
// passes the flag to the loader without the interceptor.
DlopenFn loader_dlopen() {
  static DlopenFn fn = [] {
    void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    auto real = libc ? reinterpret_cast<DlopenFn>(dlsym(libc, "dlopen")) : nullptr;
    return real ? real : &dlopen;
  }();
  return fn;
}
#else
DlopenFn loader_dlopen() { return &dlopen; }
#endif

// Where libnmt_spm.so may be, in order: $NMT_SPM_LIBRARY alone when set; beside the executable
// (the build tree: build/nmt-torch, build/libnmt_spm.so); where `cmake --install` puts it relative
// to the executable (bin/ → lib/nmt/); beside the shared object holding this code (the Python
// module); its build-tree path (test binaries in build/tests/).
std::vector<std::string> spm_library_candidates() {
  if (const char* env = std::getenv("NMT_SPM_LIBRARY"); env && *env) return {env};
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back((exe.parent_path() / NMT_SPM_FILE_NAME).string());
    out.push_back(
        (exe.parent_path() / NMT_SPM_INSTALL_DIR_FROM_BINDIR / NMT_SPM_FILE_NAME).lexically_normal().string());
  }
  // The shared object this code is linked into, when it is one (nmt's Python module): beside it.
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&spm_library_candidates), &self) && self.dli_fname) {
    const fs::path object = fs::weakly_canonical(self.dli_fname, ec);
    if (!ec && object != exe) out.push_back((object.parent_path() / NMT_SPM_FILE_NAME).string());
  }
  out.push_back(NMT_SPM_BUILD_PATH);
  return out;
}

// Loads libnmt_spm.so and binds its functions; the error text otherwise.
std::string load_spm(SpmApi& api) {
  const bool protobuf_loaded = dlopen("libprotobuf.so.32", RTLD_NOW | RTLD_NOLOAD) != nullptr;
  if (protobuf_loaded && dlopen("libsentencepiece.so.0", RTLD_NOW | RTLD_NOLOAD) != nullptr) {
    // Already loaded by the program itself, so it was bound to the system protobuf at start-up.
    return "libsentencepiece is linked into this program next to libprotobuf, which breaks it; link "
           "nothing against SentencePiece directly (nmt/text/subword.cc loads it in isolation)";
  }
  const std::vector<std::string> candidates = spm_library_candidates();
  const auto found = std::find_if(candidates.begin(), candidates.end(), [](const std::string& path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec);
  });
  if (found == candidates.end())
    return fmt::format("cannot use SentencePiece: {} not found (looked for {}); rebuild nmt, or set NMT_SPM_LIBRARY",
                       NMT_SPM_FILE_NAME, fmt::join(candidates, ", "));
  const std::string& path = *found;
  void* handle = loader_dlopen()(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!handle) {
    const char* why = dlerror();
    return fmt::format("cannot use SentencePiece: cannot load {}: {}", path, why ? why : "unknown error");
  }
  std::string missing;
#define NMT_SPM_BIND(name) bind(handle, api.name, "nmt_spm_" #name, missing)
  NMT_SPM_BIND(abi_version);
  NMT_SPM_BIND(free);
  NMT_SPM_BIND(load);
  NMT_SPM_BIND(processor_free);
  NMT_SPM_BIND(piece_size);
  NMT_SPM_BIND(special_ids);
  NMT_SPM_BIND(id_to_piece);
  NMT_SPM_BIND(piece_to_id);
  NMT_SPM_BIND(encode);
  NMT_SPM_BIND(sample_encode);
  NMT_SPM_BIND(decode);
  NMT_SPM_BIND(train);
#undef NMT_SPM_BIND
  if (!missing.empty()) return fmt::format("cannot use SentencePiece: {} lacks{} (a stale build?)", path, missing);
  if (api.abi_version() != NMT_SPM_ABI_VERSION)
    return fmt::format("cannot use SentencePiece: {} has ABI version {}, this nmt needs {} (a stale build?)", path,
                       api.abi_version(), NMT_SPM_ABI_VERSION);
  api.handle = handle;
  return "";
}

const SpmApi& spm() {
  static SpmApi api;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] { error = load_spm(api); });
  if (!api.handle) throw RuntimeError(error);
  return api;
}

// A buffer or message that libnmt_spm allocated, released by it.
template <typename T>
struct SpmBuffer {
  T* data = nullptr;
  SpmBuffer() = default;
  ~SpmBuffer() {
    if (data) spm().free(data);
  }
  SpmBuffer(const SpmBuffer&) = delete;
  SpmBuffer& operator=(const SpmBuffer&) = delete;
};

// Runs a libnmt_spm call taking a trailing `char** error`; returns "" when it succeeded, else the message.
template <typename Call>
std::string error_of(Call call) {
  SpmBuffer<char> error;
  if (call(&error.data) == 0) return "";
  return error.data ? error.data : "unknown SentencePiece error";
}

struct ProcessorDeleter {
  void operator()(nmt_spm_processor* p) const { spm().processor_free(p); }
};

}  // namespace

struct SubwordModel::Impl {
  std::unique_ptr<nmt_spm_processor, ProcessorDeleter> processor;
  std::string proto;  // the serialized model, as loaded
  int size = 0;
  const nmt_spm_processor* sp() const { return processor.get(); }
};

namespace {

void validate(const SubwordOptions& o) {
  if (o.model_type != "unigram" && o.model_type != "bpe")
    throw UsageError(fmt::format("subword model type '{}' is not supported (use unigram or bpe)", o.model_type));
  if (o.vocab_size <= 4)
    throw UsageError(fmt::format("subword vocab size {} is too small (must exceed the 4 special pieces)",
                                 o.vocab_size));
  if (!(o.character_coverage > 0.0 && o.character_coverage <= 1.0))
    throw UsageError(fmt::format("character coverage {} must be in (0, 1]", o.character_coverage));
  if (o.num_threads < 1) throw UsageError(fmt::format("subword training threads {} must be >= 1", o.num_threads));
}

// The sentences the trainer sees: non-empty ones, capped at input_sentence_size by a seeded
// sample we draw ourselves (SentencePiece's own sampler is seeded per process and uses
// std::uniform_int_distribution). Kept in input order.
std::vector<size_t> choose_sentences(const std::vector<std::string>& sentences, const SubwordOptions& o) {
  std::vector<size_t> order;
  order.reserve(sentences.size());
  for (size_t i = 0; i < sentences.size(); ++i)
    if (!sentences[i].empty()) order.push_back(i);
  if (o.input_sentence_size == 0 || order.size() <= o.input_sentence_size) return order;
  if (o.shuffle) {
    SplitMix64 rng(mix_seed(o.seed, 0x5350'4D00ULL));
    shuffle_in_place(order, rng);
    order.resize(o.input_sentence_size);
    std::sort(order.begin(), order.end());
  } else {
    order.resize(o.input_sentence_size);
  }
  return order;
}

}  // namespace

std::string SubwordModel::train_serialized(const std::vector<std::string>& sentences, const SubwordOptions& o) {
  validate(o);
  const std::vector<size_t> order = choose_sentences(sentences, o);
  if (order.empty()) throw RuntimeError("cannot train a subword model: no non-empty training sentences");
  const SpmApi& api = spm();

  // The sentences reach the trainer through an iterator inside libnmt_spm, so the model records
  // no input file (a temporary file's random name would make identical models differ).
  std::vector<std::string> lines;
  lines.reserve(order.size());
  for (size_t i : order) {
    std::string line = sentences[i];
    std::replace(line.begin(), line.end(), '\n', ' ');  // one sentence must stay one line
    std::replace(line.begin(), line.end(), '\r', ' ');
    lines.push_back(std::move(line));
  }
  std::vector<const char*> texts;
  std::vector<size_t> sizes;
  for (const std::string& line : lines) {
    texts.push_back(line.data());
    sizes.push_back(line.size());
  }

  const std::vector<std::pair<std::string, std::string>> args = {
      {"input_format", "text"},
      {"model_prefix", ""},  // the model comes back as bytes; nothing is written by SentencePiece
      {"model_type", o.model_type},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"character_coverage", fmt::format("{}", o.character_coverage)},
      {"normalization_rule_name", o.normalization},
      {"input_sentence_size", "0"},  // sampling is done above
      {"shuffle_input_sentence", "false"},
      {"num_threads", std::to_string(o.num_threads)},
      {"hard_vocab_limit", o.hard_vocab_limit ? "true" : "false"},
      {"byte_fallback", o.byte_fallback ? "true" : "false"},
      {"pad_id", std::to_string(kPadId)},
      {"unk_id", std::to_string(kUnkId)},
      {"bos_id", std::to_string(kBosId)},
      {"eos_id", std::to_string(kEosId)},
      {"pad_piece", "<pad>"},
      {"unk_piece", "<unk>"},
      {"bos_piece", "<s>"},
      {"eos_piece", "</s>"},
      // 0 = INFO (progress), 1 = WARNING. The level is process-wide inside SentencePiece.
      {"minloglevel", o.verbose ? "0" : "1"},
  };
  std::vector<const char*> keys, values;
  for (const auto& [key, value] : args) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  // Any residual randomness inside SentencePiece draws from this process-wide seed.
  const auto seed = static_cast<uint32_t>(o.seed);
  SpmBuffer<char> model;
  size_t model_size = 0;
  const std::string error = error_of([&](char** e) {
    return api.train(keys.data(), values.data(), keys.size(), texts.data(), sizes.data(), texts.size(), seed,
                     &model.data, &model_size, e);
  });
  if (!error.empty())
    throw RuntimeError(fmt::format("subword training failed ({} model, vocab size {}, {} sentences): {}",
                                   o.model_type, o.vocab_size, order.size(), error));
  return std::string(model.data, model_size);
}

void SubwordModel::train(const std::vector<std::string>& sentences, const SubwordOptions& options,
                         const std::string& model_path) {
  write_file_atomic(model_path, train_serialized(sentences, options));
}

SubwordModel SubwordModel::load_from_serialized(const std::string& bytes, const std::string& name) {
  const SpmApi& api = spm();
  auto impl = std::make_shared<Impl>();
  nmt_spm_processor* processor = nullptr;
  const std::string error = error_of([&](char** e) { return api.load(bytes.data(), bytes.size(), &processor, e); });
  impl->processor.reset(processor);
  if (error.find("ParseFromArray") != std::string::npos)
    throw RuntimeError(fmt::format("{}: not a SentencePiece model (cannot parse the model proto)", name));
  if (!error.empty()) throw RuntimeError(fmt::format("{}: not a valid SentencePiece model: {}", name, error));
  impl->proto = bytes;
  impl->size = api.piece_size(impl->sp());
  int pad = -1, unk = -1, bos = -1, eos = -1;
  api.special_ids(impl->sp(), &pad, &unk, &bos, &eos);
  if (impl->size <= kEosId || pad != kPadId || unk != kUnkId || bos != kBosId || eos != kEosId)
    throw RuntimeError(fmt::format(
        "{}: subword model has special ids pad={} unk={} bos={} eos={}, expected pad=0 unk=1 bos=2 eos=3", name, pad,
        unk, bos, eos));
  SubwordModel model;
  model.impl_ = std::move(impl);
  return model;
}

bool SubwordModel::available(std::string* why) {
  try {
    spm();
    return true;
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
}

SubwordModel SubwordModel::load(const std::string& path) {
  return load_from_serialized(read_small_file(path, kMaxSubwordBytes), path);
}

SubwordModel::SubwordModel() = default;
SubwordModel::~SubwordModel() = default;
SubwordModel::SubwordModel(const SubwordModel&) = default;
SubwordModel& SubwordModel::operator=(const SubwordModel&) = default;
SubwordModel::SubwordModel(SubwordModel&&) noexcept = default;
SubwordModel& SubwordModel::operator=(SubwordModel&&) noexcept = default;

const SubwordModel::Impl& SubwordModel::impl() const {
  if (!impl_) throw RuntimeError("subword model used before it was loaded");
  return *impl_;
}

namespace {

TokenIds ids_of(const SpmBuffer<int>& ids, size_t count) {
  return TokenIds(ids.data, ids.data + count);
}

}  // namespace

TokenIds SubwordModel::encode(const std::string& text) const {
  const Impl& m = impl();
  SpmBuffer<int> ids;
  size_t count = 0;
  const std::string error =
      error_of([&](char** e) { return spm().encode(m.sp(), text.data(), text.size(), &ids.data, &count, e); });
  if (!error.empty()) throw RuntimeError(fmt::format("subword encoding failed: {}", error));
  return ids_of(ids, count);
}

// libnmt_spm re-seeds SentencePiece's per-thread generator for each call, so a sample depends on
// (text, nbest, alpha, seed) alone, in any order and on any thread, without a lock.
TokenIds SubwordModel::sample_encode(const std::string& text, int nbest, float alpha, uint64_t seed) const {
  if (nbest != -1 && (nbest < 1 || nbest > kMaxSampleNbest))
    throw UsageError(fmt::format("subword sampling nbest {} is invalid (use -1 for the whole lattice, or 1..{})", nbest,
                                 kMaxSampleNbest));
  if (!std::isfinite(alpha) || alpha < 0)
    throw UsageError(fmt::format("subword sampling alpha {} must be a finite number >= 0", alpha));
  const Impl& m = impl();
  // mt19937 takes 32 bits: fold all 64 so seeds differing only in the high half differ too.
  const auto seed32 = static_cast<uint32_t>(mix_seed(seed, 0x5350'4D53ULL) >> 32);
  SpmBuffer<int> ids;
  size_t count = 0;
  const std::string error = error_of([&](char** e) {
    return spm().sample_encode(m.sp(), text.data(), text.size(), nbest, alpha, seed32, &ids.data, &count, e);
  });
  if (!error.empty()) throw RuntimeError(fmt::format("subword sampling failed: {}", error));
  return ids_of(ids, count);
}

std::string SubwordModel::decode(const TokenIds& ids) const {
  const Impl& m = impl();
  TokenIds kept;
  kept.reserve(ids.size());
  for (TokenId id : ids) {
    if (id < 0 || id >= m.size) throw RuntimeError(fmt::format("subword id {} out of range [0, {})", id, m.size));
    if (id != kPadId && id != kBosId && id != kEosId) kept.push_back(id);
  }
  SpmBuffer<char> text;
  size_t size = 0;
  const std::string error =
      error_of([&](char** e) { return spm().decode(m.sp(), kept.data(), kept.size(), &text.data, &size, e); });
  if (!error.empty()) throw RuntimeError(fmt::format("subword decoding failed: {}", error));
  return std::string(text.data, size);
}

std::vector<std::string> SubwordModel::pieces(const TokenIds& ids) const {
  const Impl& m = impl();
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (TokenId id : ids) {
    if (id < 0 || id >= m.size) throw RuntimeError(fmt::format("subword id {} out of range [0, {})", id, m.size));
    const char* piece = nullptr;
    size_t size = 0;
    spm().id_to_piece(m.sp(), id, &piece, &size);
    out.emplace_back(piece, size);
  }
  return out;
}

TokenId SubwordModel::piece_to_id(const std::string& piece) const {
  const Impl& m = impl();
  return spm().piece_to_id(m.sp(), piece.data(), piece.size());
}

int SubwordModel::vocab_size() const { return impl().size; }

std::string SubwordModel::serialized() const { return impl().proto; }

}  // namespace nmt::text
