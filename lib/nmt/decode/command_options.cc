#include "nmt/decode/command_options.h"

namespace nmt::decode {

namespace {
constexpr const char* kIo = "Input and output";
}

const std::vector<OptionSpec<TranslateIoOptions>>& translate_io_option_specs() {
  using O = TranslateIoOptions;
  static const std::vector<OptionSpec<O>> specs = {
      option("input", "-i,--input", kIo, "Input file (default: stdin)", &O::input),
      option("output", "-o,--output", kIo, "Output file (default: stdout)", &O::output),
      option("attention", "--attention", kIo, "Write each sentence's tokens and attention matrix to FILE as JSON lines",
             &O::attention),
      option("attention_svg", "--attention-svg", kIo,
             "Draw each sentence's attention as an SVG heatmap: FILE for one line, FILE-N.svg for line N of several",
             &O::attention_svg),
      option("attention_layer", "--attention-layer", kIo,
             "Transformer decoder layer whose cross-attention is written (-1 = last)", &O::attention_layer),
      option("attention_head", "--attention-head", kIo, "Transformer head to write (-1 = average over heads)",
             &O::attention_head),
      option("prefix_file", "--prefix-file", kIo,
             "Force the translation of input line N to start with line N of FILE (target text; an empty line forces "
             "nothing)",
             &O::prefix_file),
      option("prefix_tab", "--prefix-tab", kIo,
             "Each input line is SOURCE<TAB>PREFIX: the translation starts with PREFIX (no tab: no prefix)",
             &O::prefix_tab)
          .as_switch(),
      option("alignment", "--alignment", kIo,
             "Append ' ||| ' and the word alignment to each line: Pharaoh source-target pairs of whole words (0-0 1-2 "
             "...), from the cross-attention --attention-layer/--attention-head choose",
             &O::alignment)
          .as_switch(),
      option("markup", "--markup", kIo,
             "Input lines are text with inline tags (<b>, <i>, <x id=\"1\"/>, ...) and entities: the tags are taken "
             "out, the text translated, and the tags put back around the aligned words (the output is escaped markup)",
             &O::markup)
          .as_switch(),
      option("input_format", "--format", kIo,
             "What the input is: text (lines), html (a document: its text translated, everything else kept), or auto "
             "(html for an --input ending in .html, .htm or .xhtml, else text)",
             &O::input_format)
          .one_of({"auto", "text", "html"}),
      option("whole_lines", "--whole-lines", kIo,
             "Translate each input line as one sentence (default: a line of several sentences is split into them, "
             "they are translated, and the translations joined with the line's own spacing; --markup, --attention "
             "and --attention-svg imply it)",
             &O::whole_lines)
          .as_switch(),
      option("constraints", "--constraints", kIo,
             "Line N of FILE: tab-separated phrases the translation of input line N must contain (terminology; beam "
             "search with dynamic beam allocation; an empty line: none)",
             &O::constraints),
      option("avoid_per_line", "--avoid-per-line", kIo,
             "Line N of FILE: tab-separated phrases the translation of input line N must not contain",
             &O::avoid_per_line),
      option("avoid", "--avoid", kIo, "FILE: one phrase per line that no translation may contain", &O::avoid),
      option("json", "--json", kIo,
             "Write one JSON object per line: translation, score, confidence (mean log-probability per token), "
             "repetition (a loop such as \"un un un\"), unmet_constraints, and with --nbest the list",
             &O::json)
          .as_switch(),
  };
  return specs;
}

const std::vector<OptionSpec<EvalIoOptions>>& eval_io_option_specs() {
  using O = EvalIoOptions;
  static const std::vector<OptionSpec<O>> specs = {
      option("src", "--src", kIo, "Source file", &O::src).is_required(),
      list_option("references", "--ref", kIo, "Reference file (repeat for several references)", &O::references)
          .one_value_per_flag()
          .is_required(),
      option("save_hyp", "--save-hyp", kIo, "Write the translations to this file", &O::save_hyp),
      option("json", "--json", kIo, "Print the scores as JSON", &O::json).as_switch(),
  };
  return specs;
}

const std::vector<OptionSpec<ScoreIoOptions>>& score_io_option_specs() {
  using O = ScoreIoOptions;
  static const std::vector<OptionSpec<O>> specs = {
      option("src", "--src", kIo, "Source lines", &O::src).is_required(),
      option("tgt", "--tgt", kIo, "Target lines to score, one per source line", &O::tgt).is_required(),
      option("output", "-o,--output", kIo, "Output file (default: stdout)", &O::output),
      option("normalize", "--normalize", kIo, "Divide each score by its number of target subwords plus EOS",
             &O::normalize)
          .as_switch(),
      option("per_token", "--per-token", kIo,
             "After each score, a tab and the log-probability of every target subword, EOS last", &O::per_token)
          .as_switch(),
  };
  return specs;
}

const std::vector<OptionSpec<AttentionIoOptions>>& attention_io_option_specs() {
  using O = AttentionIoOptions;
  static const std::vector<OptionSpec<O>> specs = {
      option("attention_sentence", "sentence", kIo, "The source sentence", &O::sentence).is_required(),
      option("output", "-o,--output", kIo, "SVG file to write", &O::output),
      option("text", "--text", kIo, "Print a coloured text heatmap instead of writing an SVG", &O::text).as_switch(),
      option("layer", "--layer", kIo, "Transformer decoder layer (-1 = last)", &O::layer),
      option("head", "--head", kIo, "Transformer head (-1 = average over heads)", &O::head),
  };
  return specs;
}

}  // namespace nmt::decode
