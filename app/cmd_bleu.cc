// `nmt bleu`: sacreBLEU 2.6.0's command line (metrics/bleu_options.h declares its options,
// metrics/bleu_command.h scores and prints). This file binds the table to CLI11 and spells out
// sacreBLEU's several-letter short options, which CLI11 cannot name.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "option_binder.h"
#include "nmt/metrics/bleu_command.h"
#include "nmt/metrics/bleu_options.h"

namespace nmt::cli {

void add_bleu_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bleu",
      "Score systems against references with BLEU, chrF and TER, identical to sacreBLEU 2.6.0 "
      "(`sacrebleu REF... -i SYS... -m bleu chrf ter`), with its confidence intervals and paired tests; "
      "lines are split on \\n and rstripped");
  auto flags = std::make_shared<OptionBinder<metrics::BleuCommandOptions>>(cmd, metrics::bleu_option_specs());
  cmd->callback([flags] {
    metrics::BleuCommandOptions o;
    flags->apply(o, metrics::bleu_flag_of);  // this binary links no other command's table
    if (o.lowercase_by_l && !o.version)
      std::fprintf(stderr, "nmt: warning: `-l` alone as --lowercase is deprecated: sacreBLEU's -l is --language-pair "
                           "SRC-TGT; use -lc or --lowercase\n");
    metrics::run_bleu_command(std::move(o));
  });
}

// "en-de", "de-en", "en-zh"...: letters, one dash, letters (sacreBLEU's pairs; also "zh-yue"-like
// three-part codes have letters around every dash). Not a file name with a dot or a slash.
static bool is_language_pair(const std::string& s) {
  if (s.empty() || s.front() == '-' || s.back() == '-' || s.find('-') == std::string::npos) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '-'; });
}

std::vector<std::string> expand_sacrebleu_options(const std::vector<std::string>& args) {
  // sacreBLEU's short options of several letters, which CLI11 cannot name (it reads "-sl" as
  // "-s l"), spelled out after the `bleu` subcommand.
  static const std::vector<std::pair<std::string, std::string>> kAliases{
      {"-sl", "--sentence-level"}, {"-tok", "--tokenize"},    {"-lc", "--lowercase"},    {"-sv", "--smooth-value"},
      {"-cc", "--chrf-char-order"}, {"-cw", "--chrf-word-order"}, {"-ci", "--confidence"}, {"-cin", "--confidence-n"},
      {"-par", "--paired-ar"},     {"-pbs", "--paired-bs"},   {"-parn", "--paired-ar-n"}, {"-pbsn", "--paired-bs-n"},
      {"-sh", "--short"},          {"-nr", "--num-refs"},     {"-nc", "--no-color"},     {"-ol", "--origlang"}};
  std::vector<std::string> out;
  bool in_bleu = false;
  for (const std::string& a : args) {
    if (!in_bleu) {
      in_bleu = a == "bleu";
      out.push_back(a);
      continue;
    }
    if (a == "-l") {  // sacreBLEU's -l SRC-TGT; nmt's older -l (lowercase) when no pair follows
      const size_t i = &a - args.data();
      const bool pair_follows = i + 1 < args.size() && is_language_pair(args[i + 1]);
      out.push_back(pair_follows ? "--language-pair" : "--lowercase-by-l");
      continue;
    }
    auto it = std::find_if(kAliases.begin(), kAliases.end(), [&](const auto& p) { return p.first == a; });
    out.push_back(it == kAliases.end() ? a : it->second);
  }
  return out;
}

}  // namespace nmt::cli
