#include "nmt/train/checkpoint.h"

#include <algorithm>
#include <fstream>
#include <limits>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include "nmt/models/model_io.h"
#include "nmt/util/error.h"
#include "nmt/train/manifest.h"
#include "nmt/util/hash.h"
#include "nmt/util/io.h"
#include "nmt/util/json_read.h"

namespace nmt::train {
namespace fs = std::filesystem;

namespace {
constexpr const char* kStateFile = "state.json";
constexpr const char* kOptimizerFile = "optimizer.pt";
constexpr const char* kRngFile = "rng.pt";
constexpr const char* kManifestFile = "manifest.json";
const std::vector<std::string> kFiles = {models::kWeightsFile, kOptimizerFile, kRngFile, kStateFile};

std::string step_name(int64_t step) { return fmt::format("step-{:08d}", step); }

nlohmann::json read_json(const fs::path& path) {
  return json_read::parse(read_small_file(path.string(), kMaxJsonBytes), path.string() + ": corrupt");
}
}  // namespace

nlohmann::json TrainState::to_json() const {
  return {{"step", step}, {"epoch", epoch}, {"batch_in_epoch", batch_in_epoch}, {"pool_in_epoch", pool_in_epoch}, {"best", best},
          {"has_best", has_best}, {"bad_validations", bad_validations}, {"skipped_steps", skipped_steps},
          {"elapsed", elapsed}, {"history", history}, {"world_size", world_size}, {"accum_steps", accum_steps}};
}

TrainState TrainState::from_json(const nlohmann::json& j) {
  using namespace json_read;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  TrainState s;
  s.step = integer(j, "step", 0, kMax);
  s.epoch = integer(j, "epoch", 1, kMax);
  s.batch_in_epoch = integer(j, "batch_in_epoch", 0, kMax);
  if (j.contains("pool_in_epoch")) s.pool_in_epoch = integer(j, "pool_in_epoch", 0, kMax);
  s.best = number(j, "best");
  s.has_best = boolean(j, "has_best");
  s.bad_validations = integer(j, "bad_validations", 0, kMax);
  if (j.contains("skipped_steps")) s.skipped_steps = integer(j, "skipped_steps", 0, kMax);
  s.elapsed = number(j, "elapsed");
  s.history = j.at("history");
  if (!s.history.is_array()) throw RuntimeError("'history' is not an array");
  for (const auto& h : s.history) {
    // The summary at the end of training reads these.
    if (!h.is_object()) throw RuntimeError("'history' holds a non-object");
    (void)number(h, "val_loss");
    (void)integer(h, "step", 0, kMax);
    if (h.contains("val_bleu")) (void)number(h, "val_bleu");
  }
  // Checkpoints from before data parallelism: one process, no accumulation.
  if (j.contains("world_size")) s.world_size = integer(j, "world_size", 1, 1 << 20);
  if (j.contains("accum_steps")) s.accum_steps = integer(j, "accum_steps", 1, 1 << 20);
  return s;
}

std::string file_checksum(const fs::path& path) {
  return file_fnv1a(path.string());
}

fs::path CheckpointManager::save(torch::nn::Module& model, torch::optim::Optimizer& optimizer, const TrainState& state,
                                 const std::string& model_type) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot create: {}", dir_.string(), ec.message()));
  const fs::path final_dir = dir_ / step_name(state.step);
  const fs::path tmp = dir_ / (".tmp-" + step_name(state.step));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot create: {}", tmp.string(), ec.message()));
  try {
    models::save_weights(model, (tmp / models::kWeightsFile).string());
    torch::serialize::OutputArchive opt;
    optimizer.save(opt);
    models::save_archive(opt, (tmp / kOptimizerFile).string());
    torch::serialize::OutputArchive rng;
    rng.write("cpu_generator", at::detail::getDefaultCPUGenerator().get_state());
    models::save_archive(rng, (tmp / kRngFile).string());
    write_file_atomic((tmp / kStateFile).string(), state.to_json().dump(1));
    nlohmann::json manifest = {{"format", kCheckpointFormat}, {"model_type", model_type}, {"step", state.step}};
    for (const auto& f : kFiles) manifest["files"][f] = file_checksum(tmp / f);
    write_file_atomic((tmp / kManifestFile).string(), manifest.dump(1));
  } catch (const c10::Error&) {
    fs::remove_all(tmp, ec);
    throw RuntimeError(fmt::format("{}: cannot write the checkpoint (disk full or unwritable?)", tmp.string()));
  } catch (const Error& e) {
    // Named by the checkpoint it was to be: the temporary directory in the message is gone.
    fs::remove_all(tmp, ec);
    throw RuntimeError(fmt::format("{}: not saved: {}", final_dir.string(), e.what()));
  }
  fs::remove_all(final_dir, ec);  // a checkpoint of the same step from before a restart
  fs::rename(tmp, final_dir, ec);
  if (ec) {
    fs::remove_all(tmp, ec);
    throw RuntimeError(fmt::format("{}: cannot move the checkpoint into place: {}", final_dir.string(), ec.message()));
  }
  auto all = list();
  for (size_t i = 0; keep_last_ > 0 && i + keep_last_ < all.size(); ++i) fs::remove_all(all[i], ec);
  return final_dir;
}

