#include "nmt/models/quantize.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nmt/models/model_io.h"
#include "nmt/models/weights_file.h"
#include "nmt/models/quantizable_linear.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::models {
namespace fs = std::filesystem;

namespace {
constexpr const char* kMarkerKey = "nmt_quantization";
constexpr const char* kFormatKey = "nmt_quantization_format";
constexpr const char* kValuesKey = "weight_int8";
constexpr const char* kScalesKey = "weight_scales";

std::string join(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}
std::string shape(const torch::Tensor& t) { return fmt::format("{}", fmt::join(t.sizes().vec(), "x")); }

// Stored sizes, for `nmt quantize`'s summary.
struct Counts {
  int64_t int8 = 0, fp32 = 0;
};

// One module's tensors into `archive`, children as nested archives (Module::save's layout), a
// quantised Linear's weight as int8 values and scales. Every tensor stored is hashed.
void write_module(const torch::nn::Module& module, torch::serialize::OutputArchive& archive, const std::string& prefix,
                  WeightsHasher& hasher, Counts& counts) {
  auto put = [&](const std::string& key, const torch::Tensor& t, bool is_buffer = false) {
    const torch::Tensor stored = t.detach().to(torch::kCPU).contiguous();
    hasher.add(join(prefix, key), stored);
    (stored.scalar_type() == torch::kInt8 ? counts.int8 : counts.fp32) += stored.numel();
    archive.write(key, stored, is_buffer);
  };
  const auto* linear = dynamic_cast<const QuantizableLinearImpl*>(&module);
  const quant::QuantizedWeight* q = linear ? linear->quantized_weight() : nullptr;
  if (linear && !q) throw RuntimeError(fmt::format("'{}' is not quantised: no int8 weights to write", prefix));
  for (const auto& p : module.named_parameters(/*recurse=*/false)) {
    if (q && p.key() == "weight") {
      auto values =
          torch::from_blob(const_cast<int8_t*>(q->values.data()), {q->out_features, q->in_features}, torch::kInt8);
      auto scales = torch::from_blob(const_cast<float*>(q->scales.data()), {q->out_features}, torch::kFloat);
      put(kValuesKey, values);
      put(kScalesKey, scales);
    } else {
      put(p.key(), p.value());
    }
  }
  for (const auto& b : module.named_buffers(/*recurse=*/false)) put(b.key(), b.value(), /*is_buffer=*/true);
  for (const auto& child : module.named_children()) {
    if (!child.value()->is_serializable()) continue;
    torch::serialize::OutputArchive child_archive(archive.compilation_unit());
    write_module(*child.value(), child_archive, join(prefix, child.key()), hasher, counts);
    archive.write(child.key(), child_archive);
  }
}

// Reads what write_module wrote into a model built from the same configuration.
class Int8Reader {
 public:
  explicit Int8Reader(const std::string& path) : path_(path) {}

  void read_module(torch::nn::Module& module, torch::serialize::InputArchive& archive, const std::string& prefix) {
    auto* linear = dynamic_cast<QuantizableLinearImpl*>(&module);
    torch::NoGradGuard no_grad;
    for (auto& p : module.named_parameters(/*recurse=*/false)) {
      if (linear && p.key() == "weight") {
        read_quantized(*linear, archive, prefix);
      } else {
        p.value().copy_(read(archive, prefix, p.key(), p.value().sizes().vec(), p.value().scalar_type()));
      }
    }
    for (auto& b : module.named_buffers(/*recurse=*/false))
      b.value().copy_(read(archive, prefix, b.key(), b.value().sizes().vec(), b.value().scalar_type(), true));
    for (const auto& child : module.named_children()) {
      if (!child.value()->is_serializable()) continue;
      torch::serialize::InputArchive child_archive;
      if (!archive.try_read(child.key(), child_archive)) missing(join(prefix, child.key()));
      read_module(*child.value(), child_archive, join(prefix, child.key()));
    }
  }
  std::string checksum() const { return hasher_.hex(); }

 private:
  [[noreturn]] void missing(const std::string& name) const {
    throw RuntimeError(fmt::format("{}: '{}' is missing: not int8 weights of this model configuration", path_, name));
  }

  torch::Tensor read(torch::serialize::InputArchive& archive, const std::string& prefix, const std::string& key,
                     const std::vector<int64_t>& sizes, torch::ScalarType type, bool is_buffer = false) {
    torch::Tensor t;
    if (!archive.try_read(key, t, is_buffer)) missing(join(prefix, key));
    if (t.sizes().vec() != sizes || t.scalar_type() != type)
      throw RuntimeError(fmt::format("{}: '{}' is {} {}, expected {} {} (config.json does not match the weights)",
                                     path_, join(prefix, key), c10::toString(t.scalar_type()), shape(t),
                                     c10::toString(type), fmt::join(sizes, "x")));
    hasher_.add(join(prefix, key), t);
    return t;
  }

