#pragma once
// The options of `nmt bleu`, sacreBLEU 2.6.0's command line, declared once: the struct and its
// table (util/option_spec.h), which app/cmd_bleu.cc binds to CLI11. Torch-free, in the scorer.
#include <optional>
#include <string>
#include <vector>

#include "nmt/util/option_spec.h"

namespace nmt::metrics {

struct BleuCommandOptions {
  std::vector<std::string> positionals;  // systems; references when -i names the systems
  std::vector<std::string> inputs;       // -i: systems
  std::vector<std::string> refs;         // -r: nmt's form, `-r REF SYS...`
  int num_refs = 1;
  std::vector<std::string> metrics{"bleu"};
  std::string tokenize;       // "": 13a, or what the language pair's target implies
  std::string language_pair;  // -l SRC-TGT, as sacreBLEU
  std::string test_set;       // -t: from sacreBLEU's local cache
  std::vector<std::string> echo;
  std::string encoding = "utf-8";
  bool lowercase = false;
  bool lowercase_by_l = false;  // `-l` without a language pair: nmt's old spelling of --lowercase
  bool lowercase_c = false;     // the "c" of "-lc" (CLI11 reads it as -l -c)
  std::string smooth_method = "exp";
  std::optional<double> smooth_value;
  bool sentence = false;
  std::optional<int> d2l_k;  // the non-standard d2l sentence BLEU of max order K
  bool json = false;
  std::optional<std::string> format;  // -f: unset keeps nmt's own layout for one system
  std::optional<int> width;           // unset: 2 in nmt's own layout, 1 in sacreBLEU's
  bool score_only = false;
  bool short_signature = false;
  bool confidence = false;
  int confidence_n = 1000;
  bool paired_bs = false;
  bool paired_ar = false;
  int paired_bs_n = 1000;
  int paired_ar_n = 10000;
  int paired_jobs = 1;  // accepted for sacreBLEU's command lines; one process gives the same figures
  bool quiet = false, no_color = false, force = false;  // accepted: nmt never logs, colours or warns here
  // sacreBLEU's, refused in one line each (they need its registry or downloads).
  bool list = false, citation = false, detail = false, version = false;
  std::string download, origlang, subset;
  bool ter_case_sensitive = false;
  bool ter_no_punct = false;
  bool ter_asian_support = false;
  bool ter_normalized = false;
  int chrf_char_order = 6;
  int chrf_word_order = 0;
  int chrf_beta = 2;
  bool chrf_lowercase = false;
  bool chrf_whitespace = false;
  bool chrf_eps_smoothing = false;
};

// In --help order. Hidden rows are sacreBLEU's options nmt accepts or refuses in one line.
const std::vector<OptionSpec<BleuCommandOptions>>& bleu_option_specs();

// "--width" for "width": the long flag of a key of this table, for the messages of OptionError.
std::string bleu_flag_of(const std::string& key);

}  // namespace nmt::metrics
