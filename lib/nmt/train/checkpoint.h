#pragma once
// Crash-safe training checkpoints.
//
//   OUT/checkpoints/step-00001234/   one complete training state per directory:
//       model.pt      weights
//       optimizer.pt  Adam moments and step counts
//       rng.pt        the CPU generator (dropout), so a resumed run draws the same numbers
//       state.json    step, epoch, batch index in the epoch's plan, best metric, early-stopping
//                     counter, validation history, elapsed time, world size and accumulation
//       manifest.json format version, model type, and a checksum of every file above
//
// A checkpoint is written into a hidden temporary directory and renamed into place, so a kill
// at any instant leaves either no new checkpoint or a complete one. The manifest is written
// last, and a directory without a valid manifest is never used.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "nmt/models/model.h"

namespace nmt::train {

inline constexpr int kCheckpointFormat = 1;

struct TrainState {
  int64_t step = 0;
  int64_t epoch = 1;           // 1-based
  int64_t batch_in_epoch = 0;  // batches of the current epoch (with --data: of its pool) already done
  int64_t pool_in_epoch = 0;   // --data: pools of the current epoch already done
  double best = 0;             // best validation metric so far (higher is better)
  bool has_best = false;
  int64_t bad_validations = 0;  // validations since the last improvement
  int64_t skipped_steps = 0;    // updates skipped for a non-finite loss or gradient
  double elapsed = 0;           // training seconds, summed over restarts
  // How each update was made: world_size processes × accum_steps batches each, consecutive in
  // the epoch's plan. batch_in_epoch and the weights only continue exactly under the same
  // layout, so a resume with another one is refused.
  int64_t world_size = 1;
  int64_t accum_steps = 1;
  nlohmann::json history = nlohmann::json::array();

  nlohmann::json to_json() const;
  static TrainState from_json(const nlohmann::json& j);  // RuntimeError naming the key, or nlohmann::json::exception
};

// 64-bit FNV-1a of a file's bytes, as 16 hex digits (RuntimeError naming the file if unreadable).
std::string file_checksum(const std::filesystem::path& path);

class CheckpointManager {
 public:
  CheckpointManager(std::filesystem::path out_dir, int keep_last) : dir_(out_dir / "checkpoints"), keep_last_(keep_last) {}

  // Writes a new checkpoint for state.step and removes all but the newest keep_last.
  // Errors (unwritable directory, disk full) → RuntimeError; the previous checkpoints stay.
  std::filesystem::path save(torch::nn::Module& model, torch::optim::Optimizer& optimizer, const TrainState& state,
                             const std::string& model_type);

  // Complete checkpoints, oldest first (ignores temporary and unfinished directories).
  std::vector<std::filesystem::path> list() const;

  // Restores weights, optimizer, RNG and returns the state. Verifies the manifest: a newer
  // format, another model type, a missing file or a checksum mismatch → RuntimeError naming
  // the file.
  static TrainState load(const std::filesystem::path& checkpoint, torch::nn::Module& model,
                         torch::optim::Optimizer& optimizer, const std::string& model_type,
                         const torch::Device& device = torch::kCPU);

  // Checks a checkpoint's manifest and checksums without loading it.
  static nlohmann::json verify(const std::filesystem::path& checkpoint, const std::string& model_type = "");

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  int keep_last_;
};

}  // namespace nmt::train
