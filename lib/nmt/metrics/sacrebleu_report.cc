#include "nmt/metrics/sacrebleu_report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "nmt/text/unicode.h"
#include "nmt/util/error.h"

namespace nmt::metrics {
namespace {

std::string fixed(double v, int width) { return fmt::format("{:.{}f}", v, width); }

// The columns of a text cell (tabulate counts code points; every character here is narrow).
size_t columns(const std::string& s) { return text::decode_utf8(s).size(); }

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t nl = s.find('\n', start);
    out.push_back(s.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

// Python's str.format with "^" (extra space on the right) or ">".
std::string pad(const std::string& s, size_t width, bool right) {
  const size_t len = columns(s);
  if (len >= width) return s;
  const size_t total = width - len;
  if (right) return std::string(total, ' ') + s;
  const size_t left = total / 2;
  return std::string(left, ' ') + s + std::string(total - left, ' ');
}

std::string repeat(const std::string& piece, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += piece;
  return out;
}

// One metric as configured, with the name the CLI sorts it by (sacreBLEU's METRICS keys).
struct MetricEntry {
  std::string key;  // "BLEU", "CHRF", "TER"
  std::unique_ptr<ResamplingMetric> metric;
};

std::vector<MetricEntry> make_metrics(const ReportOptions& o, const std::vector<std::vector<std::string>>& refs) {
  std::vector<MetricEntry> out;
  for (const std::string& m : o.metrics) {
    std::string key;
    std::unique_ptr<ResamplingMetric> metric;
    if (m == "bleu") key = "BLEU", metric = make_bleu_metric(BleuScorer(o.bleu), refs);
    else if (m == "chrf") key = "CHRF", metric = make_chrf_metric(ChrfScorer(o.chrf), refs);
    else if (m == "ter") key = "TER", metric = make_ter_metric(TerScorer(o.ter), refs);
    else throw UsageError(fmt::format("--metrics: unknown metric '{}' (expected bleu, chrf, ter)", m));
    // A metric named twice is one dictionary entry in sacreBLEU.
    if (std::none_of(out.begin(), out.end(), [&](const MetricEntry& e) { return e.key == key; }))
      out.push_back(MetricEntry{key, std::move(metric)});
  }
  return out;
}

void sort_by_key(std::vector<MetricEntry>& metrics) {
  std::stable_sort(metrics.begin(), metrics.end(), [](const MetricEntry& a, const MetricEntry& b) { return a.key < b.key; });
}

std::string display_signature(const std::string& sig, const std::string& name, bool shorten) {
  return shorten ? short_signature(sig, name) : sig;
}

// Score.format(width, score_only, signature, is_json).
std::string format_score(const std::string& name, double score, const std::optional<ConfidenceInterval>& ci,
                         const std::string& verbose, const std::string& signature, const ReportOptions& o) {
  std::string sc = fixed(score, o.width);
  std::string confidence;
  const bool show_ci = ci && ci->mean.value > 0;  // sacreBLEU's `if self._mean > 0`
  if (show_ci) {
    confidence = fmt::format("μ = {} ± {}", fixed(ci->mean.value, o.width), fixed(ci->ci.value, o.width));
    sc += " (" + confidence + ")";
  }
  if (o.score_only) return sc;  // even in JSON (its docstring says otherwise; its code does this)
  if (!o.json) {
    std::string line = fmt::format("{}|{} = {}", name, signature, sc);
    if (!verbose.empty()) line += " " + verbose;
    return line;
  }
  // json.dumps(d, indent=1, ensure_ascii=False); rounded numbers go through float().
  std::vector<std::pair<std::string, std::string>> d;
  d.emplace_back("name", python_json_string(name, false));
  d.emplace_back("score", python_float_repr(std::stod(fixed(score, o.width))));
  d.emplace_back("signature", python_json_string(signature, false));
  if (show_ci) {
    d.emplace_back("confidence_mean", python_float_repr(std::stod(fixed(ci->mean.value, o.width))));
    d.emplace_back("confidence_var", python_float_repr(std::stod(fixed(ci->ci.value, o.width))));
    d.emplace_back("confidence", python_json_string(confidence, false));
  }
  if (!verbose.empty()) d.emplace_back("verbose_score", python_json_string(verbose, false));
  size_t start = 0;
  while (start <= signature.size()) {
    size_t bar = signature.find('|', start);
    const std::string param = signature.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    const size_t colon = param.find(':');
    d.emplace_back(param.substr(0, colon), python_json_string(param.substr(colon + 1), false));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  std::string out = "{";
  for (size_t i = 0; i < d.size(); ++i) {
    out += i ? ",\n " : "\n ";
    out += python_json_string(d[i].first, false) + ": " + d[i].second;
  }
  return out + "\n}";
}

// utils.print_single_results.
std::string single_results(const std::vector<std::string>& results, const ReportOptions& o) {
  if (o.json) {
    if (results.size() == 1) return results[0] + "\n";
    std::string out = "[\n";
    for (size_t i = 0; i < results.size(); ++i) out += (i ? ",\n" : "") + results[i];
    return out + "\n]\n";
  }
  if (results.size() == 1) return results[0] + "\n";
  std::string out;
  std::vector<std::pair<size_t, std::string>> aligned;
  for (const std::string& line : results) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) out += line + "\n";  // score-only lines are printed as they come
    else aligned.emplace_back(eq - 1, line);
  }
  size_t w = 0;
  for (const auto& [len, line] : aligned) w = std::max(w, columns(line.substr(0, len)));
  for (const auto& [len, line] : aligned) out += pad(line.substr(0, len), w, true) + line.substr(len) + "\n";
  return out;
}

std::string signatures_block(const std::vector<std::pair<std::string, std::string>>& sigs) {
  std::string out = "-----------------\nMetric signatures\n-----------------\n";
  for (const auto& [name, sig] : sigs) out += fmt::format(" - {:<10} {}\n", name, sig);
  return out;
}

std::string paired_explanation(const ReportOptions& o, const std::string& baseline_name) {
  const bool bs = o.paired == PairedTest::kBootstrap;
  const std::string msg = fmt::format("Paired {} test with {} {}", bs ? "bootstrap resampling" : "approximate randomization",
                                      bs ? o.paired_bs_n : o.paired_ar_n, bs ? "resampling trials" : "trials");
  const std::string rule(columns(msg), '-');
  std::string out = rule + "\n" + msg + "\n" + rule + "\n";
  out += fmt::format(" - Each system is pairwise compared to {}.\n", baseline_name);
  out += bs ? "   Actual system score / bootstrap estimated true mean / 95% CI are provided for each metric.\n"
            : "   Actual system score is provided for each metric.\n";
  out +=
      "\n"
      " - Null hypothesis: the system and the baseline translations are essentially\n"
      "   generated by the same underlying process. For a given system and the baseline,\n"
      "   the p-value is roughly the probability of the absolute score difference (delta)\n"
      "   or higher occurring due to chance, under the assumption that the null hypothesis is correct.\n"
      "\n"
      " - Assuming a significance threshold of 0.05, the null hypothesis can be rejected\n"
      "   for p-values < 0.05 (marked with \"*\"). This means that the delta is unlikely to be attributed\n"
      "   to chance, hence the system is significantly \"different\" than the baseline.\n"
      "   Otherwise, the p-values are highlighted in red.\n"
      "\n"
      " - NOTE: Significance does not tell whether a system is \"better\" than the baseline but rather\n"
      "   emphasizes the \"difference\" of the systems in terms of the replicability of the delta.\n"
      "\n";
  return out;
}

std::string json_number_or_null(const std::optional<double>& v) { return v ? python_float_repr(*v) : "null"; }

// json.dumps(list_of_dicts, indent=4) with ensure_ascii; values already serialised.
using JsonObject = std::vector<std::pair<std::string, std::string>>;
std::string json_list(const std::vector<JsonObject>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += i ? ",\n    {" : "\n    {";
    for (size_t j = 0; j < items[i].size(); ++j) {
      out += j ? ",\n        " : "\n        ";
      out += python_json_string(items[i][j].first, true) + ": " + items[i][j].second;
    }
    out += "\n    }";
  }
  return out + "\n]\n";
}

std::string single_system(const NamedSystem& system, std::vector<MetricEntry> metrics, const ReportOptions& o) {
  sort_by_key(metrics);
  std::vector<std::string> results;
  for (const MetricEntry& m : metrics) {
    const SegmentStats stats = m.metric->statistics(system.lines);
    const std::vector<double> sum = sum_statistics(stats);
    std::optional<ConfidenceInterval> ci;
    std::string sig = m.metric->signature();
    if (o.confidence) {
      ci = bootstrap_confidence(*m.metric, stats, o.confidence_n, o.seed);
      sig = with_test_fields(sig, fmt::format("bs:{}|seed:{}", o.confidence_n, o.seed.label()));
    }
    sig = display_signature(sig, m.metric->name(), o.short_signature && !o.json);
    results.push_back(format_score(m.metric->name(), m.metric->score(sum.data()), ci, m.metric->verbose(sum.data()), sig, o));
  }
  return single_results(results, o);
}

std::string table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                  const ReportOptions& o) {
  return o.latex ? latex_booktabs(headers, rows) : fancy_grid(headers, rows);
}

