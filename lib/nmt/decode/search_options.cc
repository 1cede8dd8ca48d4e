#include "nmt/decode/search_options.h"

#include <stdexcept>

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt::decode {

void parse_sampling(const std::string& spec, SamplingOptions& options) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon), value = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const auto bad = [&] {
    return UsageError(fmt::format("--sampling is '{}': use top-k:K (K >= 1) or top-p:P (0 < P <= 1)", spec));
  };
  size_t used = 0;
  try {
    if (kind == "top-k") {
      const long long k = std::stoll(value, &used);
      if (used != value.size() || k < 1) throw bad();
      options.top_k = k;
      return;
    }
    if (kind == "top-p") {
      const double p = std::stod(value, &used);
      if (used != value.size() || !(p > 0 && p <= 1)) throw bad();
      options.top_p = p;
      return;
    }
  } catch (const std::logic_error&) {  // stoll / stod: not a number, out of range
    throw bad();
  }
  throw bad();
}

SamplingOptions SearchOptions::sampling_options() const {
  SamplingOptions s;
  s.temperature = temperature;
  s.seed = seed;
  if (use_sampling()) parse_sampling(sampling, s);
  return s;
}

const std::vector<OptionSpec<SearchOptions>>& search_option_specs() {
  using O = SearchOptions;
  static const std::vector<OptionSpec<O>> specs = {
      option("beam", "--beam", "Search", "Beam size (1 = greedy decoding)", &O::beam).range(1, kMaxBeam),
      option("nbest", "--nbest", "Search",
             "Print the N best hypotheses per line as 'LINE ||| translation ||| score' (LINE counts from 0; "
             "score = log-probability / length penalty)",
             &O::nbest)
          .range(1, kMaxBeam),
      option("length_penalty", "--length-penalty", "Search",
             "Beam search ranks hypotheses by log-probability / this penalty, gnmt being ((5+len)/6)^α and "
             "average the length",
             &O::length_penalty),
      option("alpha", "--alpha", "Search", "Length-penalty exponent α for --length-penalty gnmt", &O::alpha)
          .range(-100, 100),
      option("shrink", "--beam-shrink", "Search",
             "Each finished hypothesis gives its beam slot up (Marian) instead of keeping K live beams until K "
             "hypotheses finish (fairseq)",
             &O::shrink)
          .as_switch(),
      option("sampling", "--sampling", "Search",
             "Sample each next token instead of searching: top-k:K (among the K most probable) or top-p:P (among "
             "the most probable tokens holding probability P)",
             &O::sampling),
      option("temperature", "--temperature", "Search", "Sampling temperature (< 1 sharper, > 1 flatter)",
             &O::temperature)
          .positive(1000),
      option("seed", "--seed", "Search", "Sampling seed: the same seed gives the same samples", &O::seed),
      option("max_len_a", "--max-len-a", "Search", "Output length limit: a * source length + b", &O::max_len_a)
          .range(0, 1000),
      option("max_len_b", "--max-len-b", "Search", "Output length limit: a * source length + b", &O::max_len_b)
          .range(0, 1'000'000),
      option("batch_size", "--batch-size", "Search", "Sentences per batch", &O::batch_size)
          .range(1, kMaxBatchSentences),
      option("no_repeat_ngram", "--no-repeat-ngram", "Search",
             "No translation repeats a subword n-gram of this size (fairseq's --no-repeat-ngram-size; 0 = off): "
             "stops repetition loops such as 'un un un'",
             &O::no_repeat_ngram)
          .range(0, 1000),
  };
  return specs;
}

void validate_search_options(const SearchOptions& o, const std::function<std::string(const std::string&)>& name) {
  try {
    check_options(o, search_option_specs());
    if (o.nbest > o.beam) throw OptionError(std::vector<std::string>{"nbest", "beam"}, "{0} must not exceed {1}");
    if (o.use_sampling() && o.use_beam())
      throw OptionError(std::vector<std::string>{"sampling", "beam", "nbest"}, "{0} draws one translation per line: it does not combine with {1} or {2}");
    if (!o.use_sampling() && o.temperature != 1.0) throw OptionError(std::vector<std::string>{"temperature", "sampling"}, "{0} applies to {1} only");
  } catch (const OptionError& e) {
    if (!name) throw;
    throw UsageError(e.message(name));
  }
  o.sampling_options();  // a malformed --sampling: UsageError naming it
}

std::string search_name(const SearchOptions& o) {
  if (o.use_sampling()) return "sampling " + o.sampling;
  return o.use_beam() ? fmt::format("beam {}", o.beam) : std::string("greedy decoding");
}

}  // namespace nmt::decode
