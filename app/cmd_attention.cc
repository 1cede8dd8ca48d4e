// `nmt attention`: translate one sentence and draw its attention, an SVG file or a coloured
// text heatmap on the terminal.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "decode_flags.h"
#include "nmt/decode/command_options.h"
#include "nmt/decode/service.h"
#include "nmt/tensor/threads.h"
#include "nmt/text/unicode.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/viz/heatmap.h"

namespace nmt::cli {

namespace {

struct AttentionFlags {
  explicit AttentionFlags(CLI::App* cmd) : decode(cmd, OptionUse{{}, {"nbest"}, {}}), io(cmd, decode::attention_io_option_specs()) {}
  DecodeFlags decode;
  OptionBinder<decode::AttentionIoOptions> io;
};

void run_attention(const AttentionFlags& flags) {
  const DecodeArgs a = flags.decode.args();
  const decode::AttentionIoOptions io = flags.io.checked();
  if (!text::is_valid_utf8(io.sentence)) throw UsageError("the sentence is not valid UTF-8");
  set_threads(a.runtime.threads);
  decode::TranslationService service(a.model_dirs, a.runtime);
  decode::ResultOptions fields;
  fields.attention = true;
  fields.attention_choice = service.attention_choice(io.layer, io.head, "--layer", "--head");
  const auto best = service.translate({{io.sentence, {}, {}}}, a.search, fields).front().front();
  std::cout << best.text << '\n';
  if (best.attention.empty()) throw UsageError("the sentence is empty: nothing to draw");
  const auto map = service.attention_map(best, io.sentence);
  if (io.text) {
    std::cout << viz::attention_text(map, viz::is_terminal(stdout) && std::getenv("NO_COLOR") == nullptr);
    return;
  }
  write_file_atomic(io.output, viz::attention_svg(map, service.attention_title(fields.attention_choice)));
  if (!a.runtime.quiet) std::fprintf(stderr, "attention heatmap written to %s\n", io.output.c_str());
}

}  // namespace

void add_attention_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("attention", "Translate one sentence and draw its attention (SVG file, or text on the terminal)");
  auto flags = std::make_shared<AttentionFlags>(cmd);
  cmd->callback([flags] { run_attention(*flags); });
}

}  // namespace nmt::cli
