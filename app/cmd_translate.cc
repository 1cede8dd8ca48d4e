// `nmt translate` and `nmt eval`: load a model directory, decode, write / score.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "nmt/decode/translator.h"
#include "nmt/metrics/bleu.h"
#include "nmt/metrics/chrf.h"
#include "nmt/text/unicode.h"
#include "nmt/train/trainer.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::cli {

namespace {

struct DecodeArgs {
  std::string model_dir;
  int threads = 0;
  int64_t batch_size = 64;
  double max_len_a = 1.5;
  int64_t max_len_b = 10;
  bool quiet = false;
};

void add_decode_options(CLI::App* cmd, DecodeArgs& a) {
  cmd->add_option("-m,--model", a.model_dir, "Model directory written by nmt train")->required();
  cmd->add_option("--threads", a.threads, "LibTorch intra-op threads (0 = default)")->capture_default_str();
  cmd->add_option("--batch-size", a.batch_size, "Sentences per batch")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-len-a", a.max_len_a, "Output length limit: a * source length + b")->capture_default_str();
  cmd->add_option("--max-len-b", a.max_len_b, "Output length limit: a * source length + b")->capture_default_str();
  cmd->add_flag("-q,--quiet", a.quiet, "No warnings or progress on stderr (errors still shown)");
}

decode::DecodeOptions decode_options(const DecodeArgs& a) {
  decode::DecodeOptions d;
  d.max_sentences = a.batch_size;
  d.max_len_a = a.max_len_a;
  d.max_len_b = a.max_len_b;
  return d;
}

void warn_truncated(const decode::TranslateStats& stats, bool quiet) {
  if (stats.truncated && !quiet)
    std::fprintf(stderr, "warning: %zu input line(s) longer than the model's limit were truncated\n", stats.truncated);
}

// Input lines for translation: a line that is not valid UTF-8 is an error naming it.
std::vector<std::string> read_source_lines(const std::string& path, std::istream* stream) {
  std::vector<std::string> lines;
  if (stream) {
    std::string line;
    while (std::getline(*stream, line)) lines.push_back(line);
  } else {
    lines = read_lines(path);
  }
  const std::string name = stream ? "<stdin>" : path;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto& l = lines[i];
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (!text::is_valid_utf8(l)) throw RuntimeError(fmt::format("{}:{}: not valid UTF-8", name, i + 1));
  }
  return lines;
}

}  // namespace

void add_translate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("translate", "Translate text with a trained model (stdin → stdout by default)");
  auto a = std::make_shared<DecodeArgs>();
  auto input = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  add_decode_options(cmd, *a);
  cmd->add_option("-i,--input", *input, "Input file (default: stdin)");
  cmd->add_option("-o,--output", *output, "Output file (default: stdout)");
  cmd->callback([a, input, output] {
    train::set_threads(a->threads);
    decode::Translator translator(models::load_model(a->model_dir));
    auto d = decode_options(*a);
    std::unique_ptr<std::ofstream> file;
    std::ostream* out = &std::cout;
    if (!output->empty()) {
      file = std::make_unique<std::ofstream>(*output, std::ios::binary | std::ios::trunc);
      if (!*file) throw RuntimeError(fmt::format("{}: cannot write", *output));
      out = file.get();
    }
    decode::TranslateStats stats;
    if (input->empty()) {
      // A filter: translate line by line as input arrives when interactive, in batches otherwise.
      const bool interactive = isatty(STDIN_FILENO);
      std::string line;
      std::vector<std::string> pending;
      size_t line_no = 0;
      auto flush = [&] {
        for (auto& l : translator.translate(pending, d, &stats)) *out << l << '\n';
        out->flush();
        pending.clear();
      };
      while (std::getline(std::cin, line)) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!text::is_valid_utf8(line)) {
          flush();
          throw RuntimeError(fmt::format("<stdin>:{}: not valid UTF-8", line_no));
        }
        pending.push_back(line);
        if (interactive || pending.size() >= 1024) flush();
      }
      flush();
    } else {
      auto lines = read_source_lines(*input, nullptr);
      for (auto& l : translator.translate(lines, d, &stats)) *out << l << '\n';
    }
    out->flush();
    warn_truncated(stats, a->quiet);
  });
}

void add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Translate a test set and score it with sacreBLEU's BLEU and chrF");
  auto a = std::make_shared<DecodeArgs>();
  auto src = std::make_shared<std::string>();
  auto refs = std::make_shared<std::vector<std::string>>();
  auto hyp_out = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  add_decode_options(cmd, *a);
  cmd->add_option("--src", *src, "Source file")->required();
  cmd->add_option("--ref", *refs, "Reference file (repeat for several references)")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--save-hyp", *hyp_out, "Write the translations to this file");
  cmd->add_flag("--json", *json, "Print the scores as JSON");
  cmd->callback([a, src, refs, hyp_out, json] {
    auto lines = read_source_lines(*src, nullptr);
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
    train::set_threads(a->threads);
    decode::Translator translator(models::load_model(a->model_dir));
    decode::TranslateStats stats;
    const auto start = std::chrono::steady_clock::now();
    auto hyps = translator.translate(lines, decode_options(*a), &stats);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    warn_truncated(stats, a->quiet);
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
      if (!a->quiet)
        std::fprintf(stderr, "%zu sentences in %.2fs (%.1f sentences/s)\n", lines.size(), secs, lines.size() / std::max(secs, 1e-9));
    }
  });
}

}  // namespace nmt::cli
