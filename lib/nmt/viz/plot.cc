#include "nmt/viz/plot.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/json_read.h"
#include "nmt/viz/svg.h"

namespace nmt::viz {

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0.0, 1.0};
  if (hi < lo) std::swap(lo, hi);
  if (hi - lo < 1e-12) {
    const double pad = std::max(std::abs(lo) * 0.1, 1.0);
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step) * step;
  for (int k = 0; k < 50; ++k) {
    const double t = first + k * step;  // multiplied, not accumulated: no drift
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
    if (t >= hi - step * 1e-9 && ticks.size() >= 2) break;
  }
  return ticks;
}

namespace {

std::string tick_label(double v, double step) {
  int decimals = 0;
  while (decimals < 6 && std::abs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) > 1e-6)
    ++decimals;
  if (std::abs(v) >= 10000 && decimals == 0) return compact_number(v / 1000, 1) + "k";
  return compact_number(v, decimals);
}

void render_panel(std::string& svg, const Panel& panel, double ox, double oy, double width, double height,
                  size_t color_offset) {
  const double left = 62, right = 16, top = 30, bottom = 46;
  const double pw = width - left - right, ph = height - top - bottom;
  const double x0 = ox + left, y0 = oy + top;
  svg += fmt::format(R"(<g class="panel"><text x="{}" y="{}" text-anchor="middle" font-size="14" font-weight="bold">{}</text>)",
                     compact_number(ox + left + pw / 2), compact_number(oy + 18), xml_escape(panel.title));
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  for (const auto& s : panel.series)
    for (const auto& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      xmin = std::min(xmin, p.x), xmax = std::max(xmax, p.x);
      ymin = std::min(ymin, p.y), ymax = std::max(ymax, p.y);
    }
  svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="#ffffff" stroke="#444444"/>)", compact_number(x0),
                     compact_number(y0), compact_number(pw), compact_number(ph));
  if (!std::isfinite(xmin)) {
    svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="13" fill="#777777">no data</text></g>)",
                       compact_number(x0 + pw / 2), compact_number(y0 + ph / 2));
    return;
  }
  const auto xt = nice_ticks(xmin, xmax, 5), yt = nice_ticks(ymin, ymax, 5);
  const double xa = xt.front(), xb = xt.back(), ya = yt.front(), yb = yt.back();
  auto sx = [&](double x) { return x0 + (x - xa) / (xb - xa) * pw; };
  auto sy = [&](double y) { return y0 + ph - (y - ya) / (yb - ya) * ph; };
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1, ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
  for (double t : xt) {
    const std::string x = compact_number(sx(t));
    svg += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#e5e5e5"/>)", x, compact_number(y0),
                       compact_number(y0 + ph));
    svg += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#444444"/>)", x, compact_number(y0 + ph),
                       compact_number(y0 + ph + 5));
    svg += fmt::format(R"(<text class="xtick" x="{}" y="{}" text-anchor="middle" font-size="11">{}</text>)", x,
                       compact_number(y0 + ph + 18), tick_label(t, xstep));
  }
  for (double t : yt) {
    const std::string y = compact_number(sy(t));
    svg += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#e5e5e5"/>)", compact_number(x0), y,
                       compact_number(x0 + pw));
    svg += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#444444"/>)", compact_number(x0 - 5), y,
                       compact_number(x0));
    svg += fmt::format(R"(<text class="ytick" x="{}" y="{}" text-anchor="end" font-size="11">{}</text>)",
                       compact_number(x0 - 8), compact_number(sy(t) + 4), tick_label(t, ystep));
  }
  svg += fmt::format(R"(<text class="xlabel" x="{}" y="{}" text-anchor="middle" font-size="12">{}</text>)",
                     compact_number(x0 + pw / 2), compact_number(y0 + ph + 38), xml_escape(panel.x_label));
  svg += fmt::format(
      R"svg(<text class="ylabel" x="{0}" y="{1}" text-anchor="middle" font-size="12" transform="rotate(-90 {0} {1})">{2}</text>)svg",
      compact_number(ox + 16), compact_number(y0 + ph / 2), xml_escape(panel.y_label));
  for (size_t i = 0; i < panel.series.size(); ++i) {
    const Series& s = panel.series[i];
    const std::string color = s.color.empty() ? series_color(i + color_offset) : s.color;
    std::string pts;
    for (const auto& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      pts += fmt::format("{},{} ", compact_number(sx(p.x)), compact_number(sy(p.y)));
    }
    if (pts.empty()) continue;
    pts.pop_back();
    svg += fmt::format(R"(<polyline class="series" data-label="{}" points="{}" fill="none" stroke="{}" stroke-width="1.8"{}/>)",
                       xml_escape(s.label), pts, color, s.dashed ? R"( stroke-dasharray="6 3")" : "");
    if (s.markers)
      for (const auto& p : s.points)
        if (std::isfinite(p.x) && std::isfinite(p.y))
          svg += fmt::format(R"(<circle cx="{}" cy="{}" r="2.5" fill="{}"/>)", compact_number(sx(p.x)), compact_number(sy(p.y)),
                             color);
  }
  // Legend inside the plot area, in the corner that hides the fewest data points.
  double lw = 0;
  for (const auto& s : panel.series) lw = std::max(lw, 7.0 * static_cast<double>(s.label.size()) + 34);
  const double lh = 16.0 * panel.series.size() + 6;
  double lx = x0 + pw - lw - 6, ly = y0 + 8;
  size_t fewest = SIZE_MAX;
  for (auto [cx, cy] : {std::pair{x0 + pw - lw - 6, y0 + 8}, std::pair{x0 + pw - lw - 6, y0 + ph - lh - 8},
                        std::pair{x0 + 6, y0 + 8}, std::pair{x0 + 6, y0 + ph - lh - 8}}) {
    size_t hidden = 0;
    for (const auto& s : panel.series)
      for (const auto& p : s.points)
        if (std::isfinite(p.x) && std::isfinite(p.y) && sx(p.x) >= cx && sx(p.x) <= cx + lw && sy(p.y) >= cy &&
            sy(p.y) <= cy + lh)
          ++hidden;
    if (hidden < fewest) fewest = hidden, lx = cx, ly = cy;
  }
  if (!panel.series.empty())
    svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="#ffffff" fill-opacity="0.85" stroke="#cccccc"/>)",
                       compact_number(lx), compact_number(ly), compact_number(lw), compact_number(lh));
  for (size_t i = 0; i < panel.series.size(); ++i) {
    const Series& s = panel.series[i];
    const std::string color = s.color.empty() ? series_color(i + color_offset) : s.color;
    const double y = ly + 14 + 16.0 * i;
    svg += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2"{}/>)", compact_number(lx + 6),
                       compact_number(y - 4), compact_number(lx + 26), compact_number(y - 4), color,
                       s.dashed ? R"( stroke-dasharray="6 3")" : "");
    svg += fmt::format(R"(<text class="legend" x="{}" y="{}" font-size="11">{}</text>)", compact_number(lx + 30),
                       compact_number(y), xml_escape(s.label));
  }
  svg += "</g>";
}

}  // namespace

