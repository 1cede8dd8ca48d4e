#pragma once
// Word alignment from a model's cross-attention, in the Pharaoh format ("0-0 1-2 2-1"), and its
// evaluation against a gold standard (alignment error rate, Och & Ney 2003).
//
// The model attends over subword pieces; users and gold standards speak of whole words. A word
// is what SentencePiece marks with U+2581 "▁" (a whitespace-separated token of the text), so
// word i of the pieces is field i of the text's whitespace split.
//
// Method: "hard" alignment by argmax, as fairseq's `--print-alignment`: each target piece is
// linked to the source piece its attention weighs most, and the two pieces' words are linked.
// Which attention matters: Garg et al. (2019, "Jointly Learning to Align and Translate with
// Transformer Models") find that a middle decoder layer's attention (the penultimate of six, an
// average of its heads) aligns better than the last layer's, which attends to what the next
// word needs rather than to what the current word translates. The caller chooses the layer and
// head (`--attention-layer/--attention-head`); this file only turns one matrix into links.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nmt::text {

// The word index of each SentencePiece piece (as SubwordModel::pieces() gives them):
//  * a piece starting with "▁" (including "▁" alone) begins a new word; the first piece that is
//    not special begins word 0 even without "▁";
//  * special pieces, "<" + letters, digits, '_' or a leading '/' + ">" ("</s>", "<s>", "<pad>"),
//    belong to no word: -1;
//  * byte pieces ("<0xE2>") and "<unk>" continue the current word: they stand for text. (An
//    "<unk>" may hide a "▁"; its word is then merged with the one before.)
std::vector<int> word_of_piece(const std::vector<std::string>& pieces);

// One link between source word `source` and target word `target` (0-based).
struct WordLink {
  int source = 0;
  int target = 0;
};
inline bool operator==(const WordLink& a, const WordLink& b) { return a.source == b.source && a.target == b.target; }
inline bool operator!=(const WordLink& a, const WordLink& b) { return !(a == b); }
// Pharaoh order: by source word, then target word.
inline bool operator<(const WordLink& a, const WordLink& b) {
  return a.source != b.source ? a.source < b.source : a.target < b.target;
}

// Hard word alignment from one attention matrix: attention[t][s] is the weight target piece t
// gives source piece s. Rows beyond target_word_of_piece.size() (the target EOS row) and
// columns beyond source_word_of_piece.size() or whose word is -1 (the source EOS) are ignored,
// as are target pieces of word -1. Each remaining target piece links its word to the word of
// its highest-weighted source piece (ties: the lower piece index). Sorted, without duplicates.
std::vector<WordLink> word_alignment(const std::vector<std::vector<float>>& attention,
                                     const std::vector<int>& source_word_of_piece,
                                     const std::vector<int>& target_word_of_piece);

// "0-0 1-2 2-1": SOURCE-TARGET pairs in the given order, separated by single spaces; "" for none.
std::string pharaoh(const std::vector<WordLink>& links);

// A gold-standard alignment (Och & Ney's format): sure links ("i-j") and possible links ("i?j").
// Every sure link is also possible (sure ⊆ possible), as the AER formula assumes.
struct GoldAlignment {
  std::vector<WordLink> sure;      // sorted, unique
  std::vector<WordLink> possible;  // sorted, unique; includes every sure link
};

// Reads one line of "i-j" (sure) and "i?j" (possible) tokens separated by whitespace; a
// hypothesis written by pharaoh() comes back entirely in `sure`. A malformed token (not two
// non-negative decimal integers joined by '-' or '?') throws RuntimeError naming `where` (e.g.
// "gold.txt:12") and the token.
GoldAlignment parse_pharaoh(std::string_view line, std::string_view where = "alignment");

// Alignment error rate over a corpus (Och & Ney 2003, "A Systematic Comparison of Various
// Statistical Alignment Models"), with A the hypothesis links, S the sure and P the possible gold
// links: AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|); precision = |A∩P| / |A|; recall = |A∩S| / |S|.
// Counts are summed over sentences and the rates taken once at the end (a corpus rate, not a
// mean of sentence rates, so long sentences weigh more, as in the literature).
struct AerCounts {
  size_t hypothesis = 0;           // |A|
  size_t sure = 0;                 // |S|
  size_t hypothesis_sure = 0;      // |A∩S|
  size_t hypothesis_possible = 0;  // |A∩P|

  // Duplicate links count once; a sure link missing from gold.possible still counts as possible.
  void add_sentence(const std::vector<WordLink>& hypothesis, const GoldAlignment& gold);
  double aer() const;        // 0 when there is nothing to align (|A| + |S| = 0)
  double precision() const;  // 0 when |A| = 0
  double recall() const;     // 0 when |S| = 0
};

}  // namespace nmt::text