std::string several_systems(const std::vector<NamedSystem>& systems, std::vector<MetricEntry> metrics,
                            const ReportOptions& o) {
  sort_by_key(metrics);
  std::vector<std::string> headers{"System"};
  std::vector<std::pair<std::string, std::string>> sigs;
  for (const MetricEntry& m : metrics) {
    headers.push_back(m.metric->name());
    sigs.emplace_back(m.metric->name(), display_signature(m.metric->signature(), m.metric->name(), o.short_signature));
  }
  std::vector<std::vector<std::string>> rows;
  for (const NamedSystem& s : systems) {
    std::vector<std::string> row{s.name};
    for (const MetricEntry& m : metrics) {
      const std::vector<double> sum = sum_statistics(m.metric->statistics(s.lines));
      row.push_back(fixed(m.metric->score(sum.data()), o.width));
    }
    rows.push_back(std::move(row));
  }
  if (o.json) {
    std::vector<JsonObject> items;
    for (const auto& row : rows) {
      JsonObject obj{{"system", python_json_string(row[0], true)}};
      for (size_t j = 1; j < row.size(); ++j) obj.emplace_back(headers[j], python_json_string(row[j], true));
      items.push_back(std::move(obj));
    }
    return json_list(items);
  }
  return table(headers, rows, o) + "\n\n" + signatures_block(sigs);
}

