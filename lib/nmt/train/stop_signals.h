#pragma once
// SIGINT / SIGTERM ask the training loop to save a checkpoint and stop after the current
// update; a second signal kills at once (the default action is restored by the first).
#include <csignal>

namespace nmt::train {

// Catches SIGINT and SIGTERM for its lifetime (clearing any earlier stop_signal()), then puts
// the previous handlers back.
class SignalScope {
 public:
  SignalScope();
  ~SignalScope();
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  void (*previous_int_)(int) = SIG_DFL;
  void (*previous_term_)(int) = SIG_DFL;
};

// The signal that asked training to stop (SIGINT or SIGTERM), else 0.
int stop_signal();

}  // namespace nmt::train