std::string render_panels_svg(const std::vector<Panel>& panels, int panel_width, int panel_height) {
  const int n = std::max<int>(1, static_cast<int>(panels.size()));
  const int width = panel_width * n, height = panel_height;
  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="DejaVu Sans, Arial, sans-serif">)",
      width, height);
  svg += fmt::format(R"(<rect width="{}" height="{}" fill="#ffffff"/>)", width, height);
  for (size_t i = 0; i < panels.size(); ++i)
    render_panel(svg, panels[i], static_cast<double>(i) * panel_width, 0, panel_width, panel_height, 0);
  svg += "</svg>\n";
  return svg;
}

std::vector<std::pair<size_t, nlohmann::json>> parse_json_lines(const std::string& text, const std::string& path) {
  std::vector<std::pair<size_t, nlohmann::json>> out;
  const auto lines = split_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(lines[i], nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) throw RuntimeError(fmt::format("{}:{}: not a JSON object", path, i + 1));
    out.emplace_back(i + 1, std::move(j));
  }
  return out;
}

std::vector<std::pair<size_t, nlohmann::json>> read_json_lines(const std::string& path) {
  return parse_json_lines(read_file(path), path);
}

void parse_run_metrics(const std::string& text, const std::string& path, RunMetrics& run) {
  for (auto& [line_no, j] : parse_json_lines(text, path)) {
    try {
      for (const char* key : {"step", "epoch"})
        if (j.contains(key)) (void)json_read::integer(j, key, 0, std::numeric_limits<int64_t>::max());
      for (const char* key : {"wall_time", "train_loss", "train_nll", "lr", "tokens_per_s", "val_loss", "val_ppl", "val_bleu"})
        if (j.contains(key)) (void)json_read::number(j, key);
      const std::string event = j.contains("event") ? json_read::string(j, "event") : "";
      if (event == "train") run.train.push_back(std::move(j));
      else if (event == "valid") run.valid.push_back(std::move(j));
    } catch (const RuntimeError& e) {
      throw RuntimeError(fmt::format("{}:{}: {}", path, line_no, e.what()));
    }
  }
}

