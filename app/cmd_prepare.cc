// `nmt prepare`: a parallel corpus of any size → a binary dataset for `nmt train --data`;
// `nmt prepare --verify DIR` checks a dataset's checksums (after copying it to another host).
#include <algorithm>
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "option_binder.h"
#include "nmt/data/dataset.h"
#include "nmt/data/prepare.h"
#include "nmt/data/prepare_options.h"

namespace nmt::cli {
namespace {

void run_verify(const std::string& dir) {
  const auto dataset = data::MappedDataset::open(dir);
  dataset->verify();
  const auto& m = dataset->manifest();
  std::fprintf(stderr, "%s: %zu shards, %llu pairs, %llu tokens: checksums match the manifest\n", dir.c_str(),
               m.shards.size(), static_cast<unsigned long long>(m.pairs), static_cast<unsigned long long>(m.tokens));
}

void run_prepare(data::PrepareOptions o) {
  o.subword.hard_vocab_limit = false;  // as `nmt train` trains its subword model
  o.subword.num_threads = o.threads;
  const data::PrepareReport r = data::prepare_dataset(o);
  if (o.quiet) return;
  std::fprintf(stderr,
               "%s: %llu pairs (%llu lines read, %llu skipped, %llu too long), %llu tokens in %llu shards, %.1f MB; "
               "encoded in %.1f s (%.0f pairs/s)\n",
               o.out_dir.c_str(), static_cast<unsigned long long>(r.pairs), static_cast<unsigned long long>(r.lines),
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
  auto binder = std::make_shared<OptionBinder<data::PrepareCommandOptions>>(cmd, data::prepare_option_specs(),
                                                                           data::prepare_command_defaults());
  cmd->callback([binder] {
    const data::PrepareCommandOptions a = binder->checked(data::prepare_command_defaults());
    // The library names options by key; the command line by this table's flags.
    with_flag_names([&] {
      const data::PrepareOptions& o = a.prepare;
      if (!a.verify.empty()) {
        if (!o.train_prefix.empty() || !o.train_tsv.empty() || !o.out_dir.empty())
          throw UsageError("--verify DIR checks a dataset; it takes no --train, --train-tsv or --out");
        run_verify(a.verify);
        return;
      }
      run_prepare(o);
    }, binder->flag_names());
  });
}

}  // namespace nmt::cli
