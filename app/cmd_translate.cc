// `nmt translate` and `nmt eval`: load a model directory, decode, write / score.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <filesystem>
#include <functional>
#include <memory>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "option_binder.h"
#include "nmt/decode/strategy.h"
#include "nmt/decode/translator.h"
#include "nmt/serve/api.h"
#include "nmt/models/architecture.h"
#include "nmt/models/quantize.h"
#include "nmt/models/transformer.h"
#include "nmt/quant/int8_gemm.h"
#include "nmt/metrics/bleu.h"
#include "nmt/metrics/chrf.h"
#include "nmt/tensor/device.h"
#include "nmt/text/lexical_constraints.h"
#include "nmt/text/markup.h"
#include "nmt/text/repetition.h"
#include "nmt/text/unicode.h"
#include "nmt/tensor/threads.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/runtime_options.h"
#include "nmt/viz/heatmap.h"
#include "nmt/viz/progress.h"

namespace nmt::cli {

namespace {

struct DecodeArgs {
  std::vector<std::string> model_dirs;  // several: an ensemble
  decode::SearchOptions search;
  RuntimeOptions runtime;
};

// A decoding command's flags: -m, then the options it takes of the search and runtime tables.
class DecodeFlags {
 public:
  DecodeFlags(CLI::App* cmd, const OptionUse& search, const OptionUse& runtime = {})
      : model_(add_model_option(cmd, dirs_, ModelList::kEnsemble)),
        search_(cmd, decode::search_option_specs(), {}, search),
        runtime_(cmd, runtime_option_specs(), {}, runtime) {}

  // The options given, checked before any model is loaded or file touched (a huge batch
  // would exhaust memory, NaN length factors make every output empty).
  DecodeArgs args() const {
    DecodeArgs a;
    a.model_dirs = dirs_;
    search_.apply(a.search);
    a.runtime = runtime_.checked();
    decode::validate_search_options(a.search, flag_of);
    return a;
  }

 private:
  std::vector<std::string> dirs_;
  CLI::Option* model_;
  OptionBinder<decode::SearchOptions> search_;
  OptionBinder<RuntimeOptions> runtime_;
};

// --attention-layer / --attention-head (or attention's --layer / --head) against the model:
// -1 or an existing layer / head; a model with one attention (the GRU) takes only -1.
void check_attention_choice(const models::ModelConfig& c, int64_t layer, int64_t head, const char* layer_flag,
                            const char* head_flag) {
  const models::Architecture& arch = models::architecture(c.type);
  const int64_t layers = arch.attention_layers(c);
  const int64_t heads = arch.attention_heads(c);
  if (!(layer == -1 || (layer >= 0 && layer < layers)))
    throw UsageError(fmt::format("{} is {}: the {} model has {} decoder layer(s) to choose from (-1 for the last)",
                                 layer_flag, layer, c.type, layers));
  if (!(head == -1 || (head >= 0 && head < heads)))
    throw UsageError(fmt::format("{} is {}: the {} model has {} head(s) to choose from (-1 for their mean)", head_flag,
                                 head, c.type, heads));
}

// The model, or the ensemble of the models, given with -m.
decode::Translator load_translator(const DecodeArgs& a) { return decode::load_translator(a.model_dirs, a.runtime); }

// Which cross-attention the Transformers of the translator report (a GRU has one), checked
// against each member; the choice travels with the decoding options, not on the models.
models::AlignmentChoice attention_choice(const decode::Translator& translator, int64_t layer, int64_t head,
                                         const char* layer_flag, const char* head_flag) {
  for (const auto& m : translator.members()) check_attention_choice(m.model_config, layer, head, layer_flag, head_flag);
  return {layer, head};
}

// ", int8 kernel K" when a model decodes in int8 (K: nmt::quant::kernel_name()), else "".
std::string int8_note(const decode::Translator& translator) {
  for (const auto& m : translator.members())
    if (m.quantization == "int8") return ", int8 kernel " + quant::kernel_name();
  return "";
}

// Best translation per line, greedy or beam search.
std::vector<std::string> translate_lines(decode::Translator& translator, const std::vector<std::string>& lines,
                                         const DecodeArgs& a, const decode::DecodeOptions& d,
                                         decode::TranslateStats* stats) {
  std::vector<std::string> out;
  for (auto& n : translator.translate(lines, d, *decode::make_search_strategy(a.search), stats))
    out.push_back(std::move(n.front().text));
  return out;
}

void warn_truncated(const decode::TranslateStats& stats, bool quiet) {
  if (stats.truncated && !quiet)
    std::fprintf(stderr, "warning: %zu input line(s) longer than the model's limit were truncated\n", stats.truncated);
}

// Input lines for translation. A line that is not valid UTF-8 is an error naming it; with
// `first_bad`, the lines before it are returned instead and *first_bad is its line number
// (0 when every line is good), so the caller can translate them first.
std::vector<std::string> read_source_lines(const std::string& path, size_t* first_bad = nullptr) {
  std::vector<std::string> lines = read_lines(path);
  if (first_bad) *first_bad = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto& l = lines[i];
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (text::is_valid_utf8(l)) continue;
    if (!first_bad) throw RuntimeError(fmt::format("{}:{}: not valid UTF-8", path, i + 1));
    *first_bad = i + 1;
    lines.resize(i);
    break;
  }
  return lines;
}

// Live "sentences done, sentences/s, ETA" on a terminal; nothing when stderr is redirected or --quiet.
class TranslateProgress {
 public:
  TranslateProgress(size_t total, bool quiet) : line_(!quiet && viz::is_terminal(stderr)), total_(total) {}
  // Hooks the display into the decoder's per-batch callback.
  void attach(decode::DecodeOptions& d) {
    if (!line_.enabled()) return;
    d.on_batch_done = [this](size_t n) {
      done_ += n;
      if (!line_.due()) return;
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      line_.show(fmt::format("translating: {}/{} sentences | {:.1f} sentences/s | elapsed {} | ETA {}", done_, total_,
                             done_ / std::max(secs, 1e-9), viz::format_duration(secs), viz::eta_text(done_, total_, secs)));
    };
  }
  void finish() { line_.clear(); }

