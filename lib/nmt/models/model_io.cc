#include "nmt/models/model_io.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nmt/models/init.h"
#include "nmt/models/quantize.h"
#include "nmt/models/weights_file.h"
#include "nmt/util/error.h"
#include "nmt/version.h"
#include "nmt/util/io.h"
#include "nmt/util/json_read.h"
#include "nmt/util/safetensors.h"

namespace nmt::models {
namespace fs = std::filesystem;

namespace {
void hash_tensors(WeightsHasher& hasher, const torch::OrderedDict<std::string, torch::Tensor>& tensors) {
  for (const auto& item : tensors) hasher.add(item.key(), item.value());
}

}  // namespace

void WeightsHasher::add_bytes(const void* data, size_t n) { h_ = fnv1a_words(data, n, h_); }

void WeightsHasher::add(const std::string& name, const torch::Tensor& tensor) {
  add_bytes(name.data(), name.size() + 1);
  const torch::Tensor t = tensor.detach().to(torch::kCPU).contiguous();
  const int64_t type = static_cast<int64_t>(t.scalar_type());
  add_bytes(&type, sizeof type);
  for (int64_t s : t.sizes()) add_bytes(&s, sizeof s);
  add_bytes(t.data_ptr(), t.numel() * t.element_size());
}

std::string WeightsHasher::hex() const { return fmt::format("{:016x}", h_); }

void save_archive(torch::serialize::OutputArchive& archive, const std::string& path) {
  std::string bytes;
  try {
    archive.save_to([&bytes](const void* data, size_t n) {
      bytes.append(static_cast<const char*>(data), n);
      return n;
    });
  } catch (const c10::Error& e) {
    throw RuntimeError(fmt::format("{}: cannot serialise: {}", path, first_line(e.what_without_backtrace())));
  }
  write_file_atomic(path, bytes);
}

std::string weights_checksum(torch::nn::Module& model) {
  WeightsHasher hasher;
  hash_tensors(hasher, model.named_parameters());
  hash_tensors(hasher, model.named_buffers());
  return hasher.hex();
}

namespace {
// One pass over the bits (exponent all ones: infinity or NaN) for the CPU float32 weights every
// load checks; torch::isfinite(t).all() makes three passes and two temporaries, which was 5 % of
// the time to the first translation of a transformer-small (perf, 2026-11-27).
bool all_finite(const torch::Tensor& t) {
  if (t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.is_contiguous()) {
    const auto* bits = static_cast<const uint32_t*>(t.data_ptr());
    uint32_t special = 0;
    for (int64_t i = 0, n = t.numel(); i < n; ++i) special |= static_cast<uint32_t>((bits[i] & 0x7f800000u) == 0x7f800000u);
    return special == 0;
  }
  return torch::isfinite(t).all().item<bool>();
}

torch::Device device_of(torch::nn::Module& model) {
  auto params = model.parameters();
  return params.empty() ? torch::Device(torch::kCPU) : params.front().device();
}

// Drops the freshly initialised weights before a file replaces them, so a load holds one copy of
// the weights at a time, not two: translating one sentence with a transformer-small peaked at
// 199.6 MB with both, 177.6 MB with one (2026-11-27). The caller has noted the shapes to check the
// file's against; a load that fails after this leaves the model without weights (every caller
// gives up on the model then).
void release_parameters(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) p.set_data(torch::empty({0}, p.options()));
}
}  // namespace

void check_finite(torch::nn::Module& model, const std::string& what) {
  torch::NoGradGuard no_grad;
  for (const auto& p : model.named_parameters())
    if (p.value().is_floating_point() && !all_finite(p.value()))
      throw RuntimeError(fmt::format("{}: non-finite values (NaN or infinity) in '{}'", what, p.key()));
}

void save_weights(torch::nn::Module& model, const std::string& path) {
  check_finite(model, fmt::format("{}: refusing to save the weights", path));
  torch::serialize::OutputArchive archive;
  model.save(archive);
  archive.write(kWeightsChecksumKey, c10::IValue(weights_checksum(model)));
  save_archive(archive, path);
}

