#pragma once
// The weights of a Hugging Face model directory, by name: model.safetensors (read here, no
// Python needed) or pytorch_model.bin (torch.save's zip archive, through LibTorch's unpickler).
#include <map>
#include <string>

#include <torch/torch.h>

namespace nmt::models {

// Every tensor of `path` as float32 on the CPU. A truncated file, a header that is not JSON, an
// offset outside the file or a dtype other than F32/F16/BF16 → RuntimeError naming the file.
std::map<std::string, torch::Tensor> read_safetensors(const std::string& path);
// DIR/model.safetensors, else DIR/pytorch_model.bin; *file receives the path read.
std::map<std::string, torch::Tensor> read_hf_weights(const std::string& dir, std::string* file);

}  // namespace nmt::models
