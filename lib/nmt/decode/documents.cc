#include "nmt/decode/documents.h"

#include <utility>
#include <vector>

namespace nmt::decode {

std::string translate_html_page(TranslationService& service, doc::HtmlPlan plan, const SearchOptions& search,
                                TranslateStats* stats) {
  doc::split_markup_sentences(plan, service.sentence_splitter());
  const auto translations = doc::translate_pieces({plan}, [&](const std::vector<std::string>& texts, bool markup) {
    std::vector<TranslationRequest> requests;
    for (const auto& t : texts) requests.push_back({t, {}, {}});
    ResultOptions fields;
    fields.split_sentences = !markup;  // markup pieces are already one sentence each
    fields.markup = markup;
    std::vector<std::string> out;
    for (auto& n : service.translate(requests, search, fields, stats)) out.push_back(std::move(n.front().text));
    return out;
  });
  return doc::apply_translations(plan, translations.front());
}

}  // namespace nmt::decode