  void read_quantized(QuantizableLinearImpl& linear, torch::serialize::InputArchive& archive,
                      const std::string& prefix) {
    const int64_t out = linear.weight.size(0), in = linear.weight.size(1);
    const torch::Tensor values = read(archive, prefix, kValuesKey, {out, in}, torch::kInt8).contiguous();
    const torch::Tensor scales = read(archive, prefix, kScalesKey, {out}, torch::kFloat).contiguous();
    if (!torch::isfinite(scales).all().item<bool>() || !(scales > 0).all().item<bool>())
      throw RuntimeError(
          fmt::format("{}: '{}' holds a scale that is not a positive finite number", path_, join(prefix, kScalesKey)));
    quant::QuantizedWeight q;
    q.out_features = out;
    q.in_features = in;
    q.values.assign(values.data_ptr<int8_t>(), values.data_ptr<int8_t>() + values.numel());
    q.scales.assign(scales.data_ptr<float>(), scales.data_ptr<float>() + scales.numel());
    linear.set_quantized(std::move(q));
  }

  std::string path_;
  WeightsHasher hasher_;
};

}  // namespace

int64_t quantize_model(Seq2SeqModelImpl& model) {
  int64_t n = 0;
  for (const auto& m : model.modules(/*include_self=*/false))
    if (auto* linear = dynamic_cast<QuantizableLinearImpl*>(m.get())) {
      linear->quantize();
      ++n;
    }
  model.quantize_tied_output();
  return n;
}

bool is_int8_archive(torch::serialize::InputArchive& archive) {
  c10::IValue marker;
  return archive.try_read(kMarkerKey, marker);
}

void save_int8_weights(Seq2SeqModelImpl& model, const std::string& path) {
  check_finite(model, fmt::format("{}: refusing to save the weights", path));
  torch::serialize::OutputArchive archive;
  WeightsHasher hasher;
  Counts counts;
  write_module(model, archive, "", hasher, counts);
  archive.write(kMarkerKey, c10::IValue(std::string("int8")));
  archive.write(kFormatKey, c10::IValue(static_cast<int64_t>(kInt8Format)));
  archive.write(kWeightsChecksumKey, c10::IValue(hasher.hex()));
  save_archive(archive, path);
}

void load_int8_weights(Seq2SeqModelImpl& model, const std::string& path) {
  if (!fs::is_regular_file(path)) throw RuntimeError(fmt::format("{}: no such int8 weights file", path));
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const c10::Error& e) {
    throw RuntimeError(fmt::format("{}: cannot read int8 weights (truncated or corrupted): {}", path,
                                   first_line(e.what_without_backtrace())));
  }
  if (!is_int8_archive(archive))
    throw RuntimeError(fmt::format("{}: not an int8 weights file (fp32 weights, such as a model.pt?); "
                                   "nmt quantize writes int8 model directories",
                                   path));
  c10::IValue format, stored_checksum;
  if (!archive.try_read(kFormatKey, format) || !format.isInt())
    throw RuntimeError(fmt::format("{}: int8 weights without a format number: corrupted", path));
  if (format.toInt() > kInt8Format)
    throw RuntimeError(fmt::format("{}: int8 format {} is newer than this nmt supports ({}); upgrade nmt", path,
                                   format.toInt(), kInt8Format));
  Int8Reader reader(path);
  try {
    reader.read_module(model, archive, "");
  } catch (const c10::Error& e) {
    throw RuntimeError(fmt::format("{}: cannot read int8 weights (truncated or corrupted): {}", path,
                                   first_line(e.what_without_backtrace())));
  }
  if (!archive.try_read(kWeightsChecksumKey, stored_checksum) || !stored_checksum.isString() ||
      stored_checksum.toStringRef() != reader.checksum())
    throw RuntimeError(fmt::format("{}: checksum mismatch: the int8 weights are corrupted", path));
  check_finite(model, path);
  model.quantize_tied_output();
}

QuantizeSummary quantize_model_dir(const std::string& dir, const std::string& out, bool force) {
  const auto start = std::chrono::steady_clock::now();
  const std::string target = checked_quantize_target(dir, out, force);
  LoadedModel m = load_model(dir);
  QuantizeSummary summary;
  summary.linears = quantize_model(*m.model);
  m.config["quantization"] = "int8";
  m.config["format"] = kModelFormat;  // model.safetensors beside model.int8.pt
  m.config["quantized_from"] = fs::absolute(dir).lexically_normal().string();

  write_model_directory(target, out, [&](const std::string& tmp) {
    save_directory_weights(*m.model, tmp);
    write_file_atomic((fs::path(tmp) / kConfigFile).string(), m.config.dump(2) + "\n");
    copy_subword_files(dir, tmp, m.model_config.shared_vocab);
  });
  for (const auto& m2 : m.model->modules(false))
    if (auto* linear = dynamic_cast<QuantizableLinearImpl*>(m2.get())) summary.int8_weights += linear->weight.numel();
  for (const auto& p : m.model->parameters()) summary.fp32_weights += p.numel();
  summary.fp32_weights -= summary.int8_weights;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace nmt::models
