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

// For timings on a GPU: waits for the kernels queued on `device` (nothing on the CPU).
void synchronize(const torch::Device& device);

// Peak GPU memory held by LibTorch's caching allocator since the last reset, in MiB; a negative
// value on the CPU or where nmt was built without LibTorch's CUDA part.
void reset_peak_gpu_memory(const torch::Device& device);
double peak_gpu_mb(const torch::Device& device);

}  // namespace nmt
