#pragma once
// One process-wide switch over nmt's fused training kernels on the CPU (the GRU cell and
// attention scores, nmt/models/fused_recurrent.h; Adam's update, nmt/train/step.h). On by
// default; tests and `nmt bench train --unfused` turn it off to compare with ATen's operators.
namespace nmt::kernels {

void set_fused_training_kernels(bool enabled);
bool fused_training_kernels_enabled();

}  // namespace nmt::kernels
