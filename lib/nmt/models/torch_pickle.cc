#include "nmt/models/torch_pickle.h"

#include <caffe2/serialize/inline_container.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt::models {
namespace {

// A Python value of the subset torch.save writes.
struct Value;
using ValuePtr = std::shared_ptr<Value>;
struct Value {
  enum class Kind { kNone, kBool, kInt, kFloat, kString, kTuple, kList, kDict, kGlobal, kTensor, kMark };
  Kind kind = Kind::kNone;
  int64_t integer = 0;
  double real = 0;
  std::string text;                             // string; global: "module.name"
  std::vector<ValuePtr> items;                  // tuple, list; dict: key, value, key, value...
  torch::Tensor tensor;
};

ValuePtr make(Value::Kind kind) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  return v;
}
ValuePtr make_int(int64_t i) {
  auto v = make(Value::Kind::kInt);
  v->integer = i;
  return v;
}
ValuePtr make_string(std::string s, Value::Kind kind = Value::Kind::kString) {
  auto v = make(kind);
  v->text = std::move(s);
  return v;
}

torch::ScalarType storage_dtype(const std::string& global, const std::string& path) {
  static const std::unordered_map<std::string, torch::ScalarType> types = {
      {"torch.FloatStorage", torch::kFloat}, {"torch.HalfStorage", torch::kHalf},
      {"torch.BFloat16Storage", torch::kBFloat16}, {"torch.DoubleStorage", torch::kDouble},
      {"torch.LongStorage", torch::kLong}, {"torch.IntStorage", torch::kInt},
      {"torch.BoolStorage", torch::kBool}, {"torch.ByteStorage", torch::kByte}};
  auto it = types.find(global);
  if (it == types.end()) throw RuntimeError(fmt::format("{}: a storage of type {}, which nmt does not read", path, global));
  return it->second;
}

class Unpickler {
 public:
  Unpickler(const std::string& pickle, caffe2::serialize::PyTorchStreamReader& archive, const std::string& path)
      : p_(pickle.data()), end_(p_ + pickle.size()), archive_(archive), path_(path) {}

