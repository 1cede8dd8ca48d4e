#include "nmt/kernels/fused_switch.h"

#include <atomic>

namespace nmt::kernels {

namespace {
std::atomic<bool> g_enabled{true};
}  // namespace

void set_fused_training_kernels(bool enabled) { g_enabled = enabled; }
bool fused_training_kernels_enabled() { return g_enabled; }

}  // namespace nmt::kernels
