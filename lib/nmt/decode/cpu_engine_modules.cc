#include "nmt/decode/cpu_engine_modules.h"

#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nmt/models/quantizable_linear.h"
#include "nmt/util/error.h"

namespace nmt::decode {
namespace {

// A LibTorch module's parameters (and int8 weights) as the engine reads them.
class ModuleWeights final : public engine::WeightSource {
 public:
  explicit ModuleWeights(torch::nn::Module& module) {
    for (const auto& p : module.named_parameters()) tensors_.emplace(p.key(), p.value().detach().to(torch::kCPU).contiguous());
    for (const auto& m : module.named_modules()) {
      auto* linear = dynamic_cast<models::QuantizableLinearImpl*>(m.value().get());
      if (linear && linear->quantized()) int8_.emplace(m.key() + ".weight", linear->quantized_weight());
    }
  }
  const float* f32(const std::string& name, const std::vector<int64_t>& shape) const override {
    const auto found = tensors_.find(name);
    if (found == tensors_.end()) throw RuntimeError(fmt::format("{}: no tensor '{}'", description(), name));
    const torch::Tensor& t = found->second;
    if (t.sizes().vec() != shape || t.scalar_type() != torch::kFloat)
      throw RuntimeError(fmt::format("{}: tensor '{}' has shape [{}], expected [{}] float32", description(), name,
                                     fmt::join(t.sizes().vec(), ", "), fmt::join(shape, ", ")));
    return t.data_ptr<float>();
  }
  bool contains(const std::string& name) const override { return tensors_.count(name) > 0; }
  bool int8(const std::string& name, int64_t out, int64_t in, quant::QuantizedWeight& weight) const override {
    const auto found = int8_.find(name);
    if (found == int8_.end()) return false;
    if (found->second->out_features != out || found->second->in_features != in)
      throw RuntimeError(fmt::format("{}: int8 tensor '{}' is [{}, {}], expected [{}, {}]", description(), name,
                                     found->second->out_features, found->second->in_features, out, in));
    weight = *found->second;
    return true;
  }
  std::string description() const override { return "the loaded model"; }

 private:
  std::map<std::string, torch::Tensor> tensors_;
  std::map<std::string, const quant::QuantizedWeight*> int8_;
};

}  // namespace

std::shared_ptr<const engine::Engine> make_cpu_engine(const std::vector<models::LoadedModel>& models) {
  for (const auto& m : models)
    if (const std::string why = engine_cannot_decode(m.model_config); !why.empty()) throw UsageError(why);
  std::vector<std::shared_ptr<const engine::Model>> members;
  for (const auto& m : models) {
    const bool int8 = m.quantization == "int8";
    const std::string file = m.dir.empty() ? "" : (std::filesystem::path(m.dir) / models::kSafetensorsFile).string();
    if (!file.empty() && std::filesystem::exists(file)) members.push_back(cpu_engine_model(file, m.model_config, int8));
    else members.push_back(cpu_engine_model(*m.model, int8));  // a directory of format 1: model.pt alone
  }
  return std::make_shared<const engine::Engine>(std::move(members));
}

std::shared_ptr<const engine::Model> cpu_engine_model(models::Seq2SeqModelImpl& model, bool int8) {
  torch::NoGradGuard no_grad;
  const ModuleWeights weights(model);
  if (model.config().type == "gru") return std::make_shared<const engine::GruBahdanau>(gru_spec(model.config()), weights, int8);
  return std::make_shared<const engine::Transformer>(transformer_spec(model.config()), weights, int8);
}

}  // namespace nmt::decode
