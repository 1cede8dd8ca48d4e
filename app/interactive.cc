#include "interactive.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "nmt/text/unicode.h"
#include "nmt/viz/heatmap.h"
#include "nmt/viz/progress.h"

namespace nmt::cli {

namespace {

// The last sentence translated, for :attn.
struct LastTranslation {
  std::string source;
  decode::TranslationResult result;
  bool any = false;
};

// Runs a ":" command; false when it asks to leave.
bool run_command(const std::string& cmd, const decode::TranslationService& service, const LastTranslation& last) {
  if (cmd == ":quit" || cmd == ":q" || cmd == ":exit") return false;
  if (cmd == ":help") {
    std::fputs("  type a sentence to translate it\n  :attn  attention of the last sentence\n  :quit  leave (or Ctrl-D)\n", stderr);
  } else if (cmd == ":attn") {
    const bool color = viz::is_terminal(stdout) && std::getenv("NO_COLOR") == nullptr;
    if (!last.any)
      std::fputs("no sentence translated yet\n", stderr);
    else if (last.result.attention.empty())
      std::fputs("the last input was several sentences: :attn shows one sentence's attention (type one alone)\n",
                 stderr);
    else
      std::fputs(viz::attention_text(service.attention_map(last.result, last.source), color).c_str(), stdout);
    std::fflush(stdout);
  } else {
    std::fprintf(stderr, "unknown command %s (try :help)\n", cmd.c_str());
  }
  return true;
}

}  // namespace

void run_interactive(decode::TranslationService& service, const decode::SearchOptions& search) {
  decode::ResultOptions fields;
  fields.attention = true;
  fields.split_sentences = true;  // (attention is then kept for an input of one sentence)
  std::fprintf(stderr, "nmt %s model, %s. Type a sentence and press Enter; :attn shows the last attention, :help, :quit or Ctrl-D to leave.\n",
               service.model_description().c_str(), decode::search_name(search).c_str());
  std::string line;
  LastTranslation last;
  for (;;) {
    std::fputs("> ", stderr);
    std::fflush(stderr);
    if (!std::getline(std::cin, line)) {
      std::fputs("\n", stderr);
      break;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto cmd = std::string(text::python_strip(std::string_view(line)));
    if (!cmd.empty() && cmd[0] == ':') {
      if (!run_command(cmd, service, last)) break;
      continue;
    }
    if (!text::is_valid_utf8(line)) {
      std::fputs("that line is not valid UTF-8; nothing translated\n", stderr);
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    decode::TranslateStats stats;
    last = {line, service.translate({{line, {}, {}}}, search, fields, &stats).front().front(), true};
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s\n", last.result.text.c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "  (%.0f ms%s)\n", ms, stats.truncated ? ", input truncated to the model's limit" : "");
  }
}

}  // namespace nmt::cli
