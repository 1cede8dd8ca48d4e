#pragma once
// Choosing the device (--device) and moving batches onto it.
#include <string>

#include <torch/torch.h>

#include "nmt/tensor/batch.h"

namespace nmt {

// "cpu", "cuda", "cuda:N"; empty = CUDA when this LibTorch has it and a GPU is present, else
// the CPU. A CUDA device this build or machine does not have → UsageError naming the option.
torch::Device resolve_device(const std::string& name);

// The batch's tensors on `device` (the same batch when already there).
Batch to_device(const Batch& batch, const torch::Device& device);

}  // namespace nmt
