#pragma once
// The tensors of a file written by Python's torch.save (its zip format, PyTorch >= 1.6): a dict of
// tensors, as pytorch_model.bin files are. LibTorch's own torch::pickle_load turns the
// OrderedDict a state_dict is into None (it cannot apply the dict's `_metadata` attribute), so
// this reads the archive's records with LibTorch's zip reader and runs the pickle itself: a
// small interpreter for the opcodes torch.save emits (protocols 2-4), which builds tensors from
// torch._utils._rebuild_tensor_v2 and the storages the archive holds, and refuses anything
// else (no code from the file is ever run).
#include <map>
#include <string>

#include <torch/torch.h>

#include "nmt/models/hf_weights.h"  // read_torch_save_weights, LibTorch's here

namespace nmt::models {

// name → tensor (float32, contiguous, on the CPU). A file of the old (pre-zip) format, a
// truncated archive, a pickle of anything but a dict of tensors → RuntimeError naming the file.
std::map<std::string, torch::Tensor> read_torch_save_file(const std::string& path);

}  // namespace nmt::models
