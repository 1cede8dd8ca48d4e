#include "nmt/util/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/util/error.h"
#include "nmt/util/hash.h"
#include "nmt/util/io.h"

// The data bytes are read and written in the machine's order; the format's is little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");

namespace nmt::safetensors {

namespace {

using nlohmann::json;

// Hugging Face's reader refuses larger headers: a header size read from a corrupt file must not
// become a 16-exabyte allocation.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::kF32, "F32", 4}, {DType::kF16, "F16", 2}, {DType::kBF16, "BF16", 2}, {DType::kF64, "F64", 8},
    {DType::kI8, "I8", 1},   {DType::kU8, "U8", 1},   {DType::kI32, "I32", 4},   {DType::kI64, "I64", 8}};

const DTypeInfo& info(DType dtype) {
  for (const DTypeInfo& d : kDTypes)
    if (d.dtype == dtype) return d;
  throw std::invalid_argument("safetensors: not a DType");
}

// A name from the file as a message writes it: control characters escaped, so the message stays
// one line, and cut after 200 bytes (a name may be megabytes long).
std::string printable(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 200; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += s[i];
  }
  return s.size() > 200 ? out + "..." : out;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw RuntimeError(fmt::format("{}: {}", path, what));
}
[[noreturn]] void fail_tensor(const std::string& path, const std::string& name, const std::string& what) {
  throw RuntimeError(fmt::format("{}: tensor '{}' {}", path, printable(name), what));
}

// A JSON value as a message names it: numbers by value, anything else by its type.
std::string describe(const json& v) {
  if (v.is_number()) return v.dump();
  return (v.is_array() || v.is_object() ? "an " : "a ") + std::string(v.type_name());
}

// nlohmann keeps the last of two equal keys; the format has one entry per name, and a file that
// names a tensor twice is corrupt or crafted to be read differently by different readers.
json parse_header(const std::string& text, const std::string& path) {
  std::set<std::string> seen;
  std::string duplicate;
  bool has_duplicate = false;
  const json::parser_callback_t note_keys = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && !seen.insert(parsed.get<std::string>()).second &&
        !has_duplicate) {
      duplicate = parsed.get<std::string>();
      has_duplicate = true;
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text, note_keys);
  } catch (const json::parse_error& e) {
    fail(path, fmt::format("not a safetensors file (its header is not JSON: error at byte {})", e.byte));
  } catch (const json::exception&) {  // out_of_range: a number such as 1e400 that no double holds
    fail(path, "not a safetensors file (its header holds a number out of range)");
  }
  if (!header.is_object()) fail(path, fmt::format("not a safetensors file (its header is {}, not a JSON object)", describe(header)));
  if (has_duplicate) fail(path, fmt::format("the header names '{}' twice", printable(duplicate)));
  return header;
}

const json& field(const json& entry, const char* key, const std::string& path, const std::string& name) {
  const auto it = entry.find(key);
  if (it == entry.end()) fail_tensor(path, name, fmt::format("has no '{}'", key));
  return *it;
}

DType parse_dtype(const json& v, const std::string& path, const std::string& name) {
  if (!v.is_string()) fail_tensor(path, name, fmt::format("has a dtype that is {}, expected a string", describe(v)));
  const std::string& s = v.get_ref<const std::string&>();
  for (const DTypeInfo& d : kDTypes)
    if (s == d.name) return d.dtype;
  fail_tensor(path, name, fmt::format("has dtype '{}', which nmt does not read (F32, F16, BF16, F64, I8, U8, I32, I64)",
                                      printable(s)));
}

// A non-negative integer of the header; floats are refused, even integral ones (the format's
// writers never write them, and 1e300 has no integer value).
uint64_t parse_count(const json& v, const char* what, const std::string& path, const std::string& name) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) fail_tensor(path, name, fmt::format("has a {} entry {}, expected a size >= 0", what, v.dump()));
  fail_tensor(path, name, fmt::format("has a {} entry that is {}, expected an integer", what, describe(v)));
}

std::vector<int64_t> parse_shape(const json& v, const std::string& path, const std::string& name) {
  if (!v.is_array()) fail_tensor(path, name, fmt::format("has a shape that is {}, expected an array", describe(v)));
  std::vector<int64_t> shape;
  for (const json& d : v) {
    const uint64_t n = parse_count(d, "shape", path, name);
    if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail_tensor(path, name, fmt::format("has a shape entry {}, too large", n));
    shape.push_back(static_cast<int64_t>(n));
  }
  return shape;
}

