#include "nmt/train/stop_signals.h"

namespace nmt::train {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) {
  g_stop_signal = sig;
  std::signal(sig, SIG_DFL);
}

}  // namespace

SignalScope::SignalScope() {
  g_stop_signal = 0;
  previous_int_ = std::signal(SIGINT, on_stop_signal);
  previous_term_ = std::signal(SIGTERM, on_stop_signal);
}

SignalScope::~SignalScope() {
  std::signal(SIGINT, previous_int_);
  std::signal(SIGTERM, previous_term_);
}

int stop_signal() { return static_cast<int>(g_stop_signal); }

}  // namespace nmt::train
