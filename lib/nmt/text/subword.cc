#include "nmt/text/subword.h"

// SentencePiece is loaded with dlopen(RTLD_LOCAL | RTLD_DEEPBIND) and called through dlsym'd
// pointers, never linked directly. Why: Debian's libsentencepiece bundles and exports its own
// protobuf-lite 3.14, while libtorch needs the system libprotobuf 3.21. In one process only one
// copy of each protobuf symbol wins: with libsentencepiece first libtorch segfaults in static
// initialisation, with libprotobuf first (how this project links executables) SentencePiece
// aborts ("compiled against 3.14.0") or fails protobuf CHECKs. DEEPBIND makes SentencePiece bind
// to its own protobuf while keeping its symbols out of the global scope, so both work.
//
// Consequently this file must not reference any SentencePiece symbol directly (no calls through
// the C++ classes, not even virtual ones, which GCC may devirtualise): every entry point below is
// an exported definition of libsentencepiece 0.1.97 called by its mangled name (Itanium ABI: a
// returned util::Status, which has a non-trivial destructor, comes back through a hidden first
// pointer argument). The header is included only for sizeof and the ABI checks.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <new>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>
#include <sentencepiece_processor.h>

#include "nmt/data/rng.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

#if defined(__SANITIZE_ADDRESS__)
// See loader_dlopen(): memory SentencePiece allocates with operator new is seen as malloc'ed.
extern "C" const char* __asan_default_options() { return "alloc_dealloc_mismatch=0"; }
#endif

