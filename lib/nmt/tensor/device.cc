#include "nmt/tensor/device.h"

#include <fmt/format.h>
#ifdef NMT_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/cuda.h>
#endif

#include "nmt/util/error.h"

namespace nmt {

torch::Device resolve_device(const std::string& name) {
  if (name.empty()) return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name != "cuda" && name.rfind("cuda:", 0) != 0)
    throw UsageError(fmt::format("--device '{}': expected cpu, cuda or cuda:N", name));
  int index = 0;
  if (name.size() > 5) {
    const std::string digits = name.substr(5);
    if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError(fmt::format("--device '{}': expected cpu, cuda or cuda:N", name));
    index = std::stoi(digits);
  }
  if (!torch::cuda::is_available())
    throw UsageError(fmt::format("--device {}: this LibTorch was built without CUDA or no GPU is present", name));
  const int count = static_cast<int>(torch::cuda::device_count());
  if (index >= count) throw UsageError(fmt::format("--device {}: only {} GPU(s) present", name, count));
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

Batch to_device(const Batch& batch, const torch::Device& device) {
  if (!batch.src.defined() || batch.src.device() == device) return batch;
  Batch moved = batch;
  const bool async = device.is_cuda();  // host→GPU copies may overlap with the previous step
  moved.src = batch.src.to(device, async);
  moved.src_mask = batch.src_mask.to(device, async);
  if (batch.tgt_in.defined()) moved.tgt_in = batch.tgt_in.to(device, async);
  if (batch.tgt_out.defined()) moved.tgt_out = batch.tgt_out.to(device, async);
  return moved;
}

void synchronize(const torch::Device& device) {
#ifdef NMT_WITH_CUDA
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
#else
  (void)device;
#endif
}

void reset_peak_gpu_memory(const torch::Device& device) {
#ifdef NMT_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index() < 0 ? 0 : device.index());
#else
  (void)device;
#endif
}

double peak_gpu_mb(const torch::Device& device) {
#ifdef NMT_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index() < 0 ? 0 : device.index());
    return static_cast<double>(stats.allocated_bytes[0].peak) / (1 << 20);  // [0]: all pools together
  }
#else
  (void)device;
#endif
  return -1;
}

}  // namespace nmt
