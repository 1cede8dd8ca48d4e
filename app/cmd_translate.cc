// `nmt translate`: requests read from a file or standard input (decode/request_reader.h),
// translated by the translation service (decode/service.h), written by the one result writer
// (decode/result_writer.h); on a terminal with no files, the interactive prompt.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "decode_flags.h"
#include "interactive.h"
#include "nmt/decode/command_options.h"
#include "nmt/decode/documents.h"
#include "nmt/doc/html.h"
#include "nmt/decode/request_reader.h"
#include "nmt/decode/result_writer.h"
#include "nmt/decode/service.h"
#include "nmt/decode/decode_options.h"
#include "nmt/tensor/threads.h"
#include "nmt/text/markup.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/viz/heatmap.h"

namespace nmt::cli {

namespace {

struct TranslateFlags {
  explicit TranslateFlags(CLI::App* cmd) : decode(cmd, OptionUse{}), io(cmd, decode::translate_io_option_specs()) {}
  DecodeFlags decode;  // every search option
  OptionBinder<decode::TranslateIoOptions> io;
};

// FILE.svg for a single sentence; FILE-N.svg (N = line number) when there are several.
std::string numbered_path(const std::string& path, size_t line_no, bool several) {
  if (!several) return path;
  const auto dot = path.rfind('.');
  const auto slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return fmt::format("{}-{}", path, line_no);
  return fmt::format("{}-{}{}", path.substr(0, dot), line_no, path.substr(dot));
}

// "warning: line N: the translation lacks "X" (...)" for a translation that misses a phrase
// it had to contain.
void warn_unmet_constraints(size_t line_no, const decode::TranslationResult& t) {
  if (t.unmet_constraints.empty()) return;
  std::string phrases;
  for (const auto& p : t.unmet_constraints) phrases += fmt::format("{}\"{}\"", phrases.empty() ? "" : ", ", p);
  const std::string why = t.constraint_tokens > t.length_limit
                              ? fmt::format(": its phrases need {} subwords, more than its length limit of {} "
                                            "(--max-len-a, --max-len-b)", t.constraint_tokens, t.length_limit)
                              : t.text.empty() ? ": the line is empty" : "";
  std::fprintf(stderr, "warning: line %zu: the translation lacks %s%s\n", line_no, phrases.c_str(), why.c_str());
}

// One JSON object per translated line: subword tokens of source and target (each ending in
// </s>) and the decoder's attention, one row per target token, each summing to 1 over the
// source tokens.
std::string attention_json(size_t line_no, const viz::AttentionMap& m) {
  const nlohmann::json j = {{"line", line_no}, {"source", m.source}, {"target", m.target}, {"attention", m.weights}};
  return j.dump() + "\n";
}

// Everything `nmt translate` writes: the translations, and the attention as JSON lines and
// SVG files. Outputs are OutputFiles, so a failure leaves an existing file as it was.
class TranslateWriter {
 public:
  TranslateWriter(const decode::TranslateIoOptions& io, const decode::SearchOptions& search,
                  const decode::TranslationService& service, const decode::ResultOptions& fields, bool quiet)
      : io_(io), service_(service), fields_(fields), quiet_(quiet), out_(io.output.empty() ? "-" : io.output),
        shown_{fields.constrained, io.alignment, search.nbest > 1} {
    if (!io.attention.empty()) attention_.emplace(io.attention);
  }
  bool several_svgs = false;  // decided once the input size is known

  // Line `first` + i's results (0-based). On stdout they are flushed at once, so nothing
  // already translated is lost if a later line is bad.
  void write(size_t first, const std::vector<decode::TranslationRequest>& requests, const std::vector<decode::Nbest>& results) {
    for (size_t i = 0; i < results.size(); ++i) {
      const size_t line_no = first + i + 1;
      const decode::TranslationResult& best = results[i].front();
      if (!quiet_) {
        for (const auto& w : best.warnings) std::fprintf(stderr, "warning: line %zu: %s\n", line_no, w.c_str());
        warn_unmet_constraints(line_no, best);
      }
      out_.write(io_.json ? decode::json_line(first + i, results[i], shown_) : decode::text_lines(first + i, results[i], shown_));
      if (fields_.attention) write_attention(line_no, best, requests[i].source);
    }
    out_.flush();
  }
  void commit() {
    if (attention_) attention_->commit();
    out_.commit();
  }

