// `nmt prepare`: a parallel corpus of any size → a binary dataset for `nmt train --data`;
// `nmt prepare --verify DIR` checks a dataset's checksums (after copying it to another host).
#include <cstdio>
#include <map>
#include <memory>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.h"
#include "nmt/data/dataset.h"
#include "nmt/data/prepare.h"
#include "nmt/util/option_spec.h"

namespace nmt::cli {
namespace {

struct PrepareArgs {
  data::PrepareOptions o;
  std::string verify;
  std::string subword_type = "unigram";
};

void run_verify(const std::string& dir) {
  const auto dataset = data::MappedDataset::open(dir);
  dataset->verify();
  const auto& m = dataset->manifest();
  std::fprintf(stderr, "%s: %zu shards, %llu pairs, %llu tokens: checksums match the manifest\n", dir.c_str(),
               m.shards.size(), static_cast<unsigned long long>(m.pairs), static_cast<unsigned long long>(m.tokens));
}

void run_prepare(PrepareArgs& a) {
  a.o.subword.model_type = a.subword_type;
  a.o.subword.hard_vocab_limit = false;  // as `nmt train` trains its subword model
  a.o.subword.num_threads = a.o.threads;
  const data::PrepareReport r = data::prepare_dataset(a.o);
  if (a.o.quiet) return;
  std::fprintf(stderr,
               "%s: %llu pairs (%llu lines read, %llu skipped, %llu too long), %llu tokens in %llu shards, %.1f MB; "
               "encoded in %.1f s (%.0f pairs/s)\n",
               a.o.out_dir.c_str(), static_cast<unsigned long long>(r.pairs), static_cast<unsigned long long>(r.lines),
               static_cast<unsigned long long>(r.skipped), static_cast<unsigned long long>(r.too_long),
               static_cast<unsigned long long>(r.tokens), static_cast<unsigned long long>(r.shards), r.bytes / 1e6,
               r.encode_seconds, r.pairs / std::max(r.encode_seconds, 1e-9));
}

}  // namespace

void add_prepare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "prepare",
      "Turn a parallel corpus of any size (plain, .gz, .xz or .zst) into a sharded binary dataset for "
      "`nmt train --data`, in bounded memory");
  auto a = std::make_shared<PrepareArgs>();
  a->o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::map<std::string, std::string> flags = {
      {"train_prefix", "--train"}, {"train_tsv", "--train-tsv"}, {"out_dir", "--out"}, {"subword_model", "--subword-model"},
      {"shard_pairs", "--shard-size"}, {"max_len", "--max-len"}, {"threads", "--threads"}};
  cmd->add_option("--train", a->o.train_prefix, "Parallel files PREFIX (reads PREFIX.SRC and PREFIX.TGT)");
  cmd->add_option("--train-tsv", a->o.train_tsv, "Tab-separated pair file (source<TAB>target[<TAB>...]); - = stdin");
  cmd->add_option("--src", a->o.src_lang, "Source language suffix")->capture_default_str();
  cmd->add_option("--tgt", a->o.tgt_lang, "Target language suffix")->capture_default_str();
  cmd->add_flag("--reverse", a->o.read.reverse, "With --train-tsv: the second column is the source");
  cmd->add_option("-o,--out", a->o.out_dir, "Dataset directory to create (must not exist)");
  cmd->add_option("--subword-model", a->o.subword_model,
                  "Use this SentencePiece model (e.g. a model directory's spm.model) instead of training one");
  cmd->add_option("--vocab-size", a->o.subword.vocab_size, "Vocabulary of the subword model trained here")
      ->capture_default_str()->check(CLI::Range(5, 1 << 22));
  cmd->add_option("--subword-type", a->subword_type, "SentencePiece model type")
      ->capture_default_str()->check(CLI::IsMember({"unigram", "bpe"}));
  cmd->add_option("--sample-sentences", a->o.subword.input_sentence_size,
                  "Sentences (both sides of a seeded sample of pairs) the subword model is trained on")
      ->capture_default_str()->check(CLI::Range(size_t{2}, size_t{1} << 32));
  cmd->add_option("--seed", a->o.subword.seed, "Seed of the sample and of the subword model")->capture_default_str();
  cmd->add_option("--shard-size", a->o.shard_pairs, "Pairs per shard file")->capture_default_str();
  cmd->add_option("--max-len", a->o.max_len, "Leave out pairs with a side of more subwords")->capture_default_str();
  cmd->add_option("--max-chars", a->o.read.max_chars, "Skip corpus lines longer than this many characters")
      ->capture_default_str()->check(CLI::Range(size_t{1}, size_t{1} << 40));
  cmd->add_flag("--strict", a->o.read.strict, "Bad corpus lines are errors instead of skipped");
  cmd->add_option("--threads", a->o.threads, "Encoding threads (default: the CPU's cores)");
  cmd->add_flag("-q,--quiet", a->o.quiet, "No progress or summary on stderr");
  cmd->add_option("--verify", a->verify, "Only check the checksums of the dataset DIR (e.g. after copying it)");
  cmd->callback([a, flags] {
    try {
      if (!a->verify.empty()) {
        if (!a->o.train_prefix.empty() || !a->o.train_tsv.empty() || !a->o.out_dir.empty())
          throw UsageError("--verify DIR checks a dataset; it takes no --train, --train-tsv or --out");
        run_verify(a->verify);
        return;
      }
      run_prepare(*a);
    } catch (const OptionError& e) {
      throw UsageError(e.message([&](const std::string& key) {
        const auto it = flags.find(key);
        return it == flags.end() ? key : it->second;
      }));
    }
  });
}

}  // namespace nmt::cli