void load_weights(torch::nn::Module& model, const std::string& path) {
  if (!fs::is_regular_file(path)) throw RuntimeError(fmt::format("{}: no such weights file", path));
  // LibTorch's Module::load replaces tensors with whatever shape the file holds, so a model
  // built from a config that does not match the weights would load "successfully": compare.
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected;
  for (const auto& p : model.named_parameters()) expected.emplace_back(p.key(), p.value().sizes().vec());
  c10::IValue stored_checksum;
  bool has_checksum = false;
  try {
    torch::serialize::InputArchive archive;
    // Read onto the model's device: LibTorch gives a parameter on another device the file's
    // tensor itself (set_data), which would move a resumed CUDA model's weights to the CPU.
    const torch::Device device = device_of(model);
    release_parameters(model);  // load_from reads every tensor of the file at once
    archive.load_from(path, device);
    if (is_int8_archive(archive))
      throw RuntimeError(fmt::format("{}: int8 weights (written by nmt quantize) where fp32 weights belong; an int8 "
                                     "model directory has them as {} and \"quantization\": \"int8\" in its {}",
                                     path, kInt8WeightsFile, kConfigFile));
    torch::NoGradGuard no_grad;
    model.load(archive);
    has_checksum = archive.try_read(kWeightsChecksumKey, stored_checksum);
  } catch (const c10::Error& e) {
    throw RuntimeError(fmt::format("{}: cannot load weights (corrupt, or not made with this config): {}", path,
                                   first_line(e.what_without_backtrace())));
  }
  auto params = model.named_parameters();
  for (const auto& [name, sizes] : expected) {
    const auto* p = params.find(name);
    if (!p || p->sizes().vec() != sizes)
      throw RuntimeError(fmt::format("{}: weights do not match the model configuration ('{}' has shape {}, expected {})",
                                     path, name, p ? fmt::format("{}", fmt::join(p->sizes().vec(), "x")) : "none",
                                     fmt::join(sizes, "x")));
  }
  if (has_checksum && (!stored_checksum.isString() || stored_checksum.toStringRef() != weights_checksum(model)))
    throw RuntimeError(fmt::format("{}: checksum mismatch: the weights are corrupted", path));
  check_finite(model, path);
}

namespace {
// A directory's model.safetensors in place of its LibTorch archive (nmt quantize without
// LibTorch writes no model.int8.pt): int8 weights where config.json says int8, and only there.
void load_directory_safetensors(Seq2SeqModelImpl& model, const std::string& path, bool int8) {
  const bool file_int8 = safetensors::File::open(path).metadata().count("nmt_quantization") > 0;
  if (file_int8 != int8)
    throw RuntimeError(fmt::format("{}: {} weights, but {} says {}", path, file_int8 ? "int8" : "fp32", kConfigFile,
                                   int8 ? "\"quantization\": \"int8\"" : "fp32 (no \"quantization\")"));
  load_safetensors_weights(model, path);
}
}  // namespace

LoadedModel load_model(const std::string& dir, const std::string& weights) {
  LoadedModel m;
  static_cast<ModelInfo&>(m) = load_model_info(dir);
  {
    WeightsFromFileGuard weights_from_file;
    m.model = make_model(m.model_config);
  }
  const bool int8 = m.quantization == "int8";
  const fs::path archive = fs::path(dir) / (weights.empty() ? (int8 ? kInt8WeightsFile : kWeightsFile) : weights);
  const fs::path safetensors_file = fs::path(dir) / kSafetensorsFile;
  if (weights.empty() && !fs::exists(archive) && fs::exists(safetensors_file))
    load_directory_safetensors(*m.model, safetensors_file.string(), int8);  // written without LibTorch
  else if (int8)
    load_int8_weights(*m.model, archive.string());
  else
    load_weights(*m.model, archive.string());
  m.model->eval();
  return m;
}

}  // namespace nmt::models