RunMetrics read_run_metrics(const std::string& dir) {
  namespace fs = std::filesystem;
  RunMetrics run;
  run.dir = dir;
  fs::path p(dir);
  run.name = (p.has_filename() ? p.filename() : p.parent_path().filename()).string();
  const std::string file = (p / "metrics.jsonl").string();
  if (const std::string problem = directory_problem(dir); !problem.empty())
    throw RuntimeError(fmt::format("{}: {} (a run directory is nmt train's --out)", dir, problem));
  // Must be a regular file: a FIFO would block the reader forever.
  if (fs::exists(file) && !fs::is_regular_file(file)) throw RuntimeError(fmt::format("{}: not a regular file", file));
  parse_run_metrics(read_file(file), file, run);
  return run;
}

std::vector<Panel> training_curves(const std::vector<RunMetrics>& runs, XAxis x) {
  const bool time = x == XAxis::kTime;
  const std::string x_label = time ? "wall time (min)" : "update step";
  Panel loss{"Loss", x_label, "cross-entropy (nats/token)", {}};
  Panel bleu{"Validation BLEU", x_label, "BLEU", {}};
  auto xval = [&](const nlohmann::json& j) {
    return time ? j.value("wall_time", 0.0) / 60.0 : static_cast<double>(j.value("step", 0));
  };
  auto number = [](const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
  };
  const bool several = runs.size() > 1;
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto& run = runs[r];
    const std::string color = series_color(r);
    const std::string prefix = several ? run.name + " " : "";
    Series train{prefix + "train", {}, color, false, false};
    Series valid{prefix + "valid", {}, color, true, true};
    Series b{several ? run.name : "valid BLEU", {}, color, false, true};
    // Cross-entropy without label smoothing, so training and validation curves compare.
    for (const auto& j : run.train)
      train.points.push_back({xval(j), number(j, j.contains("train_nll") ? "train_nll" : "train_loss")});
    for (const auto& j : run.valid) {
      valid.points.push_back({xval(j), number(j, "val_loss")});
      if (j.contains("val_bleu")) b.points.push_back({xval(j), number(j, "val_bleu")});
    }
    loss.series.push_back(std::move(train));
    loss.series.push_back(std::move(valid));
    bleu.series.push_back(std::move(b));
  }
  return {loss, bleu};
}

}  // namespace nmt::viz
