#include "nmt/models/hf_weights.h"

#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/models/torch_pickle.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::models {
namespace fs = std::filesystem;

namespace {

torch::ScalarType safetensors_dtype(const std::string& dtype, const std::string& path, const std::string& name) {
  if (dtype == "F32") return torch::kFloat;
  if (dtype == "F16") return torch::kHalf;
  if (dtype == "BF16") return torch::kBFloat16;
  throw RuntimeError(fmt::format("{}: tensor '{}' is {}; nmt import reads F32, F16 and BF16 weights", path, name, dtype));
}

}  // namespace

std::map<std::string, torch::Tensor> read_safetensors(const std::string& path) {
  const std::string bytes = read_file(path);
  if (bytes.size() < 8) throw RuntimeError(fmt::format("{}: truncated ({} bytes): not a safetensors file", path, bytes.size()));
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);  // little-endian, as the format says (and x86 is)
  if (header_size > bytes.size() - 8)
    throw RuntimeError(fmt::format("{}: truncated: a {}-byte header in a {}-byte file", path, header_size, bytes.size()));
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, header_size));
  } catch (const nlohmann::json::exception&) {
    throw RuntimeError(fmt::format("{}: not a safetensors file (its header is not JSON)", path));
  }
  if (!header.is_object()) throw RuntimeError(fmt::format("{}: not a safetensors file (header not an object)", path));
  const uint64_t data_start = 8 + header_size, data_size = bytes.size() - data_start;
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    try {
      const torch::ScalarType dtype = safetensors_dtype(entry.at("dtype").get<std::string>(), path, name);
      const auto shape = entry.at("shape").get<std::vector<int64_t>>();
      const auto offsets = entry.at("data_offsets").get<std::vector<uint64_t>>();
      int64_t numel = 1;
      for (int64_t d : shape) numel *= d;
      const uint64_t expected = static_cast<uint64_t>(numel) * torch::elementSize(dtype);
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size || offsets[1] - offsets[0] != expected)
        throw RuntimeError(fmt::format("{}: tensor '{}' lies outside the file (truncated?)", path, name));
      auto t = torch::empty(shape, torch::TensorOptions().dtype(dtype));
      std::memcpy(t.data_ptr(), bytes.data() + data_start + offsets[0], expected);
      out.emplace(name, t.to(torch::kFloat));
    } catch (const nlohmann::json::exception&) {
      throw RuntimeError(fmt::format("{}: tensor '{}': a malformed header entry", path, name));
    }
  }
  return out;
}

std::map<std::string, torch::Tensor> read_hf_weights(const std::string& dir, std::string* file) {
  const fs::path safetensors = fs::path(dir) / "model.safetensors", bin = fs::path(dir) / "pytorch_model.bin";
  if (fs::exists(safetensors)) {
    *file = safetensors.string();
    return read_safetensors(*file);
  }
  if (fs::exists(bin)) {
    *file = bin.string();
    return read_torch_save_file(*file);
  }
  if (fs::exists(fs::path(dir) / "model.safetensors.index.json"))
    throw RuntimeError(fmt::format("{}: weights sharded over several files; nmt import reads one model.safetensors", dir));
  throw RuntimeError(fmt::format("{}: no model.safetensors or pytorch_model.bin", dir));
}

}  // namespace nmt::models