std::vector<fs::path> CheckpointManager::list() const {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step-", 0) == 0 && fs::exists(entry.path() / kManifestFile)) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

nlohmann::json CheckpointManager::verify(const fs::path& checkpoint, const std::string& model_type) {
  const fs::path manifest_path = checkpoint / kManifestFile;
  if (!fs::exists(manifest_path))
    throw RuntimeError(fmt::format("{}: no manifest: not a complete checkpoint", checkpoint.string()));
  const std::string text = read_small_file(manifest_path.string(), kMaxJsonBytes);
  const Manifest manifest = parse_manifest(text, manifest_path.string());
  if (manifest.format > kCheckpointFormat)
    throw RuntimeError(fmt::format("{}: checkpoint format {} is newer than this nmt supports ({}); upgrade nmt",
                                   manifest_path.string(), manifest.format, kCheckpointFormat));
  if (!model_type.empty() && manifest.model_type != model_type)
    throw RuntimeError(fmt::format("{}: checkpoint of a '{}' model, but this run trains a '{}' model",
                                   manifest_path.string(), manifest.model_type, model_type));
  for (const auto& f : kFiles) {
    const fs::path file = checkpoint / f;
    if (!fs::exists(file)) throw RuntimeError(fmt::format("{}: missing from the checkpoint", file.string()));
    if (!fs::is_regular_file(file)) throw RuntimeError(fmt::format("{}: not a regular file", file.string()));
    const auto expected = manifest.files.find(f);
    if (expected == manifest.files.end() || file_checksum(file) != expected->second)
      throw RuntimeError(fmt::format("{}: checksum mismatch: the file is truncated or corrupted", file.string()));
  }
  return nlohmann::json::parse(text);
}

TrainState CheckpointManager::load(const fs::path& checkpoint, torch::nn::Module& model,
                                   torch::optim::Optimizer& optimizer, const std::string& model_type,
                                   const torch::Device& device) {
  verify(checkpoint, model_type);
  models::load_weights(model, (checkpoint / models::kWeightsFile).string());
  TrainState state;
  const fs::path state_path = checkpoint / kStateFile;
  try {
    state = TrainState::from_json(read_json(state_path));
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(fmt::format("{}: corrupt training state: {}", state_path.string(), e.what()));
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: corrupt training state: {}", state_path.string(), e.what()));
  }
  try {
    torch::serialize::InputArchive opt;
    opt.load_from((checkpoint / kOptimizerFile).string(), device);
    optimizer.load(opt);
    torch::serialize::InputArchive rng;
    rng.load_from((checkpoint / kRngFile).string());
    torch::Tensor generator_state;
    rng.read("cpu_generator", generator_state);
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    generator.set_state(generator_state);
  } catch (const c10::Error&) {
    throw RuntimeError(fmt::format("{}: corrupt optimizer or RNG state", checkpoint.string()));
  }
  return state;
}

}  // namespace nmt::train