  ValuePtr run() {
    for (;;) {
      const auto op = static_cast<uint8_t>(byte());
      switch (op) {
        case 0x80: byte(); break;                                   // PROTO
        case 0x95: bytes(8); break;                                 // FRAME
        case '.': return pop();                                     // STOP
        case '(': stack_.push_back(make(Value::Kind::kMark)); break;  // MARK
        case 'N': stack_.push_back(make(Value::Kind::kNone)); break;
        case 0x88: case 0x89: {                                     // NEWTRUE, NEWFALSE
          auto v = make(Value::Kind::kBool);
          v->integer = op == 0x88;
          stack_.push_back(v);
          break;
        }
        case 'J': stack_.push_back(make_int(static_cast<int32_t>(little(4)))); break;  // BININT
        case 'K': stack_.push_back(make_int(static_cast<int64_t>(little(1)))); break;  // BININT1
        case 'M': stack_.push_back(make_int(static_cast<int64_t>(little(2)))); break;  // BININT2
        case 0x8a: {                                                // LONG1
          const auto n = static_cast<size_t>(little(1));
          if (n > 8) fail("an integer longer than 8 bytes");
          uint64_t u = n ? little(n) : 0;
          if (n && n < 8 && (u >> (8 * n - 1)) & 1) u |= ~uint64_t{0} << (8 * n);  // sign-extend
          stack_.push_back(make_int(static_cast<int64_t>(u)));
          break;
        }
        case 'G': {                                                 // BINFLOAT (big-endian)
          uint64_t u = 0;
          for (int i = 0; i < 8; ++i) u = (u << 8) | static_cast<uint8_t>(byte());
          auto v = make(Value::Kind::kFloat);
          std::memcpy(&v->real, &u, 8);
          stack_.push_back(v);
          break;
        }
        case 'X': stack_.push_back(make_string(bytes(little(4)))); break;     // BINUNICODE
        case 0x8c: stack_.push_back(make_string(bytes(little(1)))); break;    // SHORT_BINUNICODE
        case 'T': stack_.push_back(make_string(bytes(little(4)))); break;     // BINSTRING
        case 'U': stack_.push_back(make_string(bytes(little(1)))); break;     // SHORT_BINSTRING
        case 'c': {                                                 // GLOBAL "module\nname\n"
          std::string module = line(), name = line();
          stack_.push_back(make_string(module + "." + name, Value::Kind::kGlobal));
          break;
        }
        case 0x93: {                                                // STACK_GLOBAL
          auto name = pop(), module = pop();
          stack_.push_back(make_string(module->text + "." + name->text, Value::Kind::kGlobal));
          break;
        }
        case ')': stack_.push_back(make(Value::Kind::kTuple)); break;  // EMPTY_TUPLE
        case ']': stack_.push_back(make(Value::Kind::kList)); break;   // EMPTY_LIST
        case '}': stack_.push_back(make(Value::Kind::kDict)); break;   // EMPTY_DICT
        case 't': {                                                 // TUPLE
          auto v = make(Value::Kind::kTuple);
          v->items = pop_to_mark();
          stack_.push_back(v);
          break;
        }
        case 0x85: case 0x86: case 0x87: {                          // TUPLE1-3
          auto v = make(Value::Kind::kTuple);
          v->items.resize(static_cast<size_t>(op - 0x84));
          for (size_t i = v->items.size(); i-- > 0;) v->items[i] = pop();
          stack_.push_back(v);
          break;
        }
        case 'a': {                                                 // APPEND
          auto item = pop();
          top(Value::Kind::kList)->items.push_back(item);
          break;
        }
        case 'e': {                                                 // APPENDS
          auto items = pop_to_mark();
          auto& list = top(Value::Kind::kList)->items;
          list.insert(list.end(), items.begin(), items.end());
          break;
        }
        case 's': {                                                 // SETITEM
          auto value = pop(), key = pop();
          auto& dict = top(Value::Kind::kDict)->items;
          dict.push_back(key);
          dict.push_back(value);
          break;
        }
        case 'u': {                                                 // SETITEMS
          auto items = pop_to_mark();
          auto& dict = top(Value::Kind::kDict)->items;
          dict.insert(dict.end(), items.begin(), items.end());
          break;
        }
        case 'q': memo_[little(1)] = back(); break;                 // BINPUT
        case 'r': memo_[little(4)] = back(); break;                 // LONG_BINPUT
        case 0x94: memo_[memo_.size()] = back(); break;             // MEMOIZE
        case 'h': stack_.push_back(memo(little(1))); break;         // BINGET
        case 'j': stack_.push_back(memo(little(4))); break;         // LONG_BINGET
        case 'Q': stack_.push_back(storage(pop())); break;          // BINPERSID
        case 'R': {                                                 // REDUCE
          auto args = pop(), callable = pop();
          stack_.push_back(reduce(callable, args));
          break;
        }
        case 'b': pop(); break;  // BUILD: an OrderedDict's `_metadata`, a tensor's state: not needed
        default: fail(fmt::format("pickle opcode 0x{:02x}, which torch.save does not write for a dict of tensors", op));
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw RuntimeError(fmt::format("{}: not a torch.save file of tensors ({})", path_, what));
  }
  char byte() {
    if (p_ == end_) fail("the pickle ends early");
    return *p_++;
  }
  std::string bytes(uint64_t n) {
    if (static_cast<uint64_t>(end_ - p_) < n) fail("the pickle ends early");
    std::string s(p_, static_cast<size_t>(n));
    p_ += n;
    return s;
  }
  uint64_t little(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(byte())) << (8 * i);
    return v;
  }
  std::string line() {
    std::string s;
    for (char c = byte(); c != '\n'; c = byte()) s += c;
    return s;
  }
  ValuePtr pop() {
    if (stack_.empty()) fail("stack underflow");
    auto v = stack_.back();
    stack_.pop_back();
    return v;
  }
  ValuePtr back() {
    if (stack_.empty()) fail("stack underflow");
    return stack_.back();
  }
  ValuePtr top(Value::Kind kind) {
    auto v = back();
    if (v->kind != kind) fail("an item added to something that is not a list or dict");
    return v;
  }
  ValuePtr memo(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) fail("a memo entry never stored");
    return it->second;
  }
  std::vector<ValuePtr> pop_to_mark() {
    std::vector<ValuePtr> items;
    for (;;) {
      auto v = pop();
      if (v->kind == Value::Kind::kMark) break;
      items.push_back(v);
    }
    return {items.rbegin(), items.rend()};
  }

