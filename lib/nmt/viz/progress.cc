#include "nmt/viz/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>

#include <fmt/format.h>

namespace nmt::viz {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<int64_t>(seconds);
  if (s >= 3600) return fmt::format("{}h{:02}m{:02}s", s / 3600, (s / 60) % 60, s % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{:.1f}s", seconds);
}

std::string eta_text(double done, double total, double elapsed_seconds) {
  if (done <= 0 || elapsed_seconds <= 0 || total < done) return "?";
  return format_duration((total - done) * elapsed_seconds / done);
}

bool is_terminal(std::FILE* stream) { return isatty(fileno(stream)) == 1; }

bool ProgressLine::due() const {
  return enabled_ && std::chrono::steady_clock::now() - last_ >= std::chrono::milliseconds(100);
}

void ProgressLine::show(const std::string& text) {
  if (!enabled_) return;
  last_ = std::chrono::steady_clock::now();
  size_t columns = 0;
  winsize ws{};
  if (ioctl(fileno(out_), TIOCGWINSZ, &ws) == 0) columns = ws.ws_col;
  std::string line = text;
  // Cut at a character boundary one short of the width, so the cursor never wraps.
  if (columns > 1 && line.size() > columns - 1) {
    size_t cut = columns - 1;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
    line.resize(cut);
  }
  std::fprintf(out_, "\r\x1b[K%s", line.c_str());
  std::fflush(out_);
  visible_ = true;
}

void ProgressLine::clear() {
  if (!enabled_ || !visible_) return;
  std::fprintf(out_, "\r\x1b[K");
  std::fflush(out_);
  visible_ = false;
}

}  // namespace nmt::viz
