#pragma once
// A flag for translations caught in a repetition loop ("un chien un chien un chien", "le le le"),
// the failure small models fall into on inputs unlike their training data: callers route
// flagged lines to a person (nmt translate --json, nmt serve's answers).
#include <string_view>

namespace nmt::text {

// Whether the words of `text` (split at whitespace) contain a run of 1 to 4 words repeated
// back to back: a single word three times in a row ("très très très"; twice is ordinary
// language: "bye bye"), a run of two or more words twice ("the dog the dog").
bool has_repetition_loop(std::string_view text);

}  // namespace nmt::text
