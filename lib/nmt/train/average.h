#pragma once
// Checkpoint averaging (Vaswani et al., 2017; Marian's --average-last): the element-wise mean
// of the weights of the last N checkpoints of a run, written as a new model directory.
#include <string>
#include <vector>

namespace nmt::train {

struct AverageResult {
  std::vector<std::string> checkpoints;  // the checkpoints averaged, oldest first
};

// Averages the last `last` (0: all) complete checkpoints of the run in `model_dir` (verified by their
// manifests) into `out_dir` (config.json and the subword models copied, model.pt the average).
// Errors: fewer than `last` checkpoints, an unverifiable checkpoint, `out_dir` non-empty.
AverageResult average_last_checkpoints(const std::string& model_dir, int last, const std::string& out_dir);

}  // namespace nmt::train
