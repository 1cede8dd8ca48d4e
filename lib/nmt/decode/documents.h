#pragma once
// Whole documents through the translation service: what `nmt translate --format html` and the
// Python module's translate_file do with a page (the server batches its pages' pieces itself,
// serve/server.cc, through the same doc/html.h steps).
#include <string>

#include "nmt/decode/service.h"
#include "nmt/doc/html.h"

namespace nmt::decode {

// The page with its text translated (doc/html.h says what is and what is kept): block text
// cut into sentences, inline tags through the markup path, attributes people read.
std::string translate_html_page(TranslationService& service, doc::HtmlPlan plan, const SearchOptions& search,
                                TranslateStats* stats = nullptr);

}  // namespace nmt::decode
