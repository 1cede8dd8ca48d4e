#pragma once
// The search flags `nmt translate`, `eval`, `attention` and `serve` share: the output length
// limit and beam search's settings, declared and checked once so that a server decodes exactly
// as `nmt translate` does with the same flags.
#include <cmath>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "nmt/decode/beam.h"
#include "nmt/decode/search.h"
#include "nmt/util/error.h"

namespace nmt::cli {

struct SearchFlags {
  double max_len_a = 1.5;
  int64_t max_len_b = 10;
  decode::BeamOptions beam{1, 1, decode::LengthPenalty::kGnmt, 0.6};
  std::string length_penalty = "gnmt";

  // The length limit as decoding options (the batch size is the command's own).
  void apply_to(decode::DecodeOptions& d) const {
    d.max_len_a = max_len_a;
    d.max_len_b = max_len_b;
  }
};

// --beam's help differs: a default for a server's requests, the search for translate.
inline void add_search_flags(CLI::App* cmd, SearchFlags& s, const std::string& beam_help) {
  cmd->add_option("--max-len-a", s.max_len_a, "Output length limit: a * source length + b")->capture_default_str();
  cmd->add_option("--max-len-b", s.max_len_b, "Output length limit: a * source length + b")->capture_default_str();
  cmd->add_option("--beam", s.beam.beam, beam_help)->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--alpha", s.beam.alpha, "Length-penalty exponent α for --length-penalty gnmt")->capture_default_str();
  cmd->add_option("--length-penalty", s.length_penalty, "gnmt ((5+len)/6)^α, average (per token) or none")
      ->capture_default_str();
  cmd->add_flag("--beam-shrink", s.beam.shrink,
                "Each finished hypothesis gives its beam slot up (Marian) instead of keeping K live beams "
                "until K hypotheses finish (fairseq)");
}

// Checked before any model is loaded or file touched: NaN or a negative length factor would
// make every output empty, a huge beam exhaust memory.
inline void check_search_flags(SearchFlags& s, int max_beam) {
  if (!(std::isfinite(s.max_len_a) && s.max_len_a >= 0 && s.max_len_a <= 1000))
    throw UsageError(fmt::format("--max-len-a is {}, must be a number between 0 and 1000", s.max_len_a));
  if (s.max_len_b < 0 || s.max_len_b > 1'000'000)
    throw UsageError(fmt::format("--max-len-b is {}, must be between 0 and 1000000", s.max_len_b));
  if (!std::isfinite(s.beam.alpha)) throw UsageError(fmt::format("--alpha is {}, must be a finite number", s.beam.alpha));
  if (s.beam.beam < 1 || s.beam.beam > max_beam)
    throw UsageError(fmt::format("--beam is {}, must be between 1 and {}", s.beam.beam, max_beam));
  if (s.beam.nbest > s.beam.beam) throw UsageError("--nbest must not exceed --beam");
  s.beam.length_penalty = decode::parse_length_penalty(s.length_penalty);
}

}  // namespace nmt::cli
