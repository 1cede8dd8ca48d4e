#pragma once
// The page `nmt serve` answers GET / with: a text box translated as you type, the model and
// search options, and the word alignment shown on hover. Self-contained (its style and script
// inline, nothing loaded from elsewhere) and speaking only the server's own JSON API.
// `/?q=TEXT` fills the box and translates it at once (a link to a translation; the tests'
// way in through a headless browser), `&hover=N` then points at the translation's word N.
#include <string_view>

namespace nmt::serve {

std::string_view web_page();

}  // namespace nmt::serve
