#include "nmt/viz/svg.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

namespace nmt::viz {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') break;
        out += c;
    }
  }
  return out;
}

std::string compact_number(double value, int decimals) {
  if (!std::isfinite(value)) return "0";
  std::string s = fmt::format("{:.{}f}", value, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

namespace {
struct Rgb {
  double r, g, b;
};
// Anchors of a white → blue → navy ramp (ColorBrewer "Blues", extended).
constexpr std::array<Rgb, 6> kRamp{{{255, 255, 255}, {198, 219, 239}, {107, 174, 214}, {33, 113, 181}, {8, 69, 148}, {8, 29, 88}}};

Rgb ramp(double v) {
  if (!std::isfinite(v)) v = 0;
  v = std::clamp(v, 0.0, 1.0) * (kRamp.size() - 1);
  const size_t i = std::min(static_cast<size_t>(v), kRamp.size() - 2);
  const double t = v - i;
  const Rgb& a = kRamp[i];
  const Rgb& b = kRamp[i + 1];
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}
}  // namespace

std::string sequential_color(double v) {
  const Rgb c = ramp(v);
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(c.r)), static_cast<int>(std::lround(c.g)),
                     static_cast<int>(std::lround(c.b)));
}

int sequential_color_256(double v) {
  // Nearest entry of the 6x6x6 colour cube (indices 16..231).
  const Rgb c = ramp(v);
  static constexpr int kLevels[6] = {0, 95, 135, 175, 215, 255};
  auto nearest = [](double x) {
    int best = 0;
    for (int i = 1; i < 6; ++i)
      if (std::abs(kLevels[i] - x) < std::abs(kLevels[best] - x)) best = i;
    return best;
  };
  return 16 + 36 * nearest(c.r) + 6 * nearest(c.g) + nearest(c.b);
}

std::string series_color(size_t index) {
  static constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                            "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kColors[index % 10];
}

}  // namespace nmt::viz