std::string paired_systems(std::vector<NamedSystem> systems, const std::vector<MetricEntry>& metrics,
                           const ReportOptions& o) {
  const bool bs = o.paired == PairedTest::kBootstrap;
  const size_t n = bs ? (o.paired_bs_n ? o.paired_bs_n : 1000) : (o.paired_ar_n ? o.paired_ar_n : 10000);
  systems[0].name = o.unnamed_baseline ? "Baseline" : "Baseline: " + systems[0].name;
  std::vector<std::string> headers{"System"};
  std::vector<std::pair<std::string, std::string>> sigs;
  std::vector<std::vector<PairedResult>> columns_of_results;
  for (const MetricEntry& m : metrics) {
    std::vector<SegmentStats> stats;
    for (const NamedSystem& s : systems) stats.push_back(m.metric->statistics(s.lines));
    columns_of_results.push_back(bs ? paired_bootstrap(*m.metric, stats, n, o.seed)
                                    : paired_approximate_randomization(*m.metric, stats, n, o.seed));
    const std::string fields = fmt::format("{}:{}|seed:{}", bs ? "bs" : "ar", n, o.seed.label());
    sigs.emplace_back(m.metric->name(),
                      display_signature(with_test_fields(m.metric->signature(), fields), m.metric->name(), o.short_signature));
  }
  if (o.json) {
    // Result.__dict__; sacreBLEU's own json.dumps fails on float32 means (chrF, TER): nmt
    // writes their values.
    std::vector<JsonObject> items;
    for (size_t i = 0; i < systems.size(); ++i) {
      JsonObject obj{{"system", python_json_string(systems[i].name, true)}};
      for (size_t k = 0; k < metrics.size(); ++k) {
        const PairedResult& r = columns_of_results[k][i];
        const auto value = [](const std::optional<PyNumber>& p) {
          return p ? std::optional<double>(p->value) : std::nullopt;
        };
        obj.emplace_back(metrics[k].metric->name(),
                         fmt::format("{{\n            \"score\": {},\n            \"p_value\": {},\n            \"mean\": "
                                     "{},\n            \"ci\": {}\n        }}",
                                     python_float_repr(r.score), json_number_or_null(r.p_value),
                                     json_number_or_null(value(r.mean)), json_number_or_null(value(r.ci))));
      }
      items.push_back(std::move(obj));
    }
    return json_list(items);
  }
  // utils._format_score_lines (multi-line cells) then the table.
  std::vector<std::vector<std::string>> rows(systems.size());
  bool is_bootstrap = false;
  for (size_t i = 0; i < systems.size(); ++i) rows[i].push_back(systems[i].name);
  for (size_t k = 0; k < metrics.size(); ++k) {
    for (size_t i = 0; i < systems.size(); ++i) {
      const PairedResult& r = columns_of_results[k][i];
      std::string cell = fixed(r.score, o.width);
      if (r.mean) {
        is_bootstrap = true;
        cell += fmt::format(" ({} ± {})", fixed(r.mean->value, o.width), fixed(r.ci->value, o.width));
      }
      // One line per cell in LaTeX (utils._format_score_lines' multiline=False).
      if (r.p_value)
        cell += fmt::format("{}(p = {:.4f}){}", o.latex ? " " : "\n", *r.p_value, *r.p_value > 0.05 ? "" : "*");
      rows[i].push_back(cell);
    }
    headers.push_back(metrics[k].metric->name() + (is_bootstrap ? " (μ ± 95% CI)" : ""));
  }
  return table(headers, rows, o) + "\n\n" + paired_explanation(o, systems[0].name) + signatures_block(sigs);
}

}  // namespace

