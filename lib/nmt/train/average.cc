#include "nmt/train/average.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "nmt/models/model_io.h"
#include "nmt/models/weights_file.h"
#include "nmt/train/checkpoint.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/json_read.h"

namespace nmt::train {
namespace fs = std::filesystem;

AverageResult average_last_checkpoints(const std::string& model_dir, int last, const std::string& out_dir) {
  if (last < 0) throw UsageError(fmt::format("--last is {}, must be at least 1 (or 0: every checkpoint the run kept)", last));
  if (const std::string problem = directory_problem(model_dir); !problem.empty())
    throw RuntimeError(fmt::format("{}: {}", model_dir, problem));
  if (fs::exists(out_dir) && !fs::is_empty(out_dir))
    throw UsageError(fmt::format("{}: output directory is not empty", out_dir));
  const fs::path dir(model_dir);
  const fs::path config_path = dir / models::kConfigFile;
  nlohmann::json config = json_read::parse(read_small_file(config_path.string(), kMaxJsonBytes), config_path.string());
  models::ModelConfig model_config;
  try {
    model_config = models::ModelConfig::from_json(json_read::object(config, "model"));
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: {}", config_path.string(), e.what()));
  }
  auto all = CheckpointManager(dir, 0).list();
  if (all.empty()) throw RuntimeError(fmt::format("{}: has no checkpoints to average", (dir / "checkpoints").string()));
  if (last == 0) last = static_cast<int>(all.size());
  if (static_cast<int>(all.size()) < last)
    throw RuntimeError(fmt::format("{}: has {} checkpoint(s), cannot average the last {} (training keeps --keep-last of "
                                   "them; leave out --last to average all it kept)",
                                   (dir / "checkpoints").string(), all.size(), last));
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

  // The mean of finite weights can still overflow to infinity: refused (by save_weights) before
  // anything is written.
  models::check_finite(*model, fmt::format("the average of {} checkpoints of {}", last, model_dir));
  config["averaged_from"] = result.checkpoints;
  config["format"] = models::kModelFormat;  // model.safetensors beside model.pt
  // A full disk leaves no half model directory (and no temporary files) behind.
  fs::path target = fs::path(out_dir).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "out/": an empty OUT (checked above)
  models::write_model_directory(target.string(), out_dir, [&](const std::string& tmp) {
    models::save_directory_weights(*model, tmp);
    write_file_atomic((fs::path(tmp) / models::kConfigFile).string(), config.dump(2) + "\n");
    models::copy_subword_files(dir.string(), tmp, model_config.shared_vocab);
  });
  return result;
}

}  // namespace nmt::train