// numel * element size, or false when either overflows (a zero dimension makes it 0 whatever
// the others are).
bool byte_count(const std::vector<int64_t>& shape, size_t element_size, size_t* bytes) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return *bytes = 0, true;
  uint64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0 || static_cast<uint64_t>(d) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / numel) return false;
    numel *= static_cast<uint64_t>(d);
  }
  if (numel > std::numeric_limits<size_t>::max() / element_size) return false;
  *bytes = static_cast<size_t>(numel * element_size);
  return true;
}

TensorInfo parse_entry(const std::string& name, const json& entry, uint64_t data_size, const std::string& path) {
  if (!entry.is_object())
    fail_tensor(path, name, fmt::format("is {}, expected an object with dtype, shape and data_offsets", describe(entry)));
  TensorInfo t;
  t.name = name;
  t.dtype = parse_dtype(field(entry, "dtype", path, name), path, name);
  t.shape = parse_shape(field(entry, "shape", path, name), path, name);
  size_t bytes = 0;
  if (!byte_count(t.shape, dtype_size(t.dtype), &bytes))
    fail_tensor(path, name, fmt::format("has shape {}, too many elements to address", shape_string(t.shape)));
  const json& offsets = field(entry, "data_offsets", path, name);
  if (!offsets.is_array() || offsets.size() != 2)
    fail_tensor(path, name, "has data_offsets that are not [begin, end]");
  const uint64_t begin = parse_count(offsets[0], "data_offsets", path, name);
  const uint64_t end = parse_count(offsets[1], "data_offsets", path, name);
  if (begin > end) fail_tensor(path, name, fmt::format("has data_offsets [{}, {}] reversed", begin, end));
  if (end > data_size)
    fail_tensor(path, name, fmt::format("has data_offsets [{}, {}] past the end of the {}-byte data (truncated?)", begin,
                                        end, data_size));
  if (end - begin != bytes)
    fail_tensor(path, name, fmt::format("has data_offsets [{}, {}], {} bytes, but shape {} of {} takes {}", begin, end,
                                        end - begin, shape_string(t.shape), dtype_name(t.dtype), bytes));
  t.offset = static_cast<size_t>(begin);
  t.bytes = bytes;
  return t;
}

// Sorted by offset, each tensor's bytes must begin at or after the end of every earlier one's.
void check_overlaps(const std::vector<TensorInfo>& tensors, const std::string& path) {
  const TensorInfo* furthest = nullptr;  // of the tensors so far, the one ending last
  for (const TensorInfo& t : tensors) {
    if (t.bytes == 0) continue;  // holds no bytes, so shares none
    if (furthest && t.offset < furthest->offset + furthest->bytes)
      fail_tensor(path, t.name, fmt::format("overlaps tensor '{}' (bytes [{}, {}) and [{}, {}) of the data)",
                                            printable(furthest->name), t.offset, t.offset + t.bytes, furthest->offset,
                                            furthest->offset + furthest->bytes));
    if (!furthest || t.offset + t.bytes > furthest->offset + furthest->bytes) furthest = &t;
  }
}

std::map<std::string, std::string> parse_metadata(const json& v, const std::string& path) {
  if (!v.is_object()) fail(path, fmt::format("__metadata__ is {}, expected an object of strings", describe(v)));
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string())
      fail(path, fmt::format("__metadata__ '{}' is {}, expected a string", printable(key), describe(value)));
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

uint64_t read_u64_le(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return mantissa ? std::numeric_limits<float>::quiet_NaN() : (sign ? -INFINITY : INFINITY);
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  const uint32_t bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// A double beyond float32's range becomes infinite (a plain cast would be undefined).
float double_to_float(double d) {
  if (std::isnan(d)) return std::numeric_limits<float>::quiet_NaN();
  if (std::fabs(d) > static_cast<double>(FLT_MAX)) return d < 0 ? -INFINITY : INFINITY;
  return static_cast<float>(d);
}

template <typename T, typename Convert>
void convert(const unsigned char* src, size_t n, float* out, Convert to_float) {
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    out[i] = to_float(v);
  }
}

bool all_finite(const float* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i])) return false;
  return true;
}

// Closes a file descriptor at the end of the scope.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

size_t dtype_size(DType dtype) { return info(dtype).size; }
const char* dtype_name(DType dtype) { return info(dtype).name; }

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// ---- File