 private:
  viz::ProgressLine line_;
  size_t total_, done_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Tab-separated phrases of one line; empty or all-space fields are no phrase.
std::vector<std::string> phrases_of(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    std::string field = line.substr(start, tab == std::string::npos ? std::string::npos : tab - start);
    if (!text::python_strip(std::string_view(field)).empty()) out.push_back(std::move(field));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

// A file with one line per input line (--prefix-file, --constraints, --avoid-per-line), read
// before any model is loaded; `unit` names what a line holds in the errors ("one prefix per
// input line"). Not given: empty path, no checks.
class PerLineFile {
 public:
  PerLineFile(std::string path, std::string unit) : path_(std::move(path)), unit_(std::move(unit)) {
    if (given()) lines_ = read_source_lines(path_);
  }
  bool given() const { return !path_.empty(); }
  const std::vector<std::string>& lines() const { return lines_; }
  const std::string& path() const { return path_; }

  // Refused when the file has another number of lines than the input file.
  void check_count(size_t input_lines, const std::string& input_name) const {
    if (given() && lines_.size() != input_lines)
      throw UsageError(fmt::format("{} has {} lines but {} has {}: {}", path_, lines_.size(), input_name, input_lines, unit_));
  }
  // Refused when the file ends before input line first + count (the input read in chunks).
  void check_covers(size_t first, size_t count) const {
    if (given() && first + count > lines_.size())
      throw UsageError(fmt::format("{} has {} lines, fewer than the input: {}", path_, lines_.size(), unit_));
  }
  // After the whole input (read from stdin): refused when the file has lines left over.
  void check_used(size_t input_lines) const {
    if (given() && lines_.size() != input_lines)
      throw UsageError(fmt::format("{} has {} lines but the input had {}: {}", path_, lines_.size(), input_lines, unit_));
  }

 private:
  std::string path_, unit_;
  std::vector<std::string> lines_;
};

// --constraints (per input line, phrases its translation must contain), --avoid-per-line (per
// line, phrases it must not) and --avoid (phrases no translation contains), read and checked
// before any model is loaded.
class ConstraintFiles {
 public:
  ConstraintFiles(std::string include, std::string avoid_lines, const std::string& avoid)
      : include_(std::move(include), kUnit), avoid_lines_(std::move(avoid_lines), kUnit) {
    if (!avoid.empty())
      for (const auto& line : read_source_lines(avoid))
        if (!text::python_strip(std::string_view(line)).empty()) avoid_all_.push_back(line);
  }
  bool given() const { return include_.given() || avoid_lines_.given() || !avoid_all_.empty(); }
  bool positive() const { return include_.given(); }

  void check_count(size_t input_lines, const std::string& input_name) const {
    for (const PerLineFile* f : {&include_, &avoid_lines_}) f->check_count(input_lines, input_name);
  }
  void check_used(size_t input_lines) const {
    for (const PerLineFile* f : {&include_, &avoid_lines_}) f->check_used(input_lines);
  }
  // The constraints of input lines first..first+count; UsageError when a file ends before.
  std::vector<text::PhraseConstraints> for_lines(size_t first, size_t count) const {
    for (const PerLineFile* f : {&include_, &avoid_lines_}) f->check_covers(first, count);
    std::vector<text::PhraseConstraints> out(count);
    for (size_t i = 0; i < count; ++i) {
      if (include_.given()) out[i].include = phrases_of(include_.lines()[first + i]);
      if (avoid_lines_.given()) out[i].avoid = phrases_of(avoid_lines_.lines()[first + i]);
      out[i].avoid.insert(out[i].avoid.end(), avoid_all_.begin(), avoid_all_.end());
    }
    return out;
  }
  // Every phrase in the model's subwords, before anything is translated: FILE:LINE: why.
  void check_encodable(const decode::Translator& translator) const {
    auto check = [&](const std::string& file, size_t line_no, const text::PhraseConstraints& c) {
      try {
        translator.encode_constraints(c);
      } catch (const UsageError& e) {
        throw UsageError(line_no ? fmt::format("{}:{}: {}", file, line_no, e.what()) : fmt::format("{}: {}", file, e.what()));
      }
    };
    const auto& include = include_.lines();
    const auto& avoid = avoid_lines_.lines();
    for (size_t i = 0; i < include.size(); ++i) check(include_.path(), i + 1, {phrases_of(include[i]), {}});
    for (size_t i = 0; i < avoid.size(); ++i) check(avoid_lines_.path(), i + 1, {{}, phrases_of(avoid[i])});
    check("--avoid", 0, {{}, avoid_all_});
  }

 private:
  static constexpr const char* kUnit = "one line of phrases per input line";
  PerLineFile include_, avoid_lines_;
  std::vector<std::string> avoid_all_;
};

// "warning: line N: the translation lacks "X" (...)" for each line whose translation misses a
// phrase it had to contain.
void warn_unmet_constraints(size_t line_no, const decode::Translation& t, bool quiet) {
  if (t.unmet_constraints.empty() || quiet) return;
  std::string phrases;
  for (const auto& p : t.unmet_constraints) phrases += fmt::format("{}\"{}\"", phrases.empty() ? "" : ", ", p);
  const std::string why = t.constraint_tokens > t.length_limit
                              ? fmt::format(": its phrases need {} subwords, more than its length limit of {} "
                                            "(--max-len-a, --max-len-b)", t.constraint_tokens, t.length_limit)
                              : t.text.empty() ? ": the line is empty" : "";
  std::fprintf(stderr, "warning: line %zu: the translation lacks %s%s\n", line_no, phrases.c_str(), why.c_str());
}

// One JSON object per input line (--json): the best translation, its score and what a caller
// routes doubtful lines by (mean log-probability per token, a repetition loop, phrases it
// lacks), its subwords and their log-probabilities (the EOS's last, when it has one), and with
// --nbest N the N hypotheses.
std::string translation_json(size_t line_no, const std::vector<decode::Translation>& hyps, bool constraints, bool nbest,
                             const std::vector<std::string>& alignments, const text::SubwordModel& target) {
  auto one = [&](size_t k) {
    nlohmann::json j = serve::translation_json(decode::scored_text(hyps[k], target), constraints);
    if (!alignments.empty()) j["alignment"] = alignments[k];
    return j;
  };
  nlohmann::json j = one(0);
  j["line"] = line_no;
  if (nbest) {
    j["nbest"] = nlohmann::json::array();
    for (size_t k = 0; k < hyps.size(); ++k) j["nbest"].push_back(one(k));
  }
  return j.dump() + "\n";
}

}  // namespace

namespace {
// FILE.svg for a single sentence; FILE-N.svg (N = line number) when there are several.
std::string numbered_path(const std::string& path, size_t line_no, bool several) {
  if (!several) return path;
  const auto dot = path.rfind('.');
  const auto slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return fmt::format("{}-{}", path, line_no);
  return fmt::format("{}-{}{}", path.substr(0, dot), line_no, path.substr(dot));
}

std::string attention_title(int64_t layer, int64_t head, const models::ModelConfig& config) {
  const models::Architecture& arch = models::architecture(config.type);
  if (arch.attention_layers(config) == 0) return arch.attention_name;
  return fmt::format("{}, {}, {}", arch.attention_name,
                     layer < 0 ? std::string("last layer") : fmt::format("layer {}", layer),
                     head < 0 ? std::string("mean of heads") : fmt::format("head {}", head));
}

// Interactive translation on a terminal: a prompt, each line translated as it is typed with
// the time it took, `:attn` for the last sentence's attention, `:quit` or Ctrl-D to leave.
void run_interactive(decode::Translator& translator, const DecodeArgs& a, decode::DecodeOptions d) {
  d.record_attention = true;
  const auto strategy = decode::make_search_strategy(a.search);
  const bool color = viz::is_terminal(stdout) && std::getenv("NO_COLOR") == nullptr;
  std::fprintf(stderr, "nmt %s model, %s. Type a sentence and press Enter; :attn shows the last attention, :help, :quit or Ctrl-D to leave.\n",
               translator.members().size() > 1 ? fmt::format("ensemble of {}", translator.members().size()).c_str()
                                               : translator.loaded().model_config.type.c_str(),
               decode::search_name(a.search).c_str());
  std::string line, last_source;
  decode::Hypothesis last;
  bool have_last = false;
  for (;;) {
    std::fputs("> ", stderr);
    std::fflush(stderr);
    if (!std::getline(std::cin, line)) {
      std::fputs("\n", stderr);
      break;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto cmd = std::string(text::python_strip(std::string_view(line)));
    if (cmd == ":quit" || cmd == ":q" || cmd == ":exit") break;
    if (cmd == ":help") {
      std::fputs("  type a sentence to translate it\n  :attn  attention of the last sentence\n  :quit  leave (or Ctrl-D)\n", stderr);
      continue;
    }
    if (cmd == ":attn") {
      if (!have_last || last.attention.empty())
        std::fputs("no sentence translated yet\n", stderr);
      else
        std::fputs(viz::attention_text(translator.attention_map(last, last_source), color).c_str(), stdout);
      std::fflush(stdout);
      continue;
    }
    if (!cmd.empty() && cmd[0] == ':') {
      std::fprintf(stderr, "unknown command %s (try :help)\n", cmd.c_str());
      continue;
    }
    if (!text::is_valid_utf8(line)) {
      std::fputs("that line is not valid UTF-8; nothing translated\n", stderr);
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    decode::TranslateStats stats;
    auto best = std::move(translator.translate({line}, d, *strategy, &stats).front().front());
    const std::string out = best.text;
    last = std::move(best.hypothesis);
    last_source = line;
    have_last = true;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s\n", out.c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "  (%.0f ms%s)\n", ms, stats.truncated ? ", input truncated to the model's limit" : "");
  }
}

// One JSON object per translated line: subword tokens of source and target (each ending in
// </s>) and the decoder's attention, one row per target token, each summing to 1 over the
// source tokens.
std::string attention_json(size_t line_no, const decode::Hypothesis& h, const std::string& source,
                           const decode::Translator& translator) {
  const auto m = translator.attention_map(h, source);
  nlohmann::json j;
  j["line"] = line_no;
  j["source"] = m.source;
  j["target"] = m.target;
  j["attention"] = m.weights;
  return j.dump() + "\n";
}

// nmt translate's options, as CLI11 fills them. (File-local like DecodeFlags, the type of one
// of its fields: GCC refuses a struct of external linkage holding a type of internal linkage
// when the file is compiled inside a unity batch.)
struct TranslateFlags {
  std::shared_ptr<DecodeFlags> decode;
  std::shared_ptr<std::string> input, output, attention;
  std::shared_ptr<int64_t> layer, head;
  std::shared_ptr<std::string> attention_svg, prefix_file;
  std::shared_ptr<bool> prefix_tab;
  std::shared_ptr<std::string> constraints, avoid_per_line, avoid;
  std::shared_ptr<bool> json, alignment, markup;
};
}  // namespace

// Standard input as a filter: translate_chunk gets the lines one at a time when stdin is a
// terminal, in chunks of 1,024 otherwise, or all at once with `buffer_all`; `several_lines` is
// set before the last chunk goes (--attention-svg names its files by it). An invalid UTF-8
// line is an error once the lines before it are translated.
void translate_stdin(const std::function<void(std::vector<std::string>)>& translate_chunk, bool buffer_all,
                     bool& several_lines) {
  const bool interactive = isatty(STDIN_FILENO);
  std::string line;
  std::vector<std::string> pending;
  size_t line_no = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_no == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);  // UTF-8 BOM
    if (!text::is_valid_utf8(line)) {
      translate_chunk(pending);
      throw RuntimeError(fmt::format("<stdin>:{}: not valid UTF-8", line_no));
    }
    pending.push_back(line);
    if (!buffer_all && (interactive || pending.size() >= 1024)) {
      translate_chunk(pending);
      pending.clear();
    }
  }
  several_lines = line_no > 1;
  translate_chunk(pending);
}

void run_translate(const TranslateFlags& flags) {
  const DecodeArgs args = flags.decode->args();  // everything that can be refused is refused first
  const DecodeArgs* a = &args;
  const auto& input = flags.input;
  const auto& output = flags.output;
  const auto& attention = flags.attention;
  const auto& layer = flags.layer;
  const auto& head = flags.head;
  const auto& attention_svg = flags.attention_svg;
  const auto& prefix_file = flags.prefix_file;
  const auto& prefix_tab = flags.prefix_tab;
  // Everything that can be refused is refused before any output is touched; outputs are
  // OutputFiles, so a failure later leaves an existing --output / --attention file as it was.
  const bool wants_attention = !attention->empty() || !attention_svg->empty();
  if (!prefix_file->empty() && *prefix_tab) throw UsageError("--prefix-file and --prefix-tab are exclusive");
  const PerLineFile prefix_lines(*prefix_file, "one prefix per input line");
  const ConstraintFiles constraints(*flags.constraints, *flags.avoid_per_line, *flags.avoid);
  const bool json = *flags.json;
  const bool print_alignment = *flags.alignment;
  const bool markup = *flags.markup;
  std::vector<std::string> input_lines;
  size_t first_bad = 0;  // 1-based line number of the first invalid UTF-8 line of --input, 0 if none
  if (!input->empty()) {
    for (const std::string* o : {output.get(), attention.get()})
      if (!o->empty() && same_file(*input, *o))
        throw UsageError(fmt::format("{} is both the input and an output; the input would be destroyed", *input));
    input_lines = read_source_lines(*input, &first_bad);
    // A file --output would not be replaced anyway (see below): refuse before any work.
    if (first_bad && !output->empty()) throw RuntimeError(fmt::format("{}:{}: not valid UTF-8", *input, first_bad));
    if (!first_bad) {
      prefix_lines.check_count(input_lines.size(), *input);
      constraints.check_count(input_lines.size(), *input);
    }
  }
  const auto strategy = decode::make_search_strategy(a->search, constraints.positive());
  set_threads(a->runtime.threads);
  decode::Translator translator = load_translator(*a);
  constraints.check_encodable(translator);
  auto d = decode::decode_options(a->search);
  d.return_token_log_probs = json;  // the confidence
  d.record_attention = wants_attention || print_alignment || markup;  // words are aligned by attention
  d.alignment = attention_choice(translator, *layer, *head, "--attention-layer", "--attention-head");
  OutputFile out(output->empty() ? "-" : *output);
  std::optional<OutputFile> attention_file;
  if (!attention->empty()) attention_file.emplace(*attention);
  const std::string title = attention_title(*layer, *head, translator.loaded().model_config);
  bool several_svgs = false;  // decided once the input size is known
  decode::TranslateStats stats;
  size_t written = 0;
  // Translates a chunk of lines and writes the results. On stdout they are flushed at once,
  // so nothing already translated is lost if a later line is bad.
  auto translate_chunk = [&](std::vector<std::string> chunk) {
    std::vector<std::string> prefixes;  // one per line of the chunk, when prefixes are given
    if (*prefix_tab) {
      for (auto& line : chunk) {
        const auto tab = line.find('\t');
        prefixes.push_back(tab == std::string::npos ? std::string() : line.substr(tab + 1));
        if (tab != std::string::npos) line.resize(tab);
      }
    } else if (prefix_lines.given()) {
      prefix_lines.check_covers(written, chunk.size());
      prefixes.assign(prefix_lines.lines().begin() + static_cast<std::ptrdiff_t>(written),
                      prefix_lines.lines().begin() + static_cast<std::ptrdiff_t>(written + chunk.size()));
    }
    std::vector<text::PhraseConstraints> line_constraints;
    if (constraints.given()) line_constraints = constraints.for_lines(written, chunk.size());
    std::vector<text::MarkedLine> marked;  // --markup: each line's tags, the plain text translated
    if (markup)
      for (auto& line : chunk) {
        marked.push_back(text::strip_markup(line));
        for (const auto& w : marked.back().warnings)
          if (!a->runtime.quiet) std::fprintf(stderr, "warning: line %zu: %s\n", written + marked.size(), w.c_str());
        line = marked.back().text;
      }
    auto results = translator.translate(chunk, d, *strategy, &stats, prefixes.empty() ? nullptr : &prefixes,
                                        constraints.given() ? &line_constraints : nullptr);
    for (size_t i = 0; i < results.size(); ++i) {
      warn_unmet_constraints(written + i + 1, results[i].front(), a->runtime.quiet);
      std::vector<std::string> alignments;  // per hypothesis, Pharaoh links on whole words
      for (auto& r : results[i]) {
        const auto links = print_alignment || markup ? translator.word_alignment(r.hypothesis, chunk[i])
                                                     : std::vector<text::WordLink>{};
        if (print_alignment) alignments.push_back(text::pharaoh(links));
        if (markup) r.text = text::restore_markup(marked[i], r.text, links);
      }
      const std::string links = print_alignment ? " ||| " + alignments.front() : "";
      if (json) {
        out.write(translation_json(written + i + 1, results[i], constraints.positive(), a->search.nbest > 1, alignments,
                                   translator.subwords().target));
      } else if (a->search.nbest == 1) {
        out.write(results[i].front().text + links + "\n");
      } else {
        for (size_t k = 0; k < results[i].size(); ++k)
          out.write(fmt::format("{} ||| {} ||| {:.6f}{}\n", written + i, results[i][k].text, results[i][k].hypothesis.score,
                                print_alignment ? " ||| " + alignments[k] : ""));
      }
      const auto& best = results[i].front().hypothesis;
      if (attention_file) attention_file->write(attention_json(written + i + 1, best, chunk[i], translator));
      if (!attention_svg->empty() && !best.attention.empty())
        write_file_atomic(numbered_path(*attention_svg, written + i + 1, several_svgs),
                          viz::attention_svg(translator.attention_map(best, chunk[i]),
                                             fmt::format("{} ({})", title, translator.loaded().model_config.type)));
    }
    written += results.size();
    out.flush();
  };
  if (input->empty() && output->empty() && isatty(STDIN_FILENO) && !a->runtime.quiet && !constraints.given() && !json &&
      !print_alignment && !markup) {
    run_interactive(translator, *a, d);
    return;
  }
  if (input->empty()) {
    // With --attention-svg the whole input is read first, so one line gives FILE itself.
    translate_stdin(translate_chunk, !attention_svg->empty(), several_svgs);
  } else {
    several_svgs = input_lines.size() > 1;
    TranslateProgress progress(input_lines.size(), a->runtime.quiet);
    progress.attach(d);
    // The lines before an invalid one are translated and written first (on stdout; a file
    // --output is only replaced when all of the input is good).
    translate_chunk(input_lines);
    progress.finish();
    if (first_bad) throw RuntimeError(fmt::format("{}:{}: not valid UTF-8", *input, first_bad));
  }
  if (!first_bad) {
    prefix_lines.check_used(written);
    constraints.check_used(written);
  }
  if (attention_file) attention_file->commit();
  out.commit();
  warn_truncated(stats, a->runtime.quiet);
}

void add_translate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("translate", "Translate text with a trained model (stdin → stdout by default)");
  auto decode = std::make_shared<DecodeFlags>(cmd, OptionUse{});  // every search option
  auto input = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto attention = std::make_shared<std::string>();
  auto layer = std::make_shared<int64_t>(-1);
  auto head = std::make_shared<int64_t>(-1);
  auto attention_svg = std::make_shared<std::string>();
  cmd->add_option("-i,--input", *input, "Input file (default: stdin)");
  cmd->add_option("-o,--output", *output, "Output file (default: stdout)");
  cmd->add_option("--attention", *attention, "Write each sentence's tokens and attention matrix to FILE as JSON lines");
  cmd->add_option("--attention-svg", *attention_svg,
                  "Draw each sentence's attention as an SVG heatmap: FILE for one line, FILE-N.svg for line N of several");
  cmd->add_option("--attention-layer", *layer, "Transformer decoder layer whose cross-attention is written (-1 = last)")
      ->capture_default_str();
  cmd->add_option("--attention-head", *head, "Transformer head to write (-1 = average over heads)")->capture_default_str();
  auto prefix_file = std::make_shared<std::string>();
  auto prefix_tab = std::make_shared<bool>(false);
  cmd->add_option("--prefix-file", *prefix_file,
                  "Force the translation of input line N to start with line N of FILE (target text; an empty line "
                  "forces nothing)");
  cmd->add_flag("--prefix-tab", *prefix_tab,
                "Each input line is SOURCE<TAB>PREFIX: the translation starts with PREFIX (no tab: no prefix)");
  auto constraints = std::make_shared<std::string>();
  auto avoid_per_line = std::make_shared<std::string>();
  auto avoid = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto alignment = std::make_shared<bool>(false);
  auto markup = std::make_shared<bool>(false);
  cmd->add_flag("--alignment", *alignment,
                "Append ' ||| ' and the word alignment to each line: Pharaoh source-target pairs of whole words (0-0 1-2 "
                "...), from the cross-attention --attention-layer/--attention-head choose");
  cmd->add_flag("--markup", *markup,
                "Input lines are text with inline tags (<b>, <i>, <x id=\"1\"/>, ...) and entities: the tags are taken out, "
                "the text translated, and the tags put back around the aligned words (the output is escaped markup)");
  cmd->add_option("--constraints", *constraints,
                  "Line N of FILE: tab-separated phrases the translation of input line N must contain (terminology; "
                  "beam search with dynamic beam allocation; an empty line: none)");
  cmd->add_option("--avoid-per-line", *avoid_per_line,
                  "Line N of FILE: tab-separated phrases the translation of input line N must not contain");
  cmd->add_option("--avoid", *avoid, "FILE: one phrase per line that no translation may contain");
  cmd->add_flag("--json", *json,
                "Write one JSON object per line: translation, score, confidence (mean log-probability per token), "
                "repetition (a loop such as \"un un un\"), unmet_constraints, and with --nbest the list");
  cmd->callback([=] {
    run_translate({decode, input, output, attention, layer, head, attention_svg, prefix_file, prefix_tab, constraints,
                   avoid_per_line, avoid, json, alignment, markup});
  });
}

// Appends one evaluation to MODEL/evals.jsonl (nmt report reads it). A model directory this
// user cannot write (a shared, read-only model) only warns, as --record's help says; any other
// failure (a full disk) is an error, and never leaves half a line in the file.
void record_eval(const std::string& model_dir, const nlohmann::json& record, bool quiet) {
  const std::string path = (std::filesystem::path(model_dir) / "evals.jsonl").string();
  if (::access(model_dir.c_str(), W_OK) != 0 && ::access(path.c_str(), W_OK) != 0) {
    if (!quiet) std::fprintf(stderr, "warning: %s: not writable, the scores are not recorded\n", path.c_str());
    return;
  }
  AppendFile(path).append_line(record.dump());
}

void add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Translate a test set and score it with sacreBLEU's BLEU and chrF");
  auto decode = std::make_shared<DecodeFlags>(cmd, OptionUse{{}, {"nbest"}, {}});
  auto src = std::make_shared<std::string>();
  auto refs = std::make_shared<std::vector<std::string>>();
  auto hyp_out = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--src", *src, "Source file")->required();
  cmd->add_option("--ref", *refs, "Reference file (repeat for several references)")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--save-hyp", *hyp_out, "Write the translations to this file");
  cmd->add_flag("--json", *json, "Print the scores as JSON");
  auto record = std::make_shared<bool>(true);
  cmd->add_flag("--record,!--no-record", *record,
                "Append the scores to MODEL/evals.jsonl for nmt report (default: on; a read-only model only warns)");
  cmd->callback([decode, src, refs, hyp_out, json, record] {
    const DecodeArgs args = decode->args();
    const DecodeArgs* a = &args;
    auto lines = read_source_lines(*src);
    std::vector<std::vector<std::string>> ref_streams;
    for (const auto& r : *refs) {
      auto ref_lines = read_lines(r);
      if (ref_lines.size() != lines.size())
        throw UsageError(fmt::format("{} has {} lines but {} has {}", *src, lines.size(), r, ref_lines.size()));
      for (size_t i = 0; i < ref_lines.size(); ++i) {
        if (!text::is_valid_utf8(ref_lines[i])) throw RuntimeError(fmt::format("{}:{}: not valid UTF-8", r, i + 1));
        ref_lines[i] = std::string(text::python_rstrip(ref_lines[i]));
      }
      ref_streams.push_back(std::move(ref_lines));
    }
    set_threads(a->runtime.threads);
    decode::Translator translator = load_translator(*a);
    decode::TranslateStats stats;
    const auto start = std::chrono::steady_clock::now();
    auto d = decode::decode_options(a->search);
    TranslateProgress progress(lines.size(), a->runtime.quiet);
    progress.attach(d);
    auto hyps = translate_lines(translator, lines, *a, d, &stats);
    progress.finish();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    warn_truncated(stats, a->runtime.quiet);
    if (!hyp_out->empty()) {
      std::string text;
      for (const auto& h : hyps) text += h + "\n";
      write_file_atomic(*hyp_out, text);
    }
    for (auto& h : hyps) h = std::string(text::python_rstrip(h));
    auto bleu = metrics::BleuScorer().corpus_score(hyps, ref_streams);
    auto chrf = metrics::ChrfScorer().corpus_score(hyps, ref_streams);
    if (*json) {
      nlohmann::json j = {{"bleu", {{"score", bleu.score}, {"precisions", bleu.precisions}, {"bp", bleu.bp},
                                    {"sys_len", bleu.sys_len}, {"ref_len", bleu.ref_len}, {"signature", bleu.signature}}},
                          {"chrf", {{"score", chrf.score}, {"signature", chrf.signature}}},
                          {"sentences", lines.size()}, {"seconds", secs}};
      std::cout << j.dump(1) << '\n';
    } else {
      std::cout << bleu.text_line() << '\n' << chrf.text_line() << '\n';
      if (!a->runtime.quiet)
        std::fprintf(stderr, "%zu sentences in %.2fs (%.1f sentences/s)%s\n", lines.size(), secs,
                     lines.size() / std::max(secs, 1e-9), int8_note(translator).c_str());
    }
    check_stdout();  // the scores are out (or that failed, reported) before they are recorded
    // An ensemble's scores belong to no one model directory: not recorded.
    if (*record && a->model_dirs.size() == 1) {
      // The test set's name: the source file without its language suffix (test_2016_flickr.en).
      const std::filesystem::path sp(*src);
      nlohmann::json r = {{"test_set", (sp.has_extension() ? sp.stem() : sp.filename()).string()},
                          {"source", *src}, {"references", *refs}, {"beam", a->search.beam},
                          {"alpha", a->search.alpha}, {"length_penalty", enum_to_string(a->search.length_penalty)},
                          {"bleu", {{"score", bleu.score}, {"signature", bleu.signature}}},
                          {"chrf", {{"score", chrf.score}, {"signature", chrf.signature}}},
                          {"sentences", lines.size()}, {"seconds", secs}};
      record_eval(a->model_dirs.front(), r, a->runtime.quiet);
    }
  });
}

