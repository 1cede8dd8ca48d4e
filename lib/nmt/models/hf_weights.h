#pragma once
// The weights of a Hugging Face model directory, by name, as float32 arrays (no LibTorch):
// model.safetensors (read here) or pytorch_model.bin (torch.save's zip archive, read where the
// binary has LibTorch's unpickler: models/torch_pickle.h).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nmt::models {

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;  // row-major
};
using HostTensors = std::map<std::string, HostTensor>;

// Every tensor of `path` as float32. A truncated file, a header that is not JSON, an offset
// outside the file or a dtype other than F32/F16/BF16 → RuntimeError naming the file.
HostTensors read_safetensors_f32(const std::string& path);
// DIR/model.safetensors, else DIR/pytorch_model.bin; *file receives the path read.
HostTensors read_hf_weights(const std::string& dir, std::string* file);
// A pytorch_model.bin. Defined by the binary: LibTorch's (torch_pickle.cc), or one that says in
// a RuntimeError naming the file that it needs LibTorch (decode/without_torch.cc).
HostTensors read_torch_save_weights(const std::string& path);

}  // namespace nmt::models
