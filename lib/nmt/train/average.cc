#include "nmt/train/average.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "nmt/models/model_io.h"
#include "nmt/train/checkpoint.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::train {
namespace fs = std::filesystem;

AverageResult average_last_checkpoints(const std::string& model_dir, int last, const std::string& out_dir) {
  if (last < 1) throw UsageError("--last must be at least 1");
  if (fs::exists(out_dir) && !fs::is_empty(out_dir))
    throw UsageError(fmt::format("{}: output directory is not empty", out_dir));
  const fs::path dir(model_dir);
  const fs::path config_path = dir / models::kConfigFile;
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(read_file(config_path.string()));
  } catch (const nlohmann::json::exception&) {
    throw RuntimeError(fmt::format("{}: corrupt (not valid JSON)", config_path.string()));
  }
  const auto model_config = models::ModelConfig::from_json(config.at("model"));
  auto all = CheckpointManager(dir, 0).list();
  if (static_cast<int>(all.size()) < last)
    throw RuntimeError(fmt::format("{}: has {} checkpoint(s), cannot average the last {}", (dir / "checkpoints").string(),
                                   all.size(), last));
  AverageResult result;
  std::vector<fs::path> chosen(all.end() - last, all.end());

  torch::NoGradGuard no_grad;
  auto model = models::make_model(model_config);
  std::vector<torch::Tensor> sums;
  for (const auto& checkpoint : chosen) {
    CheckpointManager::verify(checkpoint, model_config.type);
    models::load_weights(*model, (checkpoint / models::kWeightsFile).string());
    auto params = model->parameters();
    if (sums.empty())
      for (const auto& p : params) sums.push_back(p.detach().to(torch::kDouble).clone());
    else
      for (size_t i = 0; i < params.size(); ++i) sums[i] += params[i].detach().to(torch::kDouble);
    result.checkpoints.push_back(checkpoint.string());
  }
  auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_((sums[i] / static_cast<double>(last)).to(params[i].dtype()));

  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot create: {}", out_dir, ec.message()));
  config["averaged_from"] = result.checkpoints;
  write_file_atomic((fs::path(out_dir) / models::kConfigFile).string(), config.dump(2) + "\n");
  write_file_atomic((fs::path(out_dir) / models::kSubwordFile).string(),
                    read_file((dir / models::kSubwordFile).string()));
  models::save_weights(*model, (fs::path(out_dir) / models::kWeightsFile).string());
  return result;
}

}  // namespace nmt::train
