#include "nmt/models/model_io.h"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::models {
namespace fs = std::filesystem;

void save_weights(torch::nn::Module& model, const std::string& path) {
  const std::string tmp = path + ".tmp";
  try {
    torch::serialize::OutputArchive archive;
    model.save(archive);
    archive.save_to(tmp);
  } catch (const c10::Error& e) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw RuntimeError(fmt::format("{}: cannot write weights (disk full or unwritable?)", tmp));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot rename into place: {}", path, ec.message()));
}

void load_weights(torch::nn::Module& model, const std::string& path) {
  if (!fs::is_regular_file(path)) throw RuntimeError(fmt::format("{}: no such weights file", path));
  // LibTorch's Module::load replaces tensors with whatever shape the file holds, so a model
  // built from a config that does not match the weights would load "successfully": compare.
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected;
  for (const auto& p : model.named_parameters()) expected.emplace_back(p.key(), p.value().sizes().vec());
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    torch::NoGradGuard no_grad;
    model.load(archive);
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    throw RuntimeError(fmt::format("{}: cannot load weights (corrupt, or not made with this config): {}", path, what));
  }
  auto params = model.named_parameters();
  for (const auto& [name, sizes] : expected) {
    const auto* p = params.find(name);
    if (!p || p->sizes().vec() != sizes)
      throw RuntimeError(fmt::format("{}: weights do not match the model configuration ('{}' has shape {}, expected {})",
                                     path, name, p ? fmt::format("{}", fmt::join(p->sizes().vec(), "x")) : "none",
                                     fmt::join(sizes, "x")));
  }
}

LoadedModel load_model(const std::string& dir, const std::string& weights) {
  if (!fs::is_directory(dir)) throw RuntimeError(fmt::format("{}: not a model directory", dir));
  LoadedModel m;
  const std::string config_path = (fs::path(dir) / kConfigFile).string();
  try {
    m.config = nlohmann::json::parse(read_file(config_path));
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(fmt::format("{}: invalid JSON: {}", config_path, e.what()));
  }
  if (!m.config.contains("model")) throw RuntimeError(fmt::format("{}: no \"model\" section", config_path));
  try {
    m.model_config = ModelConfig::from_json(m.config.at("model"));
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: {}", config_path, e.what()));
  }
  m.subwords = text::SubwordModel::load((fs::path(dir) / kSubwordFile).string());
  if (m.subwords.vocab_size() != m.model_config.tgt_vocab)
    throw RuntimeError(fmt::format("{}: vocabulary size {} does not match the model's {}", (fs::path(dir) / kSubwordFile).string(),
                                   m.subwords.vocab_size(), m.model_config.tgt_vocab));
  m.model = make_model(m.model_config);
  load_weights(*m.model, (fs::path(dir) / weights).string());
  m.model->eval();
  return m;
}

}  // namespace nmt::models