namespace nmt::text {
namespace {

static_assert(sizeof(sentencepiece::util::Status) == sizeof(void*), "util::Status is one unique_ptr");

// Storage for a util::Status returned by value: a single pointer, null when OK.
struct RawStatus {
  void* rep = nullptr;
};

using KwArgs = std::unordered_map<std::string, std::string>;

struct SpmApi {
  void* handle = nullptr;
  // libsentencepiece_train.so.0
  void (*train)(RawStatus*, const KwArgs*, void* iterator, std::string* proto) = nullptr;
  // libsentencepiece.so.0 (loaded as a dependency of the trainer, in the same local scope)
  void (*set_seed)(unsigned int) = nullptr;
  void (*status_dtor)(RawStatus*) = nullptr;
  void (*status_to_string)(std::string*, const RawStatus*) = nullptr;
  void (*ctor)(void*) = nullptr;
  void (*dtor)(void*) = nullptr;
  void (*load_serialized)(RawStatus*, void*, std::string_view) = nullptr;
  void (*encode)(RawStatus*, const void*, std::string_view, std::vector<int>*) = nullptr;
  void (*decode)(RawStatus*, const void*, const std::vector<int>*, std::string*) = nullptr;
  int (*piece_size)(const void*) = nullptr;
  const std::string& (*id_to_piece)(const void*, int) = nullptr;
  int (*piece_to_id)(const void*, std::string_view) = nullptr;
  int (*pad_id)(const void*) = nullptr;
  int (*unk_id)(const void*) = nullptr;
  int (*bos_id)(const void*) = nullptr;
  int (*eos_id)(const void*) = nullptr;
};

constexpr const char* kTrainLibrary = "libsentencepiece_train.so.0";

template <typename Fn>
void bind(void* handle, Fn*& fn, const char* symbol, std::string& missing) {
  fn = reinterpret_cast<Fn*>(dlsym(handle, symbol));
  if (!fn) missing += fmt::format(" {}", symbol);
}

using DlopenFn = void* (*)(const char*, int);

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer's dlopen interceptor refuses RTLD_DEEPBIND, because a deep-bound library
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

const SpmApi& spm() {
  static SpmApi api;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    const bool protobuf_loaded = dlopen("libprotobuf.so.32", RTLD_NOW | RTLD_NOLOAD) != nullptr;
    if (protobuf_loaded && dlopen("libsentencepiece.so.0", RTLD_NOW | RTLD_NOLOAD) != nullptr) {
      // Already loaded by the program itself, so it was bound to the system protobuf at start-up.
      error =
          "libsentencepiece is linked into this program next to libprotobuf, which breaks it; link "
          "nothing against SentencePiece directly (nmt/text/subword.cc loads it in isolation)";
      return;
    }
    const int flags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
    api.handle = loader_dlopen()(kTrainLibrary, flags);
    if (!api.handle) {
      const char* why = dlerror();
      error = fmt::format("cannot load SentencePiece ({}): {}", kTrainLibrary, why ? why : "unknown error");
      return;
    }
    std::string missing;
    void* h = api.handle;
    bind(h, api.train,
         "_ZN13sentencepiece20SentencePieceTrainer5TrainERKSt13unordered_mapINSt7__cxx1112basic_stringIcSt11char_"
         "traitsIcESaIcEEES7_St4hashIS7_ESt8equal_toIS7_ESaISt4pairIKS7_S7_EEEPNS_16SentenceIteratorEPS7_",
         missing);
    bind(h, api.set_seed, "_ZN13sentencepiece22SetRandomGeneratorSeedEj", missing);
    bind(h, api.status_dtor, "_ZN13sentencepiece4util6StatusD1Ev", missing);
    bind(h, api.status_to_string, "_ZNK13sentencepiece4util6Status8ToStringB5cxx11Ev", missing);
    bind(h, api.ctor, "_ZN13sentencepiece22SentencePieceProcessorC1Ev", missing);
    bind(h, api.dtor, "_ZN13sentencepiece22SentencePieceProcessorD1Ev", missing);
    bind(h, api.load_serialized,
         "_ZN13sentencepiece22SentencePieceProcessor23LoadFromSerializedProtoESt17basic_string_viewIcSt11char_"
         "traitsIcEE",
         missing);
    bind(h, api.encode,
         "_ZNK13sentencepiece22SentencePieceProcessor6EncodeESt17basic_string_viewIcSt11char_traitsIcEEPSt6vectorIi"
         "SaIiEE",
         missing);
    bind(h, api.decode,
         "_ZNK13sentencepiece22SentencePieceProcessor6DecodeERKSt6vectorIiSaIiEEPNSt7__cxx1112basic_stringIcSt11char_"
         "traitsIcESaIcEEE",
         missing);
    bind(h, api.piece_size, "_ZNK13sentencepiece22SentencePieceProcessor12GetPieceSizeEv", missing);
    bind(h, api.id_to_piece, "_ZNK13sentencepiece22SentencePieceProcessor9IdToPieceB5cxx11Ei", missing);
    bind(h, api.piece_to_id,
         "_ZNK13sentencepiece22SentencePieceProcessor9PieceToIdESt17basic_string_viewIcSt11char_traitsIcEE", missing);
    bind(h, api.pad_id, "_ZNK13sentencepiece22SentencePieceProcessor6pad_idEv", missing);
    bind(h, api.unk_id, "_ZNK13sentencepiece22SentencePieceProcessor6unk_idEv", missing);
    bind(h, api.bos_id, "_ZNK13sentencepiece22SentencePieceProcessor6bos_idEv", missing);
    bind(h, api.eos_id, "_ZNK13sentencepiece22SentencePieceProcessor6eos_idEv", missing);
    if (!missing.empty()) {
      error = fmt::format("{} lacks symbols this build expects (SentencePiece 0.1.97 ABI):{}", kTrainLibrary, missing);
      api.handle = nullptr;
    }
  });
  if (!api.handle) throw RuntimeError(error);
  return api;
}

// Runs a Status-returning call; returns "" when OK, else the status text.
template <typename Call>
std::string status_of(Call call) {
  const SpmApi& api = spm();
  RawStatus status;
  call(&status);
  std::string text;
  if (status.rep != nullptr) api.status_to_string(&text, &status);
  api.status_dtor(&status);
  return text;
}