void add_attention_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("attention", "Translate one sentence and draw its attention (SVG file, or text on the terminal)");
  auto decode = std::make_shared<DecodeFlags>(cmd, OptionUse{{}, {"nbest"}, {}});
  auto sentence = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto layer = std::make_shared<int64_t>(-1);
  auto head = std::make_shared<int64_t>(-1);
  auto as_text = std::make_shared<bool>(false);
  cmd->add_option("sentence", *sentence, "The source sentence")->required();
  cmd->add_option("-o,--output", *out, "SVG file to write (default: attention.svg)");
  cmd->add_flag("--text", *as_text, "Print a coloured text heatmap instead of writing an SVG");
  cmd->add_option("--layer", *layer, "Transformer decoder layer (-1 = last)")->capture_default_str();
  cmd->add_option("--head", *head, "Transformer head (-1 = average over heads)")->capture_default_str();
  cmd->callback([decode, sentence, out, layer, head, as_text] {
    const DecodeArgs args = decode->args();
    const DecodeArgs* a = &args;
    if (!text::is_valid_utf8(*sentence)) throw UsageError("the sentence is not valid UTF-8");
    set_threads(a->runtime.threads);
    decode::Translator translator = load_translator(*a);
    auto d = decode::decode_options(a->search);
    d.record_attention = true;
    d.alignment = attention_choice(translator, *layer, *head, "--layer", "--head");
    auto best = std::move(translator.translate({*sentence}, d, *decode::make_search_strategy(a->search)).front().front());
    std::cout << best.text << '\n';
    if (best.hypothesis.attention.empty()) throw UsageError("the sentence is empty: nothing to draw");
    const auto map = translator.attention_map(best.hypothesis, *sentence);
    if (*as_text) {
      std::cout << viz::attention_text(map, viz::is_terminal(stdout) && std::getenv("NO_COLOR") == nullptr);
      return;
    }
    const std::string path = out->empty() ? "attention.svg" : *out;
    write_file_atomic(path, viz::attention_svg(map, fmt::format("{} ({})", attention_title(*layer, *head, translator.loaded().model_config),
                                                                 translator.loaded().model_config.type)));
    if (!a->runtime.quiet) std::fprintf(stderr, "attention heatmap written to %s\n", path.c_str());
  });
}