size_t File::load_header(const unsigned char* bytes, size_t size) {
  if (size < 8) fail(path_, fmt::format("truncated ({} bytes): not a safetensors file", size));
  const uint64_t header_size = read_u64_le(bytes);
  if (header_size > kMaxHeaderBytes)
    fail(path_, fmt::format("a header of {} bytes, more than the {} a safetensors file may have", header_size, kMaxHeaderBytes));
  if (header_size > size - 8)
    fail(path_, fmt::format("truncated: a {}-byte header in a {}-byte file", header_size, size));
  const size_t data_start = 8 + static_cast<size_t>(header_size);
  const json header = parse_header(std::string(reinterpret_cast<const char*>(bytes) + 8, header_size), path_);
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") metadata_ = parse_metadata(entry, path_);
    else tensors_.push_back(parse_entry(name, entry, size - data_start, path_));
  }
  std::sort(tensors_.begin(), tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return std::tie(a.offset, a.bytes, a.name) < std::tie(b.offset, b.bytes, b.name);
  });
  check_overlaps(tensors_, path_);
  for (size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
  return data_start;
}

void File::copy_data(const unsigned char* data, size_t size) {
  copy_.reset(new uint64_t[size / 8 + 1]);
  if (size) std::memcpy(copy_.get(), data, size);
  data_ = reinterpret_cast<const unsigned char*>(copy_.get());
}

File File::open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer before fstat can
  // refuse it. It changes nothing for a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(path, errno == ENOENT ? std::string("no such file") : fmt::format("cannot open: {}", std::strerror(errno)));
  const FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, fmt::format("cannot open: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) fail(path, "is a directory, expected a file");
  if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
  File file;
  file.path_ = path;
  const auto size = static_cast<size_t>(st.st_size);
  if (size < 8) file.load_header(nullptr, size);  // throws "truncated" (mmap refuses 0 bytes)
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) fail(path, fmt::format("cannot map: {}", std::strerror(errno)));
  file.map_ = map;  // from here the destructor unmaps, whatever load_header throws
  file.map_size_ = size;
  const auto* bytes = static_cast<const unsigned char*>(map);
  const size_t data_start = file.load_header(bytes, size);
  if (data_start % 8 == 0) {
    file.data_ = bytes + data_start;
  } else {  // an unpadded header: the data copied to where floats and doubles can be read
    file.copy_data(bytes + data_start, size - data_start);
    file.release();
  }
  return file;
}

File File::from_bytes(std::string bytes, std::string name) {
  File file;
  file.path_ = std::move(name);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t data_start = file.load_header(p, bytes.size());
  file.copy_data(p + data_start, bytes.size() - data_start);
  return file;
}

void File::release() noexcept {
  if (map_) ::munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
}

File::File(File&& other) noexcept { *this = std::move(other); }

File& File::operator=(File&& other) noexcept {
  if (this == &other) return *this;
  release();
  path_ = std::move(other.path_);
  tensors_ = std::move(other.tensors_);
  index_ = std::move(other.index_);
  metadata_ = std::move(other.metadata_);
  copy_ = std::move(other.copy_);
  map_ = std::exchange(other.map_, nullptr);
  map_size_ = std::exchange(other.map_size_, 0);
  data_ = std::exchange(other.data_, nullptr);
  return *this;
}

File::~File() { release(); }

const TensorInfo* File::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& File::checked(const std::string& name, const std::vector<int64_t>& shape) const {
  const TensorInfo* t = find(name);
  if (!t) fail(path_, fmt::format("no tensor '{}'", printable(name)));
  if (t->shape != shape)
    fail_tensor(path_, name, fmt::format("has shape {}, expected {}", shape_string(t->shape), shape_string(shape)));
  return *t;
}

const float* File::f32(const std::string& name, const std::vector<int64_t>& shape) const {
  const TensorInfo& t = checked(name, shape);
  if (t.dtype != DType::kF32) fail_tensor(path_, name, fmt::format("is {}, expected F32", dtype_name(t.dtype)));
  if (t.offset % alignof(float) != 0)
    fail_tensor(path_, name, fmt::format("starts at byte {} of the data, not a multiple of 4: it cannot be read in place",
                                         t.offset));
  const auto* p = reinterpret_cast<const float*>(data(t));
  if (!all_finite(p, t.bytes / 4)) fail_tensor(path_, name, "holds NaN or infinite values");
  return p;
}

const int8_t* File::i8(const std::string& name, const std::vector<int64_t>& shape) const {
  const TensorInfo& t = checked(name, shape);
  if (t.dtype != DType::kI8) fail_tensor(path_, name, fmt::format("is {}, expected I8", dtype_name(t.dtype)));
  return reinterpret_cast<const int8_t*>(data(t));
}