std::string with_test_fields(const std::string& signature, const std::string& fields) {
  const size_t bar = signature.find('|');
  if (bar == std::string::npos) return signature + "|" + fields;
  return signature.substr(0, bar + 1) + fields + signature.substr(bar);
}

std::string short_signature(const std::string& signature, const std::string& metric) {
  // Signature._abbr plus each metric's own additions.
  std::map<std::string, std::string> abbr{{"version", "v"}, {"nrefs", "#"}, {"test", "t"},  {"lang", "l"},
                                          {"subset", "S"},  {"origlang", "o"}, {"bs", "bs"}, {"ar", "ar"},
                                          {"seed", "rs"}};
  if (metric == "BLEU") abbr.insert({{"case", "c"}, {"eff", "e"}, {"tok", "tok"}, {"smooth", "s"}});
  else if (metric == "TER") abbr.insert({{"case", "c"}, {"tok", "t"}, {"norm", "nr"}, {"punct", "pn"}, {"asian", "as"}});
  else abbr.insert({{"case", "c"}, {"eff", "e"}, {"nc", "nc"}, {"nw", "nw"}, {"space", "s"}});
  std::string out;
  size_t start = 0;
  while (start <= signature.size()) {
    size_t bar = signature.find('|', start);
    const std::string param = signature.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    const size_t colon = param.find(':');
    const std::string key = param.substr(0, colon);
    auto it = abbr.find(key);
    if (!out.empty()) out += '|';
    out += (it == abbr.end() ? key : it->second) + param.substr(colon);
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return out;
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "NaN";  // json.dumps' spelling
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's layout: fixed for 1e-4 <= |x| < 1e16.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  const size_t e = sci.find('e');
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exponent) + 1) + "." + digits.substr(static_cast<size_t>(exponent) + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  return negative ? "-" + out : out;
}

std::string python_json_string(const std::string& utf8, bool ensure_ascii) {
  std::string out = "\"";
  for (char32_t c : text::decode_utf8(utf8)) {
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20 || (ensure_ascii && c > 0x7E)) {
      if (c > 0xFFFF) {  // a surrogate pair, as Python writes it
        const char32_t v = c - 0x10000;
        out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      } else {
        out += fmt::format("\\u{:04x}", static_cast<uint32_t>(c));
      }
      continue;
    }
    text::append_utf8(out, c);
  }
  return out + "\"";
}

