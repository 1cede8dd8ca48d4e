#pragma once
// The decoding commands' own options, beside the search and runtime tables they share
// (decode/search_options.h, util/runtime_options.h): where `nmt translate`, `eval`, `score`
// and `attention` read and write. Declared once here like every other table, bound by
// app/option_binder.h. Torch-free.
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/decode/request_reader.h"
#include "nmt/util/option_spec.h"

namespace nmt::decode {

struct TranslateIoOptions {
  std::string input, output;          // empty: stdin, stdout
  std::string attention, attention_svg;
  int64_t attention_layer = -1, attention_head = -1;
  std::string prefix_file;
  bool prefix_tab = false;
  std::string constraints, avoid_per_line, avoid;
  bool json = false, alignment = false, markup = false;
  bool whole_lines = false;  // each line translated as one sentence
  std::string input_format = "auto";  // auto (by --input's extension), text, html

  RequestFiles request_files() const { return {prefix_file, prefix_tab, constraints, avoid_per_line, avoid}; }
};
const std::vector<OptionSpec<TranslateIoOptions>>& translate_io_option_specs();

// --record/--no-record is bound beside this table (docs/design.md, "Flags outside the option
// tables").
struct EvalIoOptions {
  std::string src, save_hyp;
  std::vector<std::string> references;
  bool json = false;
};
const std::vector<OptionSpec<EvalIoOptions>>& eval_io_option_specs();

struct ScoreIoOptions {
  std::string src, tgt, output;
  bool normalize = false, per_token = false;
};
const std::vector<OptionSpec<ScoreIoOptions>>& score_io_option_specs();

struct AttentionIoOptions {
  std::string sentence;  // a positional argument
  std::string output = "attention.svg";
  bool text = false;
  int64_t layer = -1, head = -1;
};
const std::vector<OptionSpec<AttentionIoOptions>>& attention_io_option_specs();

}  // namespace nmt::decode
