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
  decode::BeamOptions beam{1, 1, "gnmt", 0.6};
  bool use_beam() const { return beam.beam > 1 || beam.nbest > 1; }
};

void add_decode_options(CLI::App* cmd, DecodeArgs& a) {
  cmd->add_option("-m,--model", a.model_dir, "Model directory written by nmt train")->required();
  cmd->add_option("--threads", a.threads, "LibTorch intra-op threads (0 = default)")->capture_default_str();
  cmd->add_option("--batch-size", a.batch_size, "Sentences per batch")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-len-a", a.max_len_a, "Output length limit: a * source length + b")->capture_default_str();
  cmd->add_option("--max-len-b", a.max_len_b, "Output length limit: a * source length + b")->capture_default_str();
  cmd->add_flag("-q,--quiet", a.quiet, "No warnings or progress on stderr (errors still shown)");
  cmd->add_option("--beam", a.beam.beam, "Beam size (1 = greedy decoding)")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--alpha", a.beam.alpha, "Length-penalty exponent α for --length-penalty gnmt")->capture_default_str();
  cmd->add_option("--length-penalty", a.beam.length_penalty, "gnmt ((5+len)/6)^α, average (per token) or none")
      ->capture_default_str()
      ->check(CLI::IsMember({"gnmt", "average", "none"}));
}

// Best translation per line, greedy or beam search.
std::vector<std::string> translate_lines(decode::Translator& translator, const std::vector<std::string>& lines,
                                         const DecodeArgs& a, const decode::DecodeOptions& d,
                                         decode::TranslateStats* stats) {
  if (!a.use_beam()) return translator.translate(lines, d, stats);
  std::vector<std::string> out;
  for (auto& n : translator.translate_beam(lines, d, a.beam, stats)) out.push_back(std::move(n.front().text));
  return out;
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

namespace {
// One JSON object per translated line: subword tokens of source and target (each ending in
// </s>) and the decoder's attention, one row per target token, each summing to 1 over the
// source tokens.
void write_attention(std::ostream& out, size_t line_no, const decode::Hypothesis& h, const std::string& source,
                     const text::SubwordModel& sp) {
  nlohmann::json j;
  j["line"] = line_no;
  auto ids = sp.encode(source);
  if (!h.attention.empty()) ids.resize(std::min(ids.size(), h.attention.front().size() - 1));  // truncated input
  auto src_pieces = sp.pieces(ids);
  if (!ids.empty()) src_pieces.push_back("</s>");
  auto tgt_pieces = sp.pieces(h.tokens);
  if (h.attention.size() > h.tokens.size()) tgt_pieces.push_back("</s>");
  j["source"] = src_pieces;
  j["target"] = tgt_pieces;
  j["attention"] = h.attention;
  out << j.dump() << '\n';
}
}  // namespace

void add_translate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("translate", "Translate text with a trained model (stdin → stdout by default)");
  auto a = std::make_shared<DecodeArgs>();
  auto input = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto attention = std::make_shared<std::string>();
  auto layer = std::make_shared<int64_t>(-1);
  auto head = std::make_shared<int64_t>(-1);
  add_decode_options(cmd, *a);
  cmd->add_option("-i,--input", *input, "Input file (default: stdin)");
  cmd->add_option("-o,--output", *output, "Output file (default: stdout)");
  cmd->add_option("--attention", *attention, "Write each sentence's tokens and attention matrix to FILE as JSON lines");
  cmd->add_option("--attention-layer", *layer, "Transformer decoder layer whose cross-attention is written (-1 = last)")
      ->capture_default_str();
  cmd->add_option("--attention-head", *head, "Transformer head to write (-1 = average over heads)")->capture_default_str();
  cmd->add_option("--nbest", a->beam.nbest,
                  "Print the N best hypotheses per line as 'LINE ||| translation ||| score' (LINE counts from 0; "
                  "score = log-probability / length penalty)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->callback([a, input, output, attention, layer, head] {
    train::set_threads(a->threads);
    decode::Translator translator(models::load_model(a->model_dir));
    auto d = decode_options(*a);
    d.record_attention = !attention->empty();
    d.attention_layer = *layer;
    d.attention_head = *head;
    std::unique_ptr<std::ofstream> file, attention_file;
    std::ostream* out = &std::cout;
    if (!output->empty()) {
      file = std::make_unique<std::ofstream>(*output, std::ios::binary | std::ios::trunc);
      if (!*file) throw RuntimeError(fmt::format("{}: cannot write", *output));
      out = file.get();
    }
    if (!attention->empty()) {
      attention_file = std::make_unique<std::ofstream>(*attention, std::ios::binary | std::ios::trunc);
      if (!*attention_file) throw RuntimeError(fmt::format("{}: cannot write", *attention));
    }
    decode::TranslateStats stats;
    size_t written = 0;
    // Translates a chunk of lines and writes results at once, so nothing already translated is
    // lost if a later line is bad.
    auto translate_chunk = [&](const std::vector<std::string>& chunk) {
      if (a->use_beam()) {
        if (attention_file) throw UsageError("--attention works with greedy decoding only (--beam 1)");
        if (a->beam.nbest > a->beam.beam) throw UsageError("--nbest must not exceed --beam");
        auto results = translator.translate_beam(chunk, d, a->beam, &stats);
        for (size_t i = 0; i < results.size(); ++i) {
          if (a->beam.nbest == 1) {
            *out << results[i].front().text << '\n';
            continue;
          }
          for (const auto& r : results[i])
            *out << (written + i) << " ||| " << r.text << " ||| " << fmt::format("{:.6f}", r.hypothesis.score) << '\n';
        }
        written += results.size();
        out->flush();
        return;
      }
      std::vector<decode::Hypothesis> hyps;
      auto outs = translator.translate(chunk, d, &stats, attention_file ? &hyps : nullptr);
      for (size_t i = 0; i < outs.size(); ++i) {
        *out << outs[i] << '\n';
        if (attention_file) write_attention(*attention_file, written + i + 1, hyps[i], chunk[i], translator.subwords());
      }
      written += outs.size();
      out->flush();
    };
    if (input->empty()) {
      // A filter: line by line when interactive, in chunks otherwise.
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
        if (interactive || pending.size() >= 1024) {
          translate_chunk(pending);
          pending.clear();
        }
      }
      translate_chunk(pending);
    } else {
      translate_chunk(read_source_lines(*input, nullptr));
    }
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
    auto hyps = translate_lines(translator, lines, *a, decode_options(*a), &stats);
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