 private:
  void write_attention(size_t line_no, const decode::TranslationResult& best, const std::string& source) {
    // With --markup the attention is over the text translated, the tags taken out.
    const auto map = service_.attention_map(best, fields_.markup ? text::strip_markup(source).text : source);
    if (attention_) attention_->write(attention_json(line_no, map));
    if (!io_.attention_svg.empty() && !best.attention.empty())
      write_file_atomic(numbered_path(io_.attention_svg, line_no, several_svgs),
                        viz::attention_svg(map, service_.attention_title(fields_.attention_choice)));
  }

  const decode::TranslateIoOptions& io_;
  const decode::TranslationService& service_;
  const decode::ResultOptions& fields_;
  bool quiet_;
  OutputFile out_;
  std::optional<OutputFile> attention_;
  decode::ResultFields shown_;
};

// --input's lines, refused before any model is loaded when they cannot all be translated
// into --output. `first_bad`: the line number of its first invalid UTF-8 line, 0 if none.
std::vector<std::string> read_input(const decode::TranslateIoOptions& io, const decode::RequestReader& reader,
                                    size_t& first_bad) {
  for (const std::string* o : {&io.output, &io.attention})
    if (!o->empty() && same_file(io.input, *o))
      throw UsageError(fmt::format("{} is both the input and an output; the input would be destroyed", io.input));
  auto lines = decode::read_source_lines(io.input, &first_bad);
  // A file --output would not be replaced anyway (see run_translate): refuse before any work.
  if (first_bad && !io.output.empty()) throw RuntimeError(fmt::format("{}:{}: not valid UTF-8", io.input, first_bad));
  if (!first_bad) reader.check_count(lines.size(), io.input);
  return lines;
}

decode::ResultOptions result_options(const decode::TranslateIoOptions& io, const decode::RequestReader& reader,
                                     const decode::TranslationService& service) {
  decode::ResultOptions r;
  r.constrained = reader.has_positive_constraints();
  r.token_log_probs = io.json;  // the confidence
  r.alignment = io.alignment;
  r.attention = !io.attention.empty() || !io.attention_svg.empty();
  r.markup = io.markup;
  // A line of several sentences is translated sentence by sentence; the attention files
  // draw one matrix per line, so with them each line is one sentence.
  r.split_sentences = !io.whole_lines && !r.attention;
  r.attention_choice = service.attention_choice(io.attention_layer, io.attention_head, "--attention-layer", "--attention-head");
  return r;
}

// --format, with auto resolved by --input's extension.
std::string input_format(const decode::TranslateIoOptions& io) {
  if (io.input_format != "auto") return io.input_format;
  const auto dot = io.input.rfind('.');
  const std::string ext = dot == std::string::npos ? "" : io.input.substr(dot);
  return ext == ".html" || ext == ".htm" || ext == ".xhtml" ? "html" : "text";
}

// An HTML document: its text pieces translated (runs with inline tags through the markup
// path, the others split into sentences), written back with every other byte as it was.
void translate_html(const decode::TranslateIoOptions& io, const DecodeArgs& a) {
  for (const auto& [given, flag] : {std::pair{io.json, "--json"}, {io.alignment, "--alignment"}, {io.markup, "--markup"},
                                    {!io.attention.empty() || !io.attention_svg.empty(), "--attention"},
                                    {!io.prefix_file.empty() || io.prefix_tab || !io.constraints.empty() ||
                                         !io.avoid_per_line.empty() || !io.avoid.empty(),
                                     "--prefix-file/--prefix-tab/--constraints/--avoid"},
                                    {a.search.nbest > 1, "--nbest"}})
    if (given) throw UsageError(fmt::format("--format html writes the document back: it does not take {}", flag));
  if (!io.output.empty() && !io.input.empty() && same_file(io.input, io.output))
    throw UsageError(fmt::format("{} is both the input and the output; the input would be destroyed", io.input));
  const std::string name = io.input.empty() ? "<stdin>" : io.input;
  std::string html;
  if (io.input.empty()) {
    html.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    html = read_file(io.input);
  }
  doc::HtmlPlan plan;
  try {
    plan = doc::plan_html(std::move(html));
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: {}", name, e.what()));
  }
  if (plan.too_deep && !a.runtime.quiet)
    std::fprintf(stderr, "warning: %s: %zu element(s) nested more than %d deep left untranslated\n", name.c_str(),
                 plan.too_deep, doc::kMaxHtmlDepth);
  set_threads(a.runtime.threads);
  decode::TranslationService service(a.model_dirs, a.runtime);
  decode::TranslateStats stats;
  const std::string page = decode::translate_html_page(service, std::move(plan), a.search, &stats);
  OutputFile out(io.output.empty() ? "-" : io.output);
  out.write(page);
  out.commit();
  warn_truncated(stats, a.runtime.quiet);
}

void run_translate(const TranslateFlags& flags) {
  // Everything that can be refused is refused before a model is loaded or an output touched.
  const DecodeArgs a = flags.decode.args();
  const decode::TranslateIoOptions io = flags.io.checked();
  if (input_format(io) == "html") return translate_html(io, a);
  const decode::RequestReader reader(io.request_files());
  size_t first_bad = 0;  // 1-based line number of the first invalid UTF-8 line of --input, 0 if none
  const std::vector<std::string> input_lines = io.input.empty() ? std::vector<std::string>{} : read_input(io, reader, first_bad);
  decode::search_kind(a.search, reader.has_positive_constraints());  // refuses sampling with constraints
  set_threads(a.runtime.threads);
  decode::TranslationService service(a.model_dirs, a.runtime);
  reader.check_phrases([&](const text::PhraseConstraints& c) { service.check_phrases(c); });
  decode::ResultOptions fields = result_options(io, reader, service);
  if (io.input.empty() && io.output.empty() && isatty(STDIN_FILENO) && !a.runtime.quiet && !reader.has_constraints() &&
      !io.json && !io.alignment && !io.markup)
    return run_interactive(service, a.search);
  TranslateWriter writer(io, a.search, service, fields, a.runtime.quiet);
  decode::TranslateStats stats;
  size_t written = 0;
  auto translate_chunk = [&](std::vector<std::string> chunk) {
    const auto requests = reader.requests(std::move(chunk), written);
    writer.write(written, requests, service.translate(requests, a.search, fields, &stats));
    written += requests.size();
  };
  if (io.input.empty()) {
    // With --attention-svg the whole input is read first, so one line gives FILE itself.
    decode::read_chunks(std::cin, isatty(STDIN_FILENO), !io.attention_svg.empty(), translate_chunk, writer.several_svgs);
  } else {
    writer.several_svgs = input_lines.size() > 1;
    TranslateProgress progress(input_lines.size(), a.runtime.quiet);
    fields.on_batch_done = progress.callback();
    // The lines before an invalid one are translated and written first (on stdout; a file
    // --output is only replaced when all of the input is good).
    translate_chunk(input_lines);
    progress.finish();
    if (first_bad) throw RuntimeError(fmt::format("{}:{}: not valid UTF-8", io.input, first_bad));
  }
  if (!first_bad) reader.check_used(written);
  writer.commit();
  warn_truncated(stats, a.runtime.quiet);
}

}  // namespace

void add_translate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("translate", "Translate text with a trained model (stdin → stdout by default)");
  auto flags = std::make_shared<TranslateFlags>(cmd);
  cmd->callback([flags] { run_translate(*flags); });
}

}  // namespace nmt::cli
