// `nmt eval`: translate a test set with the translation service and score it with sacreBLEU's
// BLEU and chrF; the scores are recorded in the model directory for `nmt report`.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "decode_flags.h"
#include "nmt/decode/command_options.h"
#include "nmt/decode/service.h"
#include "nmt/metrics/bleu.h"
#include "nmt/metrics/chrf.h"
#include "nmt/tensor/threads.h"
#include "nmt/text/unicode.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::cli {

namespace {

struct EvalFlags {
  explicit EvalFlags(CLI::App* cmd) : decode(cmd, OptionUse{{}, {"nbest"}, {}}), io(cmd, decode::eval_io_option_specs()) {
    // A switch with its negation, outside the tables (docs/design.md, "Flags outside the option tables").
    cmd->add_flag("--record,!--no-record", record,
                  "Append the scores to MODEL/evals.jsonl for nmt report (default: on; a read-only model only warns)");
  }
  DecodeFlags decode;
  OptionBinder<decode::EvalIoOptions> io;
  bool record = true;
};

// Each reference file's lines, as many as the source has, right-stripped as sacreBLEU reads them.
std::vector<std::vector<std::string>> read_references(const std::vector<std::string>& refs, const std::string& src,
                                                      size_t lines) {
  std::vector<std::vector<std::string>> streams;
  for (const auto& r : refs) {
    auto ref_lines = read_lines(r);
    if (ref_lines.size() != lines)
      throw UsageError(fmt::format("{} has {} lines but {} has {}", src, lines, r, ref_lines.size()));
    for (size_t i = 0; i < ref_lines.size(); ++i) {
      if (!text::is_valid_utf8(ref_lines[i])) throw RuntimeError(fmt::format("{}:{}: not valid UTF-8", r, i + 1));
      ref_lines[i] = std::string(text::python_rstrip(ref_lines[i]));
    }
    streams.push_back(std::move(ref_lines));
  }
  return streams;
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

void run_eval(const EvalFlags& flags) {
  const DecodeArgs a = flags.decode.args();
  const decode::EvalIoOptions io = flags.io.checked();
  const auto lines = decode::read_source_lines(io.src);
  const auto ref_streams = read_references(io.references, io.src, lines.size());
  set_threads(a.runtime.threads);
  decode::TranslationService service(a.model_dirs, a.runtime);
  decode::TranslateStats stats;
  const auto start = std::chrono::steady_clock::now();
  TranslateProgress progress(lines.size(), a.runtime.quiet);
  auto hyps = service.translate_text(lines, a.search, &stats, progress.callback());
  progress.finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  warn_truncated(stats, a.runtime.quiet);
  if (!io.save_hyp.empty()) {
    std::string text;
    for (const auto& h : hyps) text += h + "\n";
    write_file_atomic(io.save_hyp, text);
  }
  for (auto& h : hyps) h = std::string(text::python_rstrip(h));
  const auto bleu = metrics::BleuScorer().corpus_score(hyps, ref_streams);
  const auto chrf = metrics::ChrfScorer().corpus_score(hyps, ref_streams);
  const nlohmann::json bleu_json = {{"score", bleu.score}, {"signature", bleu.signature}};
  const nlohmann::json chrf_json = {{"score", chrf.score}, {"signature", chrf.signature}};
  if (io.json) {
    nlohmann::json j = {{"bleu", {{"score", bleu.score}, {"precisions", bleu.precisions}, {"bp", bleu.bp},
                                  {"sys_len", bleu.sys_len}, {"ref_len", bleu.ref_len}, {"signature", bleu.signature}}},
                        {"chrf", chrf_json}, {"sentences", lines.size()}, {"seconds", secs}};
    std::cout << j.dump(1) << '\n';
  } else {
    std::cout << bleu.text_line() << '\n' << chrf.text_line() << '\n';
    if (!a.runtime.quiet)
      std::fprintf(stderr, "%zu sentences in %.2fs (%.1f sentences/s)%s\n", lines.size(), secs,
                   lines.size() / std::max(secs, 1e-9), service.int8_note().c_str());
  }
  check_stdout();  // the scores are out (or that failed, reported) before they are recorded
  if (!flags.record || a.model_dirs.size() != 1) return;  // an ensemble's scores belong to no one directory
  // The test set's name: the source file without its language suffix (test_2016_flickr.en).
  const std::filesystem::path sp(io.src);
  const nlohmann::json r = {{"test_set", (sp.has_extension() ? sp.stem() : sp.filename()).string()},
                            {"source", io.src}, {"references", io.references}, {"beam", a.search.beam},
                            {"alpha", a.search.alpha}, {"length_penalty", enum_to_string(a.search.length_penalty)},
                            {"bleu", bleu_json}, {"chrf", chrf_json}, {"sentences", lines.size()}, {"seconds", secs}};
  record_eval(a.model_dirs.front(), r, a.runtime.quiet);
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Translate a test set and score it with sacreBLEU's BLEU and chrF");
  auto flags = std::make_shared<EvalFlags>(cmd);
  cmd->callback([flags] { run_eval(*flags); });
}

}  // namespace nmt::cli