// A SentencePieceProcessor constructed in raw storage through the library's own constructor.
struct Processor {
  void* self = nullptr;
  Processor() {
    const SpmApi& api = spm();
    self = ::operator new(sizeof(sentencepiece::SentencePieceProcessor));
    api.ctor(self);
  }
  ~Processor() {
    spm().dtor(self);
    ::operator delete(self);
  }
  Processor(const Processor&) = delete;
  Processor& operator=(const Processor&) = delete;
};

}  // namespace

struct SubwordModel::Impl {
  Processor processor;
  std::string proto;  // the serialized model, kept so serialized() needs no protobuf call
  int size = 0;
  const void* sp() const { return processor.self; }
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
    data::SplitMix64 rng(data::mix_seed(o.seed, 0x5350'4D00ULL));
    data::shuffle_in_place(order, rng);
    order.resize(o.input_sentence_size);
    std::sort(order.begin(), order.end());
  } else {
    order.resize(o.input_sentence_size);
  }
  return order;
}

// The trainer reads a temporary one-sentence-per-line file: feeding it through a
// SentenceIterator subclass would need SentencePiece's util::Status constructor in this binary.
class TempFile {
 public:
  TempFile() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "nmt-spm-XXXXXX").string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) throw RuntimeError(fmt::format("{}: cannot create a temporary file", tmpl));
    ::close(fd);
    path_ = tmpl;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Protobuf wire format, just enough to drop TrainerSpec.input (ModelProto field 2, TrainerSpec
// field 1) from a trained model: it holds the temporary file's random name, which would make
// otherwise identical models differ byte for byte. Returns the input unchanged if it cannot parse.
bool read_varint(const std::string& s, size_t& pos, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && pos < s.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(s[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

void write_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Copies `msg` without the length-delimited field `drop`; for field `recurse` (if not 0) applies
// `inner` to its payload. nullopt when the bytes are not a well-formed message.
template <typename Inner>
std::optional<std::string> rewrite_message(const std::string& msg, uint64_t drop, uint64_t recurse, Inner inner) {
  std::string out;
  out.reserve(msg.size());
  size_t pos = 0;
  while (pos < msg.size()) {
    const size_t start = pos;
    uint64_t tag = 0, n = 0;
    if (!read_varint(msg, pos, tag)) return std::nullopt;
    const uint64_t field = tag >> 3;
    switch (tag & 7) {
      case 0:
        if (!read_varint(msg, pos, n)) return std::nullopt;
        break;
      case 1: pos += 8; break;
      case 5: pos += 4; break;
      case 2: {
        if (!read_varint(msg, pos, n) || n > msg.size() - pos) return std::nullopt;
        if (field == drop) {
          pos += n;
          continue;
        }
        if (field == recurse) {
          const std::optional<std::string> payload = inner(msg.substr(pos, n));
          if (!payload) return std::nullopt;
          write_varint(out, tag);
          write_varint(out, payload->size());
          out += *payload;
          pos += n;
          continue;
        }
        pos += n;
        break;
      }
      default: return std::nullopt;  // groups: not used by ModelProto
    }
    if (pos > msg.size()) return std::nullopt;
    out.append(msg, start, pos - start);
  }
  return out;
}

std::string strip_training_input(const std::string& model_proto) {
  constexpr uint64_t kModelTrainerSpec = 2, kTrainerSpecInput = 1;
  auto drop_input = [&](const std::string& spec) {
    return rewrite_message(spec, kTrainerSpecInput, 0, [](const std::string&) { return std::optional<std::string>(); });
  };
  return rewrite_message(model_proto, 0, kModelTrainerSpec, drop_input).value_or(model_proto);
}

}  // namespace

std::string SubwordModel::train_serialized(const std::vector<std::string>& sentences, const SubwordOptions& o) {
  validate(o);
  const std::vector<size_t> order = choose_sentences(sentences, o);
  if (order.empty()) throw RuntimeError("cannot train a subword model: no non-empty training sentences");
  const SpmApi& api = spm();

  TempFile input;
  {
    std::ofstream out(input.path(), std::ios::binary | std::ios::trunc);
    for (size_t i : order) {
      std::string line = sentences[i];
      std::replace(line.begin(), line.end(), '\n', ' ');  // one sentence must stay one line
      std::replace(line.begin(), line.end(), '\r', ' ');
      out << line << '\n';
    }
    out.flush();
    if (!out) throw RuntimeError(fmt::format("{}: cannot write subword training text (disk full?)", input.path()));
  }

  const KwArgs args = {
      {"input", input.path()},
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
  // Any residual randomness inside SentencePiece draws from this process-wide seed.
  api.set_seed(static_cast<unsigned int>(o.seed));
  std::string proto;
  const std::string error = status_of([&](RawStatus* st) { api.train(st, &args, nullptr, &proto); });
  if (!error.empty())
    throw RuntimeError(fmt::format("subword training failed ({} model, vocab size {}, {} sentences): {}",
                                   o.model_type, o.vocab_size, order.size(), error));
  return strip_training_input(proto);
}

void SubwordModel::train(const std::vector<std::string>& sentences, const SubwordOptions& options,
                         const std::string& model_path) {
  write_file_atomic(model_path, train_serialized(sentences, options));
}

SubwordModel SubwordModel::load_from_serialized(const std::string& bytes, const std::string& name) {
  const SpmApi& api = spm();
  auto impl = std::make_shared<Impl>();
  const void* sp = impl->sp();
  const std::string error =
      status_of([&](RawStatus* st) { api.load_serialized(st, impl->processor.self, std::string_view(bytes)); });
  if (error.find("ParseFromArray") != std::string::npos)
    throw RuntimeError(fmt::format("{}: not a SentencePiece model (cannot parse the model proto)", name));
  if (!error.empty()) throw RuntimeError(fmt::format("{}: not a valid SentencePiece model: {}", name, error));
  impl->proto = bytes;
  impl->size = api.piece_size(sp);
  const int pad = api.pad_id(sp), unk = api.unk_id(sp), bos = api.bos_id(sp), eos = api.eos_id(sp);
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

std::vector<int> SubwordModel::encode(const std::string& text) const {
  const Impl& m = impl();
  std::vector<int> ids;
  const std::string error =
      status_of([&](RawStatus* st) { spm().encode(st, m.sp(), std::string_view(text), &ids); });
  if (!error.empty()) throw RuntimeError(fmt::format("subword encoding failed: {}", error));
  return ids;
}

std::string SubwordModel::decode(const std::vector<int>& ids) const {
  const Impl& m = impl();
  std::vector<int> kept;
  kept.reserve(ids.size());
  for (int id : ids) {
    if (id < 0 || id >= m.size) throw RuntimeError(fmt::format("subword id {} out of range [0, {})", id, m.size));
    if (id != kPadId && id != kBosId && id != kEosId) kept.push_back(id);
  }
  std::string text;
  const std::string error = status_of([&](RawStatus* st) { spm().decode(st, m.sp(), &kept, &text); });
  if (!error.empty()) throw RuntimeError(fmt::format("subword decoding failed: {}", error));
  return text;
}

std::vector<std::string> SubwordModel::pieces(const std::vector<int>& ids) const {
  const Impl& m = impl();
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int id : ids) {
    if (id < 0 || id >= m.size) throw RuntimeError(fmt::format("subword id {} out of range [0, {})", id, m.size));
    out.push_back(spm().id_to_piece(m.sp(), id));
  }
  return out;
}

int SubwordModel::piece_to_id(const std::string& piece) const {
  const Impl& m = impl();
  return spm().piece_to_id(m.sp(), std::string_view(piece));
}

int SubwordModel::vocab_size() const { return impl().size; }

std::string SubwordModel::serialized() const { return impl().proto; }

}  // namespace nmt::text
