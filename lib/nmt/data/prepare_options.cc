#include "nmt/data/prepare_options.h"

#include <algorithm>
#include <thread>

namespace nmt::data {

PrepareCommandOptions prepare_command_defaults() {
  PrepareCommandOptions o;
  o.prepare.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return o;
}

const std::vector<OptionSpec<PrepareCommandOptions>>& prepare_option_specs() {
  using C = PrepareCommandOptions;
  using P = PrepareOptions;
  using R = ReadOptions;
  using W = text::SubwordOptions;
  // Rows of the nested option structs, seen from PrepareCommandOptions. The ranges and choices
  // are checked as the command line is read, so --help and their errors keep the words they had.
  const auto of_prepare = [](OptionSpec<P> spec) { return nested(spec, &C::prepare); };
  const auto of_read = [&](OptionSpec<R> spec) { return of_prepare(nested(spec, &P::read)); };
  const auto of_subword = [&](OptionSpec<W> spec) { return of_prepare(nested(spec, &P::subword)); };
  // The default is this machine's core count: --help shows none.
  const auto no_default_shown = [](OptionSpec<P> spec) {
    spec.text = [](const P&) { return std::string(); };
    return spec;
  };
  static const std::vector<OptionSpec<C>> specs = {
      of_prepare(option("train_prefix", "--train", "", "Parallel files PREFIX (reads PREFIX.SRC and PREFIX.TGT)",
                        &P::train_prefix)),
      of_prepare(option("train_tsv", "--train-tsv", "",
                        "Tab-separated pair file (source<TAB>target[<TAB>...]); - = stdin", &P::train_tsv)),
      of_prepare(option("src_lang", "--src", "", "Source language suffix", &P::src_lang)),
      of_prepare(option("tgt_lang", "--tgt", "", "Target language suffix", &P::tgt_lang)),
      of_read(option("reverse", "--reverse", "", "With --train-tsv: the second column is the source", &R::reverse)
                  .as_switch()),
      of_prepare(option("out_dir", "-o,--out", "", "Dataset directory to create (must not exist)", &P::out_dir)),
      of_prepare(option("subword_model", "--subword-model", "",
                        "Use this SentencePiece model (e.g. a model directory's spm.model) instead of training one",
                        &P::subword_model)),
      of_subword(option("vocab_size", "--vocab-size", "", "Vocabulary of the subword model trained here",
                        &W::vocab_size)
                     .range(5, 1 << 22)
                     .checked_when_read()),
      of_subword(option("subword_type", "--subword-type", "", "SentencePiece model type", &W::model_type)
                     .one_of({"unigram", "bpe"})
                     .checked_when_read()),
      of_subword(option("sample_sentences", "--sample-sentences", "",
                        "Sentences (both sides of a seeded sample of pairs) the subword model is trained on",
                        &W::input_sentence_size)
                     .range(2, 1ULL << 32)
                     .checked_when_read()),
      of_subword(option("seed", "--seed", "", "Seed of the sample and of the subword model", &W::seed)),
      of_prepare(option("shard_pairs", "--shard-size", "", "Pairs per shard file", &P::shard_pairs)),
      of_prepare(option("max_len", "--max-len", "", "Leave out pairs with a side of more subwords", &P::max_len)),
      of_read(option("max_chars", "--max-chars", "", "Skip corpus lines longer than this many characters",
                     &R::max_chars)
                  .range(1, 1ULL << 40)
                  .checked_when_read()),
      of_read(option("strict", "--strict", "", "Bad corpus lines are errors instead of skipped", &R::strict)
                  .as_switch()),
      of_prepare(no_default_shown(
          option("threads", "--threads", "", "Encoding threads (default: the CPU's cores)", &P::threads))),
      of_prepare(option("quiet", "-q,--quiet", "", "No progress or summary on stderr", &P::quiet).as_switch()),
      option("verify", "--verify", "", "Only check the checksums of the dataset DIR (e.g. after copying it)",
             &C::verify),
  };
  return specs;
}

}  // namespace nmt::data
