#pragma once
// A live one-line progress display for terminals (training batches, translated sentences).
// Off when the stream is not a terminal or the user asked for --quiet: then callers print
// plain log lines instead, so redirected logs never fill with carriage returns.
#include <chrono>
#include <cstdio>
#include <string>

namespace nmt::viz {

// "1h02m03s", "4m05s", "6.2s".
std::string format_duration(double seconds);

// Time left at the current rate, or "?" before there is a rate.
std::string eta_text(double done, double total, double elapsed_seconds);

bool is_terminal(std::FILE* stream);

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled, std::FILE* out = stderr) : enabled_(enabled), out_(out) {}
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  // True when a redraw is due (at most ten per second), so callers compute the text only then.
  bool due() const;
  // Redraws the line in place (cut to the terminal width).
  void show(const std::string& text);
  // Erases the line, e.g. before printing a permanent log line.
  void clear();

 private:
  bool enabled_;
  std::FILE* out_;
  bool visible_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace nmt::viz
