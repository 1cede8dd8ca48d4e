#include "nmt/viz/heatmap.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/viz/svg.h"

namespace nmt::viz {

AttentionMap attention_from_json(const nlohmann::json& j, const std::string& where) {
  AttentionMap m;
  try {
    m.source = j.at("source").get<std::vector<std::string>>();
    m.target = j.at("target").get<std::vector<std::string>>();
    m.weights = j.at("attention").get<std::vector<std::vector<float>>>();
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(fmt::format("{}: not an attention record ({})", where, e.what()));
  }
  if (m.weights.size() != m.target.size())
    throw RuntimeError(fmt::format("{}: {} attention rows for {} target tokens", where, m.weights.size(), m.target.size()));
  for (const auto& row : m.weights)
    if (row.size() != m.source.size())
      throw RuntimeError(fmt::format("{}: an attention row has {} columns for {} source tokens", where, row.size(),
                                     m.source.size()));
  return m;
}

namespace {
// Characters, not bytes: UTF-8 continuation bytes (10xxxxxx) are not counted.
size_t display_width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}
// Approximate rendered width of a label in pixels at font-size 12 (no font metrics here).
double label_width(const std::string& s) { return 7.2 * static_cast<double>(display_width(s)); }
}  // namespace

std::string attention_svg(const AttentionMap& map, const std::string& title) {
  const double cell = 26;
  double src_label = 30, tgt_label = 30;
  for (const auto& s : map.source) src_label = std::max(src_label, label_width(s));
  for (const auto& t : map.target) tgt_label = std::max(tgt_label, label_width(t));
  const double left = tgt_label + 20, top = src_label + 44;
  const double grid_w = cell * map.source.size(), grid_h = cell * map.target.size();
  const double scale_x = left + grid_w + 24;
  const double width = std::max(scale_x + 70, left + 8.0 * static_cast<double>(display_width(title)) + 20), height = std::max(top + grid_h + 30, top + 200);
  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="DejaVu Sans, Arial, sans-serif">)",
      compact_number(width), compact_number(height));
  svg += fmt::format(R"(<rect width="{}" height="{}" fill="#ffffff"/>)", compact_number(width), compact_number(height));
  svg += fmt::format(R"(<text x="{}" y="20" font-size="14" font-weight="bold">{}</text>)", compact_number(left),
                     xml_escape(title));
  for (size_t c = 0; c < map.source.size(); ++c) {
    const double x = left + cell * c + cell / 2 + 4, y = top - 6;
    svg += fmt::format(
        R"svg(<text class="source" x="{0}" y="{1}" font-size="12" transform="rotate(-60 {0} {1})">{2}</text>)svg",
        compact_number(x), compact_number(y), xml_escape(map.source[c]));
  }
  for (size_t r = 0; r < map.target.size(); ++r) {
    svg += fmt::format(R"(<text class="target" x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)",
                       compact_number(left - 6), compact_number(top + cell * r + cell / 2 + 4), xml_escape(map.target[r]));
    for (size_t c = 0; c < map.source.size(); ++c) {
      const double w = map.weights[r][c];
      svg += fmt::format(R"(<rect class="cell" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{} → {}: {}</title></rect>)",
                         compact_number(left + cell * c), compact_number(top + cell * r), compact_number(cell),
                         compact_number(cell), sequential_color(w), xml_escape(map.target[r]), xml_escape(map.source[c]),
                         compact_number(w, 3));
    }
  }
  svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#444444"/>)", compact_number(left),
                     compact_number(top), compact_number(grid_w), compact_number(grid_h));
  // Colour scale: 0 at the bottom, 1 at the top.
  const double scale_h = std::max(grid_h, 160.0), steps = 40;
  for (int i = 0; i < steps; ++i) {
    const double v0 = i / steps;
    svg += fmt::format(R"(<rect x="{}" y="{}" width="14" height="{}" fill="{}"/>)", compact_number(scale_x),
                       compact_number(top + scale_h - scale_h * (i + 1) / steps), compact_number(scale_h / steps + 0.5),
                       sequential_color(v0 + 0.5 / steps));
  }
  svg += fmt::format(R"(<rect x="{}" y="{}" width="14" height="{}" fill="none" stroke="#444444"/>)", compact_number(scale_x),
                     compact_number(top), compact_number(scale_h));
  for (double v : {0.0, 0.25, 0.5, 0.75, 1.0})
    svg += fmt::format(R"(<text class="scale" x="{}" y="{}" font-size="11">{}</text>)", compact_number(scale_x + 19),
                       compact_number(top + scale_h - scale_h * v + 4), compact_number(v, 2));
  svg += "</svg>\n";
  return svg;
}

std::string attention_text(const AttentionMap& map, bool color) {
  std::string out = "source:";
  for (size_t c = 0; c < map.source.size(); ++c) out += fmt::format(" {}={}", c, map.source[c]);
  out += "\n";
  size_t tgt_width = 6;
  for (const auto& t : map.target) tgt_width = std::max(tgt_width, display_width(t));
  out += std::string(tgt_width + 1, ' ');
  for (size_t c = 0; c < map.source.size(); ++c) out += fmt::format("{:>3}", c);
  out += "\n";
  for (size_t r = 0; r < map.target.size(); ++r) {
    out += map.target[r] + std::string(tgt_width + 1 - display_width(map.target[r]), ' ');
    for (size_t c = 0; c < map.source.size(); ++c) {
      const double w = std::clamp<double>(map.weights[r][c], 0.0, 1.0);
      const int tenths = std::min(9, static_cast<int>(w * 10));
      const std::string digits = w < 0.05 ? "  " : fmt::format(" {}", tenths);
      if (color) {
        const int fg = w > 0.5 ? 255 : 16;
        out += fmt::format("\x1b[48;5;{};38;5;{}m{} \x1b[0m", sequential_color_256(w), fg, digits);
      } else {
        out += digits + " ";
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace nmt::viz
