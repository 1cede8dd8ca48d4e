#pragma once
// Inline markup that survives translation (the decoder's opt-in markup mode): tags are taken out
// of a source line, the plain text is translated, and the tags are put back around the
// translated words that the word alignment (nmt/text/word_alignment.h) links to the words they
// wrapped:
//
//   source       Click <b>Save</b> to keep <i>your</i> file &amp; exit.<x id="1"/>
//   plain text   Click Save to keep your file & exit.
//   translation  Cliquez sur Enregistrer pour garder votre fichier & quitter.
//   restored     Cliquez sur <b>Enregistrer</b> pour garder <i>votre</i> fichier &amp; quitter.<x id="1"/>
//
// Words are whitespace-separated tokens (Python's str.split(), what SentencePiece's "▁" marks),
// so source word i is word i of the source pieces (word_of_piece). What is a tag:
//  * <name attr="v" ...> opens, </name> closes (names compared case-insensitively), <name .../>
//    stands alone; so do the HTML void elements written without '/' (br, hr, img, input, meta,
//    link, wbr, area, base, col, embed, source, track) and comments <!-- ... -->;
//  * a '<' that does not start one of these (`a < b`, `3<5`, an unterminated `<b`) is text;
//  * each tag's text is kept verbatim, attributes untouched, and written back as it was.
//  * a tag may sit inside a word (un<b>believ</b>able is one word), except <br> and <hr>, which
//    end a line and so separate words as a space does.
// Entities &amp; &lt; &gt; &quot; &apos; &nbsp; &#NN; &#xHH; are decoded in the plain text; an
// '&' that starts none of them is text. &nbsp; (and a literal U+00A0) separates words as a
// space does: the model's NFKC normalisation makes it a space anyway, and keeping it inside a
// word would make this file's word indices disagree with the pieces' "▁" words. The restored
// line has an ordinary space there.
#include <string>
#include <string_view>
#include <vector>

#include "nmt/text/word_alignment.h"

namespace nmt::text {

// One tag of a source line, or a pair of them (<b> ... </b>), with the source words it covers.
struct MarkupElement {
  std::string open;   // verbatim: "<b>", "<a href=\"x\">", "<x id=\"1\"/>", "<!-- c -->", or an unmatched "</i>"
  std::string close;  // verbatim closing tag of a pair ("</b>"); "" for a standalone tag
  // Source words [first_word, end_word). A pair opening or closing inside a word covers that
  // whole word. first_word == end_word: it covers none (a standalone tag, or a pair around no
  // word such as <b></b>) and is an insertion point before source word first_word (which may
  // be the word count: the end of the line).
  int first_word = 0;
  int end_word = 0;
  int parent = -1;  // index in MarkedLine::elements of the enclosing pair; -1 at top level

  bool paired() const { return !close.empty(); }
};

struct MarkedLine {
  std::string text;  // the plain text to translate: entities decoded, words joined by single spaces
  int word_count = 0;
  // Every tag of the line, in the order of their (opening) tags, so a parent comes before its
  // children. Nothing of the line's markup is dropped: unmatched tags are standalone elements.
  std::vector<MarkupElement> elements;
  // Unbalanced markup, one line each ("</i> closes no open tag", "<b> is never closed",
  // "<i> is not closed before </b>"). Never an exception: such a tag becomes a standalone
  // element, put back verbatim at its aligned position.
  std::vector<std::string> warnings;
};

// Takes the tags out of `line`. Throws Utf8Error on invalid UTF-8, nothing else.
MarkedLine strip_markup(std::string_view line);

// Puts `source`'s tags into `translation` (the plain translated text), where `alignment` links
// source words to translation words (links outside either sentence are ignored). The result is
// markup: the translation's '&', '<' and '>' are escaped as &amp; &lt; &gt;, its words are joined
// by single spaces and tags attach to the words they wrap (`<b>Enregistrer</b>`).
//  * A pair wraps the smallest run of translation words that covers every word aligned to a
//    source word it wrapped. If none of its words is aligned (a dropped word), it becomes an
//    empty pair at an insertion point: the pair still appears, wrapping nothing rather than a
//    word it does not translate.
//  * An insertion point before source word k goes before the first translation word aligned to
//    the first aligned source word from k on; at the end if none is.
//  * The output keeps the source's tree: every tag appears once, a child inside its parent
//    (its range clamped into the parent's; moved to the parent's nearer edge if outside it).
//    Sibling pairs may change order (that is what reordering is), but never overlap or nest:
//    the later one gives up the words they share; if it lies inside the earlier one, the
//    earlier one keeps only its longer part outside it instead; if both wrap the same words the
//    later becomes an empty pair after the earlier. An insertion point that falls inside a
//    sibling pair moves to that pair's nearer edge.
std::string restore_markup(const MarkedLine& source, std::string_view translation,
                           const std::vector<WordLink>& alignment);

// How an output line's markup compares with its source's (tests and measurement scripts).
struct MarkupCheck {
  // The output has exactly the source's tags: the same multiset of verbatim tag texts.
  bool same_tags = false;
  std::vector<std::string> missing;  // source tags the output lacks (once per missing copy)
  std::vector<std::string> extra;    // output tags the source lacks
  // Properly nested: no more unbalanced-markup warnings than the source has (strip_markup's
  // count), so for a balanced source, fully balanced and nested. For an unbalanced source the
  // stray tags are judged by number, not by position.
  bool well_formed = false;
  std::vector<std::string> output_warnings;
  // Each tag has the same chain of enclosing tags as in the source (siblings may reorder).
  bool same_nesting = false;

  bool ok() const { return same_tags && well_formed; }
};
MarkupCheck check_markup(std::string_view source_line, std::string_view output_line);

}  // namespace nmt::text