std::vector<float> File::to_f32(const std::string& name, const std::vector<int64_t>& shape) const {
  const TensorInfo& t = checked(name, shape);
  const auto* src = static_cast<const unsigned char*>(data(t));
  const size_t n = t.bytes / dtype_size(t.dtype);
  std::vector<float> out(n);
  switch (t.dtype) {
    case DType::kF32: convert<float>(src, n, out.data(), [](float v) { return v; }); break;
    case DType::kF16: convert<uint16_t>(src, n, out.data(), half_to_float); break;
    case DType::kBF16: convert<uint16_t>(src, n, out.data(), bf16_to_float); break;
    case DType::kF64: convert<double>(src, n, out.data(), double_to_float); break;
    default:
      fail_tensor(path_, name, fmt::format("is {}, expected a float dtype (F32, F16, BF16 or F64)", dtype_name(t.dtype)));
  }
  if (!all_finite(out.data(), n)) fail_tensor(path_, name, "holds NaN or infinite values");
  return out;
}

// ---- Writing

namespace {

// The header's JSON for tensors laid out in `order`, and the data size.
std::string header_json(const std::vector<TensorToWrite>& tensors, const std::vector<size_t>& order,
                        const std::map<std::string, std::string>& metadata, size_t* data_size) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  size_t offset = 0;
  for (size_t i : order) {
    const TensorToWrite& t = tensors[i];
    size_t bytes = 0;
    if (t.name == "__metadata__" || header.contains(t.name))
      throw std::invalid_argument("safetensors::serialize: tensor name '" + t.name + "' reserved or given twice");
    if (!byte_count(t.shape, dtype_size(t.dtype), &bytes) || (bytes && !t.data))
      throw std::invalid_argument("safetensors::serialize: tensor '" + t.name + "' has a bad shape or no data");
    header[t.name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  *data_size = offset;
  try {
    return header.dump();
  } catch (const json::type_error&) {
    throw std::invalid_argument("safetensors::serialize: a tensor name or metadata is not UTF-8");
  }
}

}  // namespace

std::string serialize(const std::vector<TensorToWrite>& tensors, const std::map<std::string, std::string>& metadata) {
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return dtype_size(tensors[a].dtype) > dtype_size(tensors[b].dtype); });
  size_t data_size = 0;
  std::string header = header_json(tensors, order, metadata, &data_size);
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + header.size() + data_size);
  for (int i = 0; i < 8; ++i) out += static_cast<char>((static_cast<uint64_t>(header.size()) >> (8 * i)) & 0xff);
  out += header;
  for (size_t i : order) {
    size_t bytes = 0;
    byte_count(tensors[i].shape, dtype_size(tensors[i].dtype), &bytes);
    if (bytes) out.append(static_cast<const char*>(tensors[i].data), bytes);
  }
  return out;
}

void write_file(const std::string& path, const std::vector<TensorToWrite>& tensors,
                const std::map<std::string, std::string>& metadata) {
  const std::string bytes = serialize(tensors, metadata);
  OutputFile out(path);
  out.write(bytes);
  out.commit();
}

namespace {
uint64_t hash_tensor(uint64_t h, const std::string& name, DType dtype, const std::vector<int64_t>& shape, const void* data,
                     size_t bytes) {
  h = fnv1a_words(name.data(), name.size() + 1, h);
  const std::string type = dtype_name(dtype);
  h = fnv1a_words(type.data(), type.size() + 1, h);
  for (int64_t d : shape) h = fnv1a_words(&d, sizeof d, h);
  return bytes ? fnv1a_words(data, bytes, h) : h;
}
}  // namespace

// Hashed in name order on both sides: a File lists its tensors by offset, and the writer lays
// them out by element size, so only the names give one order to both.
std::string checksum(const std::vector<TensorToWrite>& tensors) {
  std::vector<const TensorToWrite*> sorted;
  for (const auto& t : tensors) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  uint64_t h = kFnvOffset;
  for (const auto* t : sorted) {
    size_t bytes = 0;
    byte_count(t->shape, dtype_size(t->dtype), &bytes);
    h = hash_tensor(h, t->name, t->dtype, t->shape, t->data, bytes);
  }
  return hex64(h);
}

std::string checksum(const File& file) {
  std::vector<const TensorInfo*> sorted;
  for (const auto& t : file.tensors()) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  uint64_t h = kFnvOffset;
  for (const auto* t : sorted) h = hash_tensor(h, t->name, t->dtype, t->shape, file.data(*t), t->bytes);
  return hex64(h);
}

void verify_checksum(const File& file) {
  const auto stored = file.metadata().find(kChecksumKey);
  if (stored == file.metadata().end())
    throw RuntimeError(fmt::format("{}: no {} in its metadata: not weights written by nmt", file.path(), kChecksumKey));
  if (stored->second != checksum(file))
    throw RuntimeError(fmt::format("{}: checksum mismatch: the weights are corrupted", file.path()));
}

}  // namespace nmt::safetensors