std::string fancy_grid(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  // Column width: the widest line of the column, at least the header plus tabulate's
  // MIN_PADDING of 2.
  const size_t ncols = headers.size();
  std::vector<size_t> width(ncols);
  for (size_t c = 0; c < ncols; ++c) {
    width[c] = columns(headers[c]) + 2;
    for (const auto& row : rows)
      for (const std::string& line : split_lines(row[c])) width[c] = std::max(width[c], columns(line));
  }
  const auto rule = [&](const char* left, const char* fill, const char* mid, const char* right) {
    std::string out = left;
    for (size_t c = 0; c < ncols; ++c) out += (c ? mid : "") + repeat(fill, width[c] + 2);
    return out + right + "\n";
  };
  const auto row_lines = [&](const std::vector<std::string>& cells) {
    std::vector<std::vector<std::string>> lines;
    size_t height = 1;
    for (const std::string& cell : cells) {
      lines.push_back(split_lines(cell));
      height = std::max(height, lines.back().size());
    }
    std::string out;
    for (size_t h = 0; h < height; ++h) {
      out += "│";
      for (size_t c = 0; c < ncols; ++c) {
        const std::string text = h < lines[c].size() ? lines[c][h] : "";
        out += ' ';  // appended piece by piece: GCC 12 warns (falsely) on " " + std::string at -O3 in C++20
        out += pad(text, width[c], c == 0);
        out += " │";
      }
      out += "\n";
    }
    return out;
  };
  std::string out = rule("╒", "═", "╤", "╕") + row_lines(headers) + rule("╞", "═", "╪", "╡");
  for (size_t r = 0; r < rows.size(); ++r) {
    if (r) out += rule("├", "─", "┼", "┤");
    out += row_lines(rows[r]);
  }
  out += rule("╘", "═", "╧", "╛");
  out.pop_back();  // tabulate's string has no final newline
  return out;
}

// tabulate's LATEX_ESCAPE_RULES, applied to each padded cell.
static std::string latex_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "\\&"; break;
      case '%': out += "\\%"; break;
      case '$': out += "\\$"; break;
      case '#': out += "\\#"; break;
      case '_': out += "\\_"; break;
      case '^': out += "\\^{}"; break;
      case '{': out += "\\{"; break;
      case '}': out += "\\}"; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      case '<': out += "\\ensuremath{<}"; break;
      case '>': out += "\\ensuremath{>}"; break;
      default: out += c;
    }
  }
  return out;
}

std::string latex_booktabs(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  const size_t ncols = headers.size();
  std::vector<size_t> width(ncols);
  for (size_t c = 0; c < ncols; ++c) {
    width[c] = columns(headers[c]) + 2;  // tabulate's MIN_PADDING
    for (const auto& row : rows) width[c] = std::max(width[c], columns(row[c]));
  }
  const auto row_line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < ncols; ++c) out += (c ? "&" : "") + latex_escape(" " + pad(cells[c], width[c], c == 0) + " ");
    return out + "\\\\\n";
  };
  std::string out = "\\begin{tabular}{r" + std::string(ncols - 1, 'c') + "}\n\\toprule\n" + row_line(headers) + "\\midrule\n";
  for (const auto& row : rows) out += row_line(row);
  return out + "\\bottomrule\n\\end{tabular}";
}

std::string sacrebleu_report(const std::vector<NamedSystem>& systems,
                             const std::vector<std::vector<std::string>>& refs_per_stream, const ReportOptions& o) {
  if (systems.empty()) throw UsageError("no system to score");
  if (o.width < 0 || o.width > 17) throw UsageError(fmt::format("--width must be in 0..17, got {}", o.width));
  if (o.paired != PairedTest::kNone && systems.size() == 1)
    throw UsageError("paired tests (--paired-bs, --paired-ar) need several systems: a baseline and the others");
  if (systems.size() > 1 && o.confidence)
    throw UsageError("--confidence is for one system; use --paired-bs or --paired-ar with several");
  if (o.confidence && o.confidence_n < 1) throw UsageError("--confidence-n must be at least 1");
  std::vector<MetricEntry> metrics = make_metrics(o, refs_per_stream);
  if (systems.size() == 1) return single_system(systems[0], std::move(metrics), o);
  if (o.paired == PairedTest::kNone) return several_systems(systems, std::move(metrics), o);
  return paired_systems(systems, metrics, o);
}

}  // namespace nmt::metrics
