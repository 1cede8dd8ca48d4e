#pragma once
// Sentences of a paragraph, for translating text that is not one sentence per line.
//
// ICU's sentence BreakIterator (Unicode UAX #29) with CLDR's abbreviations ("Mr.", "Jan." and
// the like end no sentence in the languages CLDR lists them for) and, for English, the titles
// CLDR lacks ("Dr.", "St."). Chosen over writing rules by hand, and over the Moses
// splitter's nonbreaking-prefix lists, because it is packaged (Debian's libicu-dev), kept
// current with Unicode, and handles every script; its agreement with the Moses splitter and
// pysbd is measured in docs/experiments.md, "2026-12-03: sentence splitting of paragraphs".
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>


namespace nmt::text {

// Bytes [begin, end) of the text given to split().
struct SentenceSpan {
  size_t begin = 0;
  size_t end = 0;
};
inline bool operator==(const SentenceSpan& a, const SentenceSpan& b) { return a.begin == b.begin && a.end == b.end; }

class SentenceSplitter {
 public:
  // `language`: an ISO 639 code ("en", "fr"); its abbreviations when CLDR has them, Unicode's
  // rules alone otherwise ("" or a language ICU does not know). RuntimeError if ICU's data for
  // sentence breaking is missing.
  explicit SentenceSplitter(const std::string& language = "en");
  ~SentenceSplitter();
  SentenceSplitter(SentenceSplitter&&) noexcept;
  SentenceSplitter& operator=(SentenceSplitter&&) noexcept;

  // The sentences of UTF-8 `text`, in order, each without the whitespace around it; none for
  // text that is only whitespace. A line break always ends a sentence (no span holds '\n').
  // Invalid UTF-8 is split as if each bad byte were U+FFFD. Safe to call from several threads.
  std::vector<SentenceSpan> split(std::string_view text) const;

  const std::string& language() const { return language_; }

 private:
  struct Impl;
  std::string language_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt::text
