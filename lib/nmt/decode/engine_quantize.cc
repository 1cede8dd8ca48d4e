#include "nmt/decode/engine_quantize.h"

#include <chrono>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "nmt/decode/cpu_engine.h"
#include "nmt/engine/safetensors_weights.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/safetensors.h"

namespace nmt::decode {
namespace fs = std::filesystem;

namespace {

// The model's float32 weights, noting each Linear weight the engine asks for an int8 copy of:
// building an engine model through it names the tensors `nmt quantize` makes int8.
class LinearWeightsRecorder final : public engine::WeightSource {
 public:
  explicit LinearWeightsRecorder(const engine::WeightSource& weights) : weights_(weights) {}
  const float* f32(const std::string& name, const std::vector<int64_t>& shape) const override {
    return weights_.f32(name, shape);
  }
  bool contains(const std::string& name) const override { return weights_.contains(name); }
  bool int8(const std::string& name, int64_t out, int64_t in, quant::QuantizedWeight& weight) const override {
    linear_weights_.insert(name);
    return weights_.int8(name, out, in, weight);
  }
  std::string description() const override { return weights_.description(); }
  const std::set<std::string>& linear_weights() const { return linear_weights_; }

 private:
  const engine::WeightSource& weights_;
  mutable std::set<std::string> linear_weights_;
};

std::set<std::string> quantizable_weights(const safetensors::File& file, const models::ModelConfig& config) {
  const engine::SafetensorsWeights weights(file);
  const LinearWeightsRecorder recorder(weights);
  if (config.type == "gru") engine::GruBahdanau(gru_spec(config), recorder);
  else engine::Transformer(transformer_spec(config), recorder);
  return recorder.linear_weights();
}

// What the int8 file holds: every tensor of `file` as it is, but each of `linears` as its int8
// values and scales.
struct Int8Tensors {
  std::vector<safetensors::TensorToWrite> tensors;
  std::vector<quant::QuantizedWeight> quantized;  // what the int8 tensors point into
  models::QuantizeSummary counts;
};

Int8Tensors int8_tensors(const safetensors::File& file, const std::set<std::string>& linears) {
  Int8Tensors out;
  out.quantized.reserve(linears.size());  // stable addresses
  for (const safetensors::TensorInfo& t : file.tensors()) {
    if (!linears.count(t.name)) {
      out.tensors.push_back({t.name, t.dtype, t.shape, file.data(t)});
      out.counts.fp32_weights += t.numel();
      continue;
    }
    const quant::QuantizedWeight& q =
        out.quantized.emplace_back(quant::quantize_weight(file.f32(t.name, t.shape), t.shape[0], t.shape[1]));
    out.tensors.push_back({t.name + ".int8", safetensors::DType::kI8, t.shape, q.values.data()});
    out.tensors.push_back({t.name + ".scales", safetensors::DType::kF32, {q.out_features}, q.scales.data()});
    ++out.counts.linears;
    out.counts.int8_weights += t.numel();
  }
  return out;
}

}  // namespace

models::QuantizeSummary quantize_on_engine(const std::string& dir, const std::string& out, bool force) {
  const auto start = std::chrono::steady_clock::now();
  const std::string target = models::checked_quantize_target(dir, out, force);
  models::ModelInfo m = models::load_model_info(dir);
  if (const std::string why = engine_cannot_decode(m.model_config); !why.empty())
    throw UsageError(fmt::format("{}: cannot quantise without LibTorch: {}", dir, why));
  const safetensors::File file = safetensors::File::open(safetensors_file_of(dir));
  safetensors::verify_checksum(file);
  const Int8Tensors int8 = int8_tensors(file, quantizable_weights(file, m.model_config));
  const std::map<std::string, std::string> metadata = {{safetensors::kChecksumKey, safetensors::checksum(int8.tensors)},
                                                       {"nmt_quantization", "int8"}};
  m.config["quantization"] = "int8";
  m.config["format"] = models::kModelFormat;
  m.config["quantized_from"] = fs::absolute(dir).lexically_normal().string();
  models::write_model_directory(target, out, [&](const std::string& tmp) {
    safetensors::write_file((fs::path(tmp) / models::kSafetensorsFile).string(), int8.tensors, metadata);
    write_file_atomic((fs::path(tmp) / models::kConfigFile).string(), m.config.dump(2) + "\n");
    models::copy_subword_files(dir, tmp, m.model_config.shared_vocab);
  });
  models::QuantizeSummary summary = int8.counts;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace nmt::decode