void add_score_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "score", "Score given translations: the log-probability of each target line given its source line (forced decoding)");
  auto decode = std::make_shared<DecodeFlags>(
      cmd, OptionUse{{"batch_size"}, {}, {{"batch_size", "Sentence pairs per batch"}}},
      OptionUse{{"threads", "device", "quiet"}, {}, {{"quiet", "No warnings on stderr (errors still shown)"}}});
  auto src = std::make_shared<std::string>();
  auto tgt = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto normalize = std::make_shared<bool>(false);
  auto per_token = std::make_shared<bool>(false);
  cmd->add_option("--src", *src, "Source lines")->required();
  cmd->add_option("--tgt", *tgt, "Target lines to score, one per source line")->required();
  cmd->add_option("-o,--output", *output, "Output file (default: stdout)");
  cmd->add_flag("--normalize", *normalize, "Divide each score by its number of target subwords plus EOS");
  cmd->add_flag("--per-token", *per_token,
                "After each score, a tab and the log-probability of every target subword, EOS last");
  cmd->callback([decode, src, tgt, output, normalize, per_token] {
    const DecodeArgs args = decode->args();
    const DecodeArgs* a = &args;
    const auto sources = read_source_lines(*src);
    const auto targets = read_source_lines(*tgt);
    if (sources.size() != targets.size())
      throw UsageError(fmt::format("{} has {} lines but {} has {}", *src, sources.size(), *tgt, targets.size()));
    for (const std::string* o : {src.get(), tgt.get()})
      if (!output->empty() && same_file(*o, *output))
        throw UsageError(fmt::format("{} is both an input and the output; the input would be destroyed", *o));
    set_threads(a->runtime.threads);
    decode::Translator translator = load_translator(*a);
    OutputFile out(output->empty() ? "-" : *output);
    decode::TranslateStats stats;
    const auto scored = translator.score(sources, targets, decode::decode_options(a->search), &stats);
    for (const auto& h : scored) {
      const double n = static_cast<double>(h.token_log_probs.size());
      std::string line = fmt::format("{:.6f}", *normalize ? h.log_prob / n : h.log_prob);
      if (*per_token) {
        line += '\t';
        for (size_t i = 0; i < h.token_log_probs.size(); ++i)
          line += fmt::format("{}{:.6f}", i ? " " : "", h.token_log_probs[i]);
      }
      out.write(line + "\n");
    }
    out.commit();
    warn_truncated(stats, a->runtime.quiet);
  });
}

}  // namespace nmt::cli
