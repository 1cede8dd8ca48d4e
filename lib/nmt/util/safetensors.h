#pragma once
// Safetensors files (https://github.com/huggingface/safetensors), read and written without
// LibTorch: an 8-byte little-endian header size N, N bytes of JSON naming each tensor's dtype,
// shape and [begin, end) byte range in the data that follows, and an optional "__metadata__"
// object of strings. The format of Hugging Face's model files, and one any other tool can read,
// so weights nmt writes need no Python pickle and no LibTorch to be opened.
//
// A file is untrusted input: everything the header says is checked when the file is opened, so
// that no later access can read outside it, and every problem is a RuntimeError in one line
// "PATH: <what is wrong>", "PATH: tensor 'NAME' <what is wrong>" when one tensor is to blame
// (control characters in a name are written as \xNN, so the message stays one line).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nmt::safetensors {

// The element types nmt reads and writes. Others (BOOL, I16, U16, U32, U64, F8_*) are refused at
// open: no model nmt reads holds them, and a tensor of unknown element size cannot be checked.
enum class DType { kF32, kF16, kBF16, kF64, kI8, kU8, kI32, kI64 };
size_t dtype_size(DType dtype);       // bytes per element
const char* dtype_name(DType dtype);  // as in the header: "F32", "BF16", ...

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;  // [] is a scalar (one element)
  size_t offset = 0;           // from the start of the data buffer
  size_t bytes = 0;            // numel() * dtype_size(dtype), checked at open
  int64_t numel() const;
};

// "[2, 3]": shapes as the messages write them.
std::string shape_string(const std::vector<int64_t>& shape);

// A read-only view of one file. open() maps it (MAP_PRIVATE, PROT_READ): weights of hundreds of
// megabytes are paged in as they are used, not copied. The header is parsed and checked there:
// a file shorter than 8 bytes or than its header; a header size over 100 MB (the limit of
// Hugging Face's reader) or past the end of the file; a header that is not a JSON object; an
// entry that is not {"dtype", "shape", "data_offsets"}; an unknown dtype; a shape entry that is
// negative or not an integer; data_offsets not two integers, reversed, past the end of the data,
// overlapping another tensor's or spanning other than numel * dtype_size bytes; a numel that
// overflows; a name given twice; "__metadata__" not an object of strings. Zero tensors is valid.
// Gaps between tensors and bytes after the last one are allowed (nothing reads them; Hugging
// Face's reader refuses them, and serialize() never writes them).
//
// Alignment: the data buffer is held 8-byte aligned. Mapped, it starts at 8 + N; writers pad the
// header so that this is a multiple of 8, and a file whose header is not padded (some writers
// do not) is copied into an aligned buffer instead of mapped. A tensor whose own offset is not a
// multiple of its element size cannot be read in place: f32() refuses it, to_f32() copies it.
//
// A mapped file truncated by another process while open makes the reads past its new end fault
// (SIGBUS): as with any memory-mapped reader, do not rewrite files that are in use. nmt replaces
// files by rename (write_file below), which leaves the mapped inode intact.
class File {
 public:
  // Also refuses what is not a regular file (a directory, a FIFO: opening one would block).
  static File open(const std::string& path);
  // The same checks on bytes in memory (tests, fuzzing); `name` stands for PATH in messages.
  static File from_bytes(std::string bytes, std::string name);

  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File();  // unmaps

  const std::string& path() const { return path_; }
  // In file order (by offset; zero-byte tensors at the same offset by name).
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find(const std::string& name) const;  // nullptr when absent
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The tensor's t.bytes bytes (t must come from this File): aligned for its dtype when
  // t.offset is a multiple of dtype_size(t.dtype), as serialize() always writes them.
  const void* data(const TensorInfo& t) const { return data_ + t.offset; }

  // The checked accessors an engine uses, so that each weight is named, shaped and typed in one
  // line: the tensor must exist ("PATH: no tensor 'NAME'"), have this shape ("PATH: tensor 'NAME'
  // has shape [a, b], expected [c, d]") and this dtype ("PATH: tensor 'NAME' is F16, expected
  // F32"). f32() also refuses NaN and infinite values ("PATH: tensor 'NAME' holds NaN or infinite
  // values"): a diverged training's weights would otherwise translate into garbage silently.
  // The pointers are valid while the File lives.
  const float* f32(const std::string& name, const std::vector<int64_t>& shape) const;
  const int8_t* i8(const std::string& name, const std::vector<int64_t>& shape) const;
  // F32, F16, BF16 or F64 converted to float32 (imported weights come in all four); the same
  // checks, a value beyond float32's range counting as infinite. Integer dtypes are refused.
  std::vector<float> to_f32(const std::string& name, const std::vector<int64_t>& shape) const;

 private:
  File() = default;
  // Parses and checks the whole file's `size` bytes, filling tensors_, index_ and metadata_;
  // returns where the data buffer starts (8 + N).
  size_t load_header(const unsigned char* bytes, size_t size);
  void copy_data(const unsigned char* data, size_t size);  // into copy_, aligned
  const TensorInfo& checked(const std::string& name, const std::vector<int64_t>& shape) const;
  void release() noexcept;

  std::string path_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> index_;  // name -> position in tensors_
  std::map<std::string, std::string> metadata_;
  void* map_ = nullptr;  // the mapping, when mapped
  size_t map_size_ = 0;
  std::unique_ptr<uint64_t[]> copy_;     // the aligned copy of the data otherwise
  const unsigned char* data_ = nullptr;  // start of the data buffer, 8-byte aligned
};

struct TensorToWrite {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const void* data = nullptr;  // numel * dtype_size bytes, read by serialize()
};

// The whole file's bytes. The header is padded with spaces to a multiple of 8, and the tensors
// are laid out back to back, those of 8-byte elements first, then 4-, 2- and 1-byte ones (in the
// given order within each size), so that every tensor starts at a multiple of its element size
// in a mapping (readers map files; an unaligned float read is slow or, on some CPUs, a fault).
// Padding between tensors would do the same in the given order, but Hugging Face's reader
// refuses gaps; its writer orders tensors this way for the same reason.
// A name given twice or named "__metadata__", a negative dimension, a null data pointer for a
// non-empty tensor, or a name or metadata that is not UTF-8 is std::invalid_argument: a bug of
// the caller, not of any input.
std::string serialize(const std::vector<TensorToWrite>& tensors, const std::map<std::string, std::string>& metadata = {});

// serialize() written through nmt::OutputFile (util/io.h): a temporary file beside `path`,
// fsync, rename, so a crash or a full disk never leaves a torn weights file in its place;
// errors are RuntimeError naming `path`.
void write_file(const std::string& path, const std::vector<TensorToWrite>& tensors,
                const std::map<std::string, std::string>& metadata = {});

// The checksum nmt stores in the files it writes (metadata "nmt_weights_checksum"): fnv1a_words
// (util/hash.h) over each tensor's name, dtype, shape and bytes, in the given order for the
// tensors to write and in name order for a File, so the two agree (write_file sorts nothing;
// callers hash what they pass). 16 hex digits.
inline constexpr const char* kChecksumKey = "nmt_weights_checksum";
std::string checksum(const std::vector<TensorToWrite>& tensors);
std::string checksum(const File& file);
// A file nmt wrote is one whose metadata holds kChecksumKey: RuntimeError "PATH: checksum
// mismatch: the weights are corrupted" when the tensors' checksum differs, "PATH: no
// nmt_weights_checksum: not written by nmt" when it is absent.
void verify_checksum(const File& file);

}  // namespace nmt::safetensors
