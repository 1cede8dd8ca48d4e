#pragma once
// `nmt translate` on a terminal with no input or output file: a prompt, each line translated
// as it is typed with the time it took, `:attn` for the last sentence's attention.
#include "nmt/decode/search_options.h"
#include "nmt/decode/service.h"

namespace nmt::cli {

void run_interactive(decode::TranslationService& service, const decode::SearchOptions& search);

}  // namespace nmt::cli