  // ('storage', torch.FloatStorage, key, location, numel) → the record data/KEY as a 1-D tensor.
  ValuePtr storage(const ValuePtr& id) {
    if (id->kind != Value::Kind::kTuple || id->items.size() < 5 || id->items[0]->text != "storage")
      fail("a persistent id that is not a storage");
    const std::string key = id->items[2]->text;
    auto it = storages_.find(key);
    if (it != storages_.end()) return it->second;
    const torch::ScalarType dtype = storage_dtype(id->items[1]->text, path_);
    const int64_t numel = id->items[4]->integer;
    auto [data, size] = archive_.getRecord("data/" + key);
    if (numel < 0 || size != static_cast<size_t>(numel) * torch::elementSize(dtype))
      fail(fmt::format("storage {} holds {} bytes, not {} values", key, size, numel));
    auto v = make(Value::Kind::kTensor);
    v->tensor = torch::empty({numel}, torch::TensorOptions().dtype(dtype));
    if (size) std::memcpy(v->tensor.data_ptr(), data.get(), size);
    storages_[key] = v;
    return v;
  }

  static std::vector<int64_t> ints(const ValuePtr& tuple) {
    std::vector<int64_t> out;
    for (const auto& i : tuple->items) out.push_back(i->integer);
    return out;
  }

  ValuePtr reduce(const ValuePtr& callable, const ValuePtr& args) {
    if (callable->kind != Value::Kind::kGlobal || args->kind != Value::Kind::kTuple) fail("a call of something unknown");
    const std::string& f = callable->text;
    if (f == "collections.OrderedDict") return make(Value::Kind::kDict);
    if (f == "torch._utils._rebuild_tensor_v2" || f == "torch._utils._rebuild_tensor") {
      if (args->items.size() < 4 || args->items[0]->kind != Value::Kind::kTensor) fail("a tensor without its storage");
      const torch::Tensor& storage = args->items[0]->tensor;
      const int64_t offset = args->items[1]->integer;
      const auto sizes = ints(args->items[2]), strides = ints(args->items[3]);
      int64_t last = offset;  // the furthest element the view reaches
      bool negative = false;
      for (size_t i = 0; i < sizes.size() && i < strides.size(); ++i) {
        negative |= sizes[i] < 0 || strides[i] < 0;
        if (sizes[i] > 0) last += (sizes[i] - 1) * strides[i];
      }
      if (negative || offset < 0 || (storage.numel() > 0 && last >= storage.numel()) || strides.size() != sizes.size())
        fail("a tensor outside its storage");
      auto v = make(Value::Kind::kTensor);
      v->tensor = storage.as_strided(sizes, strides, offset);
      return v;
    }
    if (f == "torch._utils._rebuild_parameter" && !args->items.empty()) return args->items[0];
    fail(fmt::format("a call of {}", f));
  }

  const char* p_;
  const char* end_;
  caffe2::serialize::PyTorchStreamReader& archive_;
  const std::string& path_;
  std::vector<ValuePtr> stack_;
  std::unordered_map<uint64_t, ValuePtr> memo_;
  std::unordered_map<std::string, ValuePtr> storages_;
};

}  // namespace

std::map<std::string, torch::Tensor> read_torch_save_file(const std::string& path) {
  {
    std::ifstream in(path, std::ios::binary);
    char magic[2] = {};
    if (!in.read(magic, 2)) throw RuntimeError(fmt::format("{}: cannot read (missing or empty?)", path));
    if (magic[0] != 'P' || magic[1] != 'K')
      throw RuntimeError(fmt::format("{}: not a zip archive: torch.save's old format (PyTorch < 1.6), which nmt does not "
                                     "read; save it again with a newer PyTorch or as safetensors",
                                     path));
  }
  std::map<std::string, torch::Tensor> out;
  try {
    caffe2::serialize::PyTorchStreamReader archive(path);
    auto [data, size] = archive.getRecord("data.pkl");
    const std::string pickle(static_cast<const char*>(data.get()), size);
    Unpickler unpickler(pickle, archive, path);
    const ValuePtr top = unpickler.run();
    if (top->kind != Value::Kind::kDict) throw RuntimeError(fmt::format("{}: not a state dict (a dict of tensors)", path));
    for (size_t i = 0; i + 1 < top->items.size(); i += 2)
      if (top->items[i]->kind == Value::Kind::kString && top->items[i + 1]->kind == Value::Kind::kTensor)
        out[top->items[i]->text] = top->items[i + 1]->tensor.to(torch::kFloat).contiguous().clone();
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    throw RuntimeError(fmt::format("{}: a damaged or truncated archive ({})", path, what.substr(0, what.find('\n'))));
  }
  return out;
}

}  // namespace nmt::models

namespace nmt::models {

HostTensors read_torch_save_weights(const std::string& path) {
  HostTensors out;
  for (auto& [name, t] : read_torch_save_file(path)) {
    const torch::Tensor c = t.to(torch::kFloat).contiguous();
    out.emplace(name, HostTensor{c.sizes().vec(), std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel())});
  }
  return out;
}

}  // namespace nmt::models
