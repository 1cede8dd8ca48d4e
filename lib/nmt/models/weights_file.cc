#include "nmt/models/weights_file.h"

#include <filesystem>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "nmt/models/marian_import.h"
#include "nmt/models/model_io.h"
#include "nmt/models/quantizable_linear.h"
#include "nmt/models/quantize.h"
#include "nmt/models/transformer.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/safetensors.h"

namespace nmt::models {
namespace fs = std::filesystem;

namespace {
std::string join(const std::string& prefix, const std::string& key) { return prefix.empty() ? key : prefix + "." + key; }

// The quantised Linear a module is, or null.
const QuantizableLinearImpl* quantized_linear(const torch::nn::Module& module) {
  const auto* linear = dynamic_cast<const QuantizableLinearImpl*>(&module);
  return linear && linear->quantized() ? linear : nullptr;
}

// What one model's file holds: every tensor to write, and the CPU copies they point into.
struct Stored {
  std::vector<safetensors::TensorToWrite> tensors;
  std::vector<torch::Tensor> keep;
  bool int8 = false;

  void add(const std::string& name, const torch::Tensor& t) {
    keep.push_back(t.detach().to(torch::kCPU).contiguous());
    const torch::Tensor& c = keep.back();
    if (c.scalar_type() != torch::kFloat)
      throw RuntimeError(fmt::format("'{}' is {}: model weights are float32", name, c10::toString(c.scalar_type())));
    tensors.push_back({name, safetensors::DType::kF32, c.sizes().vec(), c.data_ptr()});
  }
  void add_int8(const std::string& name, const quant::QuantizedWeight& q) {
    tensors.push_back({name + ".int8", safetensors::DType::kI8, {q.out_features, q.in_features}, q.values.data()});
    tensors.push_back({name + ".scales", safetensors::DType::kF32, {q.out_features}, q.scales.data()});
    int8 = true;
  }
};

// Calls visit(module, its state-dict prefix) on `module` and every submodule, parents first.
// (named_modules() cannot include a module that is not held by a shared_ptr, as an import's is.)
void for_each_module(torch::nn::Module& module, const std::string& prefix,
                     const std::function<void(torch::nn::Module&, const std::string&)>& visit) {
  visit(module, prefix);
  for (const auto& child : module.named_children()) for_each_module(*child.value(), join(prefix, child.key()), visit);
}

Stored stored_tensors(torch::nn::Module& model) {
  Stored s;
  for_each_module(model, "", [&](torch::nn::Module& m, const std::string& prefix) {
    const QuantizableLinearImpl* q = quantized_linear(m);
    for (const auto& p : m.named_parameters(/*recurse=*/false)) {
      if (q && p.key() == "weight") s.add_int8(join(prefix, p.key()), *q->quantized_weight());
      else s.add(join(prefix, p.key()), p.value());
    }
    for (const auto& b : m.named_buffers(/*recurse=*/false)) s.add(join(prefix, b.key()), b.value());
  });
  return s;
}
}  // namespace

void save_safetensors_weights(torch::nn::Module& model, const std::string& path) {
  check_finite(model, fmt::format("{}: refusing to save the weights", path));
  torch::NoGradGuard no_grad;
  const Stored s = stored_tensors(model);
  std::map<std::string, std::string> metadata = {{safetensors::kChecksumKey, safetensors::checksum(s.tensors)}};
  if (s.int8) metadata["nmt_quantization"] = "int8";
  safetensors::write_file(path, s.tensors, metadata);
}

void load_safetensors_weights(Seq2SeqModelImpl& model, const std::string& path) {
  const safetensors::File file = safetensors::File::open(path);
  safetensors::verify_checksum(file);
  torch::NoGradGuard no_grad;
  std::set<std::string> expected;
  bool int8 = false;
  auto copy_into = [&](const std::string& name, torch::Tensor& t) {
    expected.insert(name);
    const float* values = file.f32(name, t.sizes().vec());
    t.copy_(torch::from_blob(const_cast<float*>(values), t.sizes(), torch::kFloat));
  };
  for_each_module(model, "", [&](torch::nn::Module& m, const std::string& prefix) {
    auto* linear = dynamic_cast<QuantizableLinearImpl*>(&m);
    for (auto& p : m.named_parameters(/*recurse=*/false)) {
      const std::string name = join(prefix, p.key());
      if (linear && p.key() == "weight" && file.find(name + ".int8")) {
        const int64_t out = p.value().size(0), in = p.value().size(1);
        quant::QuantizedWeight q;
        q.out_features = out;
        q.in_features = in;
        const int8_t* values = file.i8(name + ".int8", {out, in});
        const float* scales = file.f32(name + ".scales", {out});
        for (int64_t i = 0; i < out; ++i)
          if (!(scales[i] > 0))
            throw RuntimeError(fmt::format("{}: tensor '{}.scales' holds a scale that is not positive", path, name));
        q.values.assign(values, values + out * in);
        q.scales.assign(scales, scales + out);
        linear->set_quantized(std::move(q));
        expected.insert(name + ".int8");
        expected.insert(name + ".scales");
        int8 = true;
      } else {
        copy_into(name, p.value());
      }
    }
    for (auto& b : m.named_buffers(/*recurse=*/false)) copy_into(join(prefix, b.key()), b.value());
  });
  for (const auto& t : file.tensors())
    if (!expected.count(t.name))
      throw RuntimeError(fmt::format("{}: tensor '{}' is not part of this model (weights of another model?)", path, t.name));
  if (int8) model.quantize_tied_output();
}

void save_directory_weights(Seq2SeqModelImpl& model, const std::string& dir) {
  save_safetensors_weights(model, (fs::path(dir) / kSafetensorsFile).string());
  bool int8 = false;
  for (const auto& m : model.modules(/*include_self=*/false)) int8 |= quantized_linear(*m) != nullptr;
  if (int8) save_int8_weights(model, (fs::path(dir) / kInt8WeightsFile).string());
  else save_weights(model, (fs::path(dir) / kWeightsFile).string());
}

// The LibTorch build's: through the module, so that nothing maps to no parameter or misses one;
// model.safetensors as the build without LibTorch writes it, and model.pt.
void write_imported_weights(const ModelConfig& config, const HostTensors& mapped, const std::string& file,
                            const std::string& dir) {
  TransformerImpl model(config);
  torch::NoGradGuard no_grad;
  size_t used = 0;
  for (auto& p : model.named_parameters()) {
    auto it = mapped.find(p.key());
    if (it == mapped.end()) throw RuntimeError(fmt::format("{}: nothing maps to nmt's '{}' (an importer bug)", file, p.key()));
    if (it->second.shape != p.value().sizes().vec())
      throw RuntimeError(fmt::format("{}: '{}' mapped to shape {} (an importer bug)", file, p.key(),
                                     safetensors::shape_string(it->second.shape)));
    p.value().copy_(torch::from_blob(const_cast<float*>(it->second.values.data()), p.value().sizes(), torch::kFloat));
    ++used;
  }
  if (used != mapped.size()) throw RuntimeError(fmt::format("{}: a mapped tensor is no parameter of nmt's (an importer bug)", file));
  model.eval();
  check_finite(model, file);
  write_imported_safetensors(mapped, file, (fs::path(dir) / kSafetensorsFile).string());
  save_weights(model, (fs::path(dir) / kWeightsFile).string());
}

bool upgrade_model_directory(const std::string& dir) {
  const fs::path file = fs::path(dir) / kSafetensorsFile;
  LoadedModel m = load_model(dir);
  if (m.config.value("format", 1) >= kModelFormat && fs::exists(file)) return false;
  save_safetensors_weights(*m.model, file.string());
  m.config["format"] = kModelFormat;
  write_file_atomic((fs::path(dir) / kConfigFile).string(), m.config.dump(2) + "\n");
  return true;
}

}  // namespace nmt::models
