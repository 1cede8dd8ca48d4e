#pragma once
// HTML documents: what of a page is text to translate, and the page again with the
// translations in place of that text and every other byte as it was. Parsed by Gumbo (Debian's
// libgumbo-dev: Google's implementation of the HTML5 parsing algorithm, as browsers parse,
// tag soup included), not by hand. Torch-free: the translation service translates the pieces.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace nmt::text {
class SentenceSplitter;
}

namespace nmt::doc {

// One piece of a document to translate: bytes [begin, end) of the original.
struct TextPiece {
  size_t begin = 0;
  size_t end = 0;
  std::string text;     // what to translate: plain text, or text with inline tags when `markup`
  bool markup = false;  // holds inline tags (<b>, <a href>...): translate through text/markup.h
  bool attribute = false;  // an attribute's value (alt, title, placeholder, aria-label): escaped back for one
};

// Elements nested deeper than this are left as they are (a page 100,000 levels deep must not
// exhaust the stack); HtmlPlan::too_deep counts them.
inline constexpr int kMaxHtmlDepth = 256;

struct HtmlPlan {
  std::string original;
  std::vector<TextPiece> pieces;  // in document order, never overlapping
  size_t too_deep = 0;            // subtrees below kMaxHtmlDepth, not translated
};

// The pieces of `html`: each run of text and inline elements inside a block (a paragraph, a
// heading, a list item, a table cell...), trimmed of the whitespace around it, and the alt,
// title, placeholder and aria-label attributes of elements outside such runs. Nothing inside
// <script>, <style>, <code>, <pre>, <kbd>, <samp>, <var>, <textarea>, <svg>, <math>,
// <template> or an element with translate="no" is a piece. A run's text without tags is
// entity-decoded (&amp; is "&"); a run with inline tags is kept as markup.
HtmlPlan plan_html(std::string html);

// Each markup piece of several sentences cut into one piece per sentence, where no inline
// element spans the cut (a model trained on sentences drops sentences from a paragraph given
// whole; docs/translation.md, "Paragraphs"). Plain pieces are left whole: the translation
// service splits those itself.
void split_markup_sentences(HtmlPlan& plan, const text::SentenceSplitter& splitter);

// The original with each piece replaced by its translation (one per piece, in order): plain
// text and attribute values escaped (&, <, >, and " in attributes), markup translations as
// they are (text/markup.h escapes them).
std::string apply_translations(const HtmlPlan& plan, const std::vector<std::string>& translations);

// Translates `texts`, markup ones (inline tags kept) or plain ones; one translation per text.
using TranslatePieces = std::function<std::vector<std::string>(const std::vector<std::string>& texts, bool markup)>;

// The translation of each of the plans' pieces, in the plans' order: all their plain pieces in
// one call and all their markup pieces in another, so that each is translated in full batches.
std::vector<std::vector<std::string>> translate_pieces(const std::vector<HtmlPlan>& plans,
                                                       const TranslatePieces& translate);

}  // namespace nmt::doc
