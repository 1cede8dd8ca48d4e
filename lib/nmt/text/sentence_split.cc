#include "nmt/text/sentence_split.h"

#include <fmt/format.h>
#include <unicode/brkiter.h>
#include <unicode/ures.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>

#include <algorithm>
#include <cstdint>
#include <mutex>

#include "nmt/text/unicode.h"
#include "nmt/util/error.h"

namespace nmt::text {

namespace {

// Titles CLDR's English list lacks ("Dr.", "St.", "Gen."; see docs/experiments.md,
// "2026-12-03: sentence splitting of paragraphs"): each comes before a name, so a full stop
// after one ends no sentence. Abbreviations that often do end one ("Inc.", "Jr.") are left out.
constexpr const char* kEnglishTitles[] = {"Dr.",  "St.",   "Gen.",  "Lt.",    "Hon.",  "Gov.", "Sen.",
                                          "Adm.", "Maj.",  "Cpl.",  "Pvt.",   "Fr.",   "Pres.", "Supt.",
                                          "Ft.",  "Brig.", "Cmdr.", "Insp.",  "Rt.",   "Messrs.", "Mmes.",
                                          "Figs.", "Fig.", "Eqs.",  "Eq."};

// "en" of "en", "en_US", "en-GB".
std::string base_language(const std::string& language) { return language.substr(0, language.find_first_of("_-")); }

// CLDR's abbreviations after which a sentence does not end, as ICU's data carries them
// (brkitr/LANG: exceptions/SentenceBreak); none for a language without a list. Read here, not
// through ICU's FilteredBreakIteratorBuilder: ICU 72's filter matches an abbreviation at the end
// of any word ("couteaux." ends with French "aux.", "banc." with "anc."), which merged two
// sentences in 13 of 338 French Multi30k paragraphs (docs/experiments.md,
// "2026-12-03: sentence splitting of paragraphs").
std::vector<std::string> cldr_abbreviations(const std::string& language) {
  std::vector<std::string> out;
  UErrorCode status = U_ZERO_ERROR;
  const std::string tree = std::string(U_ICUDATA_NAME) + "-brkitr";
  UResourceBundle* bundle = ures_open(tree.c_str(), base_language(language).c_str(), &status);
  UResourceBundle* exceptions = ures_getByKey(bundle, "exceptions", nullptr, &status);
  UResourceBundle* sentences = ures_getByKey(exceptions, "SentenceBreak", nullptr, &status);
  while (U_SUCCESS(status) && ures_hasNext(sentences)) {
    int32_t length = 0;
    const UChar* s = ures_getNextString(sentences, &length, nullptr, &status);
    if (U_FAILURE(status)) break;
    std::string utf8;
    icu::UnicodeString(false, s, length).toUTF8String(utf8);
    out.push_back(std::move(utf8));
  }
  ures_close(sentences);
  ures_close(exceptions);
  ures_close(bundle);
  return out;
}

bool opens(char c) { return c == '(' || c == '[' || c == '{' || c == '"' || c == '\''; }

// Whether `text` up to `end` ends with one of `abbreviations` as a whole word.
bool ends_with_abbreviation(std::string_view text, size_t end, const std::vector<std::string>& abbreviations) {
  const std::string_view before = text.substr(0, end);
  for (const auto& a : abbreviations) {
    if (before.size() < a.size() || before.substr(before.size() - a.size()) != a) continue;
    const size_t start = before.size() - a.size();
    if (start == 0 || is_ascii_space(text[start - 1]) || opens(text[start - 1])) return true;
  }
  return false;
}

// [begin, end) without the ASCII whitespace at either end, cut at each line break (ICU ends a
// sentence after one; "\r\n" and the Unicode separators also end here).
void add_trimmed(std::string_view text, size_t begin, size_t end, std::vector<SentenceSpan>& out) {
  while (begin < end) {
    while (begin < end && is_ascii_space(text[begin])) ++begin;
    size_t stop = begin;
    while (stop < end && text[stop] != '\n' && text[stop] != '\r') ++stop;
    size_t last = stop;
    while (last > begin && is_ascii_space(text[last - 1])) --last;
    if (last > begin) out.push_back({begin, last});
    begin = stop;
  }
}

}  // namespace

struct SentenceSplitter::Impl {
  // A BreakIterator holds the text it walks, so each call works on its own clone.
  std::unique_ptr<icu::BreakIterator> prototype;
  std::vector<std::string> abbreviations;
  mutable std::mutex mutex;  // clone() reads the prototype's state
};

SentenceSplitter::SentenceSplitter(const std::string& language) : language_(language), impl_(std::make_unique<Impl>()) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Locale locale(language.empty() ? "und" : language.c_str());
  impl_->prototype.reset(icu::BreakIterator::createSentenceInstance(locale, status));
  if (U_FAILURE(status) || !impl_->prototype)
    throw RuntimeError(fmt::format("ICU has no sentence rules for language '{}': {}", language, u_errorName(status)));
  impl_->abbreviations = cldr_abbreviations(language);
  if (base_language(language) == "en")
    impl_->abbreviations.insert(impl_->abbreviations.end(), std::begin(kEnglishTitles), std::end(kEnglishTitles));
}

SentenceSplitter::~SentenceSplitter() = default;
SentenceSplitter::SentenceSplitter(SentenceSplitter&&) noexcept = default;
SentenceSplitter& SentenceSplitter::operator=(SentenceSplitter&&) noexcept = default;

std::vector<SentenceSpan> SentenceSplitter::split(std::string_view text) const {
  std::vector<SentenceSpan> spans;
  if (text.empty()) return spans;
  if (text.size() > static_cast<size_t>(INT32_MAX))  // ICU's boundaries are int32_t
    throw UsageError(fmt::format("a text of {} bytes is too long to split into sentences (at most 2 GiB)", text.size()));
  std::unique_ptr<icu::BreakIterator> it;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    it.reset(impl_->prototype->clone());
  }
  UErrorCode status = U_ZERO_ERROR;
  // UTF-8 text is walked in place: boundaries are byte offsets into `text`.
  UText* utext = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status);
  if (U_SUCCESS(status)) it->setText(utext, status);
  if (U_FAILURE(status)) {
    utext_close(utext);
    throw RuntimeError(fmt::format("ICU could not split {} bytes of text into sentences: {}", text.size(),
                                   u_errorName(status)));
  }
  size_t begin = static_cast<size_t>(it->first());
  for (int32_t next = it->next(); next != icu::BreakIterator::DONE; next = it->next()) {
    const size_t end = static_cast<size_t>(next);
    size_t last = end;  // the boundary's sentence without the spaces after it
    bool line_break = false;
    for (; last > begin && is_ascii_space(text[last - 1]); --last) line_break |= text[last - 1] == '\n' || text[last - 1] == '\r';
    if (end < text.size() && !line_break && ends_with_abbreviation(text, last, impl_->abbreviations)) continue;
    add_trimmed(text, begin, end, spans);
    begin = end;
  }
  utext_close(utext);
  return spans;
}

}  // namespace nmt::text
