#include "nmt/models/hf_weights.h"

#include <filesystem>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/safetensors.h"

namespace nmt::models {
namespace fs = std::filesystem;

HostTensors read_safetensors_f32(const std::string& path) {
  const safetensors::File file = safetensors::File::open(path);  // every header check, naming the file
  HostTensors out;
  for (const safetensors::TensorInfo& t : file.tensors()) {
    if (t.dtype != safetensors::DType::kF32 && t.dtype != safetensors::DType::kF16 && t.dtype != safetensors::DType::kBF16)
      throw RuntimeError(fmt::format("{}: tensor '{}' is {}; nmt import reads F32, F16 and BF16 weights", path, t.name,
                                     safetensors::dtype_name(t.dtype)));
    out.emplace(t.name, HostTensor{t.shape, file.to_f32(t.name, t.shape)});
  }
  return out;
}

HostTensors read_hf_weights(const std::string& dir, std::string* file) {
  const fs::path safetensors = fs::path(dir) / "model.safetensors", bin = fs::path(dir) / "pytorch_model.bin";
  if (fs::exists(safetensors)) {
    *file = safetensors.string();
    return read_safetensors_f32(*file);
  }
  if (fs::exists(bin)) {
    *file = bin.string();
    return read_torch_save_weights(*file);
  }
  if (fs::exists(fs::path(dir) / "model.safetensors.index.json"))
    throw RuntimeError(fmt::format("{}: weights sharded over several files; nmt import reads one model.safetensors", dir));
  throw RuntimeError(fmt::format("{}: no model.safetensors or pytorch_model.bin", dir));
}

}  // namespace nmt::models
