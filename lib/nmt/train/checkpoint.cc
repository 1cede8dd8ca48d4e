#include "nmt/train/checkpoint.h"

#include <algorithm>
#include <fstream>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include "nmt/models/model_io.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

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
  try {
    return nlohmann::json::parse(read_file(path.string()));
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(fmt::format("{}: corrupt (not valid JSON)", path.string()));
  }
}
}  // namespace

nlohmann::json TrainState::to_json() const {
  return {{"step", step}, {"epoch", epoch}, {"batch_in_epoch", batch_in_epoch}, {"best", best},
          {"has_best", has_best}, {"bad_validations", bad_validations}, {"skipped_steps", skipped_steps},
          {"elapsed", elapsed}, {"history", history}, {"world_size", world_size}, {"accum_steps", accum_steps}};
}

TrainState TrainState::from_json(const nlohmann::json& j) {
  TrainState s;
  j.at("step").get_to(s.step);
  j.at("epoch").get_to(s.epoch);
  j.at("batch_in_epoch").get_to(s.batch_in_epoch);
  j.at("best").get_to(s.best);
  j.at("has_best").get_to(s.has_best);
  j.at("bad_validations").get_to(s.bad_validations);
  if (j.contains("skipped_steps")) j.at("skipped_steps").get_to(s.skipped_steps);
  j.at("elapsed").get_to(s.elapsed);
  s.history = j.at("history");
  // Checkpoints from before data parallelism: one process, no accumulation.
  if (j.contains("world_size")) j.at("world_size").get_to(s.world_size);
  if (j.contains("accum_steps")) j.at("accum_steps").get_to(s.accum_steps);
  return s;
}

std::string file_checksum(const fs::path& path) {
  std::ifstream in = open_input(path.string());
  uint64_t hash = 1469598103934665603ULL;
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::streamsize n = in.gcount();
    for (std::streamsize i = 0; i < n; ++i) {
      hash ^= static_cast<unsigned char>(buffer[i]);
      hash *= 1099511628211ULL;
    }
  }
  if (in.bad()) throw RuntimeError(fmt::format("{}: read error", path.string()));
  return fmt::format("{:016x}", hash);
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
    opt.save_to((tmp / kOptimizerFile).string());
    torch::serialize::OutputArchive rng;
    rng.write("cpu_generator", at::detail::getDefaultCPUGenerator().get_state());
    rng.save_to((tmp / kRngFile).string());
    write_file_atomic((tmp / kStateFile).string(), state.to_json().dump(1));
    nlohmann::json manifest = {{"format", kCheckpointFormat}, {"model_type", model_type}, {"step", state.step}};
    for (const auto& f : kFiles) manifest["files"][f] = file_checksum(tmp / f);
    write_file_atomic((tmp / kManifestFile).string(), manifest.dump(1));
  } catch (const c10::Error&) {
    fs::remove_all(tmp, ec);
    throw RuntimeError(fmt::format("{}: cannot write the checkpoint (disk full or unwritable?)", tmp.string()));
  } catch (const Error&) {
    fs::remove_all(tmp, ec);
    throw;
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
  nlohmann::json manifest = read_json(manifest_path);
  const int format = manifest.value("format", -1);
  if (format < 1) throw RuntimeError(fmt::format("{}: no format version: not an nmt checkpoint", manifest_path.string()));
  if (format > kCheckpointFormat)
    throw RuntimeError(fmt::format("{}: checkpoint format {} is newer than this nmt supports ({}); upgrade nmt",
                                   manifest_path.string(), format, kCheckpointFormat));
  if (!model_type.empty() && manifest.value("model_type", "") != model_type)
    throw RuntimeError(fmt::format("{}: checkpoint of a '{}' model, but this run trains a '{}' model",
                                   manifest_path.string(), manifest.value("model_type", "?"), model_type));
  for (const auto& f : kFiles) {
    const fs::path file = checkpoint / f;
    if (!fs::exists(file)) throw RuntimeError(fmt::format("{}: missing from the checkpoint", file.string()));
    const std::string expected = manifest["files"].value(f, "");
    if (file_checksum(file) != expected)
      throw RuntimeError(fmt::format("{}: checksum mismatch: the file is truncated or corrupted", file.string()));
  }
  return manifest;
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
