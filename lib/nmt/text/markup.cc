#include "nmt/text/markup.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>

#include "nmt/text/unicode.h"

namespace nmt::text {
namespace {

// ---------------------------------------------------------------------------------------
// Recognising tags and entities

enum class TagKind { kOpen, kClose, kStandalone };

struct Tag {
  TagKind kind;
  std::string name;  // lowercased; "" for a comment
  size_t length;     // bytes of the line it spans
};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) { return is_letter(c) || is_digit(c) || c == ':' || c == '_' || c == '.' || c == '-'; }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// HTML elements that never have content, so `<br>` without '/' stands alone.
bool is_void_element(const std::string& name) {
  static const std::array<std::string_view, 13> kVoid = {"br",   "hr",   "img", "input", "meta",   "link", "wbr",
                                                         "area", "base", "col", "embed", "source", "track"};
  return std::find(kVoid.begin(), kVoid.end(), name) != kVoid.end();
}

// <br> and <hr> end a line, so they separate words; other tags may sit inside a word.
bool breaks_line(const std::string& name) { return name == "br" || name == "hr"; }

// Reads a tag name at `pos` (a letter, then name characters), advancing `pos`; "" if none.
std::string read_name(std::string_view s, size_t& pos) {
  if (pos >= s.size() || !is_letter(s[pos])) return "";
  std::string name;
  while (pos < s.size() && is_name_char(s[pos])) name += lower(s[pos++]);
  return name;
}

size_t skip_spaces(std::string_view s, size_t pos) {
  while (pos < s.size() && is_ascii_space(s[pos])) ++pos;
  return pos;
}

// One attribute at `pos`: name, optionally = and a quoted or unquoted value. Advances `pos`.
bool read_attribute(std::string_view s, size_t& pos) {
  auto is_attribute_name_char = [](char c) {
    return !is_ascii_space(c) && c != '"' && c != '\'' && c != '>' && c != '/' && c != '=' && c != '<';
  };
  size_t start = pos;
  while (pos < s.size() && is_attribute_name_char(s[pos])) ++pos;
  if (pos == start) return false;
  size_t after_name = skip_spaces(s, pos);
  if (after_name >= s.size() || s[after_name] != '=') return true;  // a boolean attribute
  pos = skip_spaces(s, after_name + 1);
  if (pos >= s.size()) return false;
  if (s[pos] == '"' || s[pos] == '\'') {
    size_t close = s.find(s[pos], pos + 1);
    if (close == std::string_view::npos) return false;
    pos = close + 1;
    return true;
  }
  size_t value = pos;
  while (pos < s.size() && !is_ascii_space(s[pos]) && s[pos] != '>' && s[pos] != '"' && s[pos] != '\'' && s[pos] != '<')
    ++pos;
  return pos > value;
}

std::optional<Tag> read_comment(std::string_view s, size_t pos) {
  size_t end = s.find("-->", pos + 4);
  if (end == std::string_view::npos) return std::nullopt;
  return Tag{TagKind::kStandalone, "", end + 3 - pos};
}

std::optional<Tag> read_closing_tag(std::string_view s, size_t pos) {
  size_t at = pos + 2;
  std::string name = read_name(s, at);
  at = skip_spaces(s, at);
  if (name.empty() || at >= s.size() || s[at] != '>') return std::nullopt;
  return Tag{TagKind::kClose, name, at + 1 - pos};
}

// <name>, <name attr="v" ...>, <name/>: attributes must be separated from the name and from
// each other by whitespace, as in HTML.
std::optional<Tag> read_opening_tag(std::string_view s, size_t pos) {
  size_t at = pos + 1;
  std::string name = read_name(s, at);
  if (name.empty()) return std::nullopt;
  for (;;) {
    size_t next = skip_spaces(s, at);
    if (next >= s.size()) return std::nullopt;
    if (s[next] == '>') {
      TagKind kind = is_void_element(name) ? TagKind::kStandalone : TagKind::kOpen;
      return Tag{kind, name, next + 1 - pos};
    }
    if (s.compare(next, 2, "/>") == 0) return Tag{TagKind::kStandalone, name, next + 2 - pos};
    if (next == at || !read_attribute(s, next)) return std::nullopt;
    at = next;
  }
}

// The tag starting at s[pos] == '<', if it is one.
std::optional<Tag> read_tag(std::string_view s, size_t pos) {
  if (s.compare(pos, 4, "<!--") == 0) return read_comment(s, pos);
  if (s.compare(pos, 2, "</") == 0) return read_closing_tag(s, pos);
  return read_opening_tag(s, pos);
}

bool valid_code_point(unsigned long cp) { return cp > 0 && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF); }

// &#NN; or &#xHH; at s[pos] == '&': appends the character and returns the entity's length, or 0.
size_t decode_numeric_entity(std::string_view s, size_t pos, std::string& out) {
  bool hex = pos + 2 < s.size() && (s[pos + 2] == 'x' || s[pos + 2] == 'X');
  size_t at = pos + (hex ? 3 : 2), start = at;
  unsigned long cp = 0;
  for (; at < s.size() && at - start < 8; ++at) {  // 8 digits: no overflow, beyond U+10FFFF anyway
    char c = lower(s[at]);
    int digit = is_digit(c) ? c - '0' : (hex && c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (digit < 0) break;
    cp = cp * (hex ? 16 : 10) + static_cast<unsigned long>(digit);
  }
  if (at == start || at >= s.size() || s[at] != ';' || !valid_code_point(cp)) return 0;
  append_utf8(out, static_cast<char32_t>(cp));
  return at + 1 - pos;
}

// The entity at s[pos] == '&': appends its character and returns its length, or 0 if none.
size_t decode_entity(std::string_view s, size_t pos, std::string& out) {
  static const std::array<std::pair<std::string_view, std::string_view>, 6> kNamed = {
      {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&nbsp;", "\u00A0"}}};
  if (s.compare(pos, 2, "&#") == 0) return decode_numeric_entity(s, pos, out);
  for (const auto& [entity, text] : kNamed) {
    if (s.compare(pos, entity.size(), entity) == 0) {
      out += text;
      return entity.size();
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------------------
// strip_markup: tags at byte offsets of the raw plain text, then at words

struct RawElement {
  std::string open, close;
  std::string name;    // for matching closing tags
  size_t open_at = 0;  // offset in the raw plain text
  size_t close_at = 0;
  int parent = -1;
};

class MarkupParser {
 public:
  MarkedLine parse(std::string_view line);

 private:
  void on_tag(const Tag& tag, std::string_view text);
  void on_close(const Tag& tag, std::string_view text);
  void add_standalone(std::string text, size_t at);
  void reparent_to_pairs();
  MarkedLine to_words() const;

  std::string plain_;  // the text between tags, entities decoded, spaces as found
  std::vector<RawElement> elements_;
  std::vector<int> open_;  // elements opened and not yet closed, innermost last
  std::vector<std::string> warnings_;
};

MarkedLine MarkupParser::parse(std::string_view line) {
  for (size_t pos = 0; pos < line.size();) {
    if (line[pos] == '<') {
      if (auto tag = read_tag(line, pos)) {
        on_tag(*tag, line.substr(pos, tag->length));
        pos += tag->length;
        continue;
      }
    } else if (line[pos] == '&') {
      if (size_t length = decode_entity(line, pos, plain_)) {
        pos += length;
        continue;
      }
    }
    plain_ += line[pos++];
  }
  for (int unclosed : open_) warnings_.push_back(elements_[unclosed].open + " is never closed");
  open_.clear();
  reparent_to_pairs();
  return to_words();
}

void MarkupParser::on_tag(const Tag& tag, std::string_view text) {
  if (tag.kind == TagKind::kClose) return on_close(tag, text);
  if (tag.kind == TagKind::kStandalone) {
    add_standalone(std::string(text), plain_.size());
    if (breaks_line(tag.name)) plain_ += ' ';  // "one<br>two" is two words; "un<x/>done" one
    return;
  }
  RawElement element;
  element.open = text;
  element.name = tag.name;
  element.open_at = plain_.size();
  element.parent = open_.empty() ? -1 : open_.back();
  elements_.push_back(std::move(element));
  open_.push_back(static_cast<int>(elements_.size()) - 1);
}

// A closing tag closes the innermost open element of its name; elements opened inside that one
// and still open are crossed by it (<b><i></b>) and stay unmatched: standalone tags.
void MarkupParser::on_close(const Tag& tag, std::string_view text) {
  auto match = std::find_if(open_.rbegin(), open_.rend(), [&](int i) { return elements_[i].name == tag.name; });
  if (match == open_.rend()) {
    warnings_.push_back(std::string(text) + " closes no open tag");
    return add_standalone(std::string(text), plain_.size());
  }
  for (auto crossed = open_.rbegin(); crossed != match; ++crossed) {
    warnings_.push_back(elements_[*crossed].open + " is not closed before " + std::string(text));
  }
  RawElement& element = elements_[*match];
  element.close = text;
  element.close_at = plain_.size();
  open_.erase(std::prev(match.base()), open_.end());
}

void MarkupParser::add_standalone(std::string text, size_t at) {
  RawElement element;
  element.open = std::move(text);
  element.open_at = element.close_at = at;
  element.parent = open_.empty() ? -1 : open_.back();
  elements_.push_back(std::move(element));
}

// An unmatched opening tag is standalone, so what it enclosed belongs to the pair around it.
void MarkupParser::reparent_to_pairs() {
  for (RawElement& element : elements_) {  // parents come first, so theirs are already fixed
    while (element.parent >= 0 && elements_[element.parent].close.empty())
      element.parent = elements_[element.parent].parent;
  }
}

MarkedLine MarkupParser::to_words() const {
  std::vector<std::string_view> words;
  python_split(plain_, words);
  MarkedLine line;
  line.word_count = static_cast<int>(words.size());
  for (std::string_view word : words) line.text.append(line.text.empty() ? "" : " ").append(word);
  auto offset = [&](std::string_view word) { return static_cast<size_t>(word.data() - plain_.data()); };
  // Words ending at or before a tag precede it; words starting before a closing tag are inside.
  auto words_ending_by = [&](size_t at) {
    return static_cast<int>(std::partition_point(words.begin(), words.end(),
                                                 [&](std::string_view w) { return offset(w) + w.size() <= at; }) -
                            words.begin());
  };
  auto words_starting_before = [&](size_t at) {
    return static_cast<int>(
        std::partition_point(words.begin(), words.end(), [&](std::string_view w) { return offset(w) < at; }) -
        words.begin());
  };
  for (const RawElement& raw : elements_) {
    MarkupElement element{raw.open, raw.close, words_ending_by(raw.open_at), 0, raw.parent};
    element.end_word =
        raw.close.empty() ? element.first_word : std::max(element.first_word, words_starting_before(raw.close_at));
    line.elements.push_back(std::move(element));
  }
  line.warnings = warnings_;
  return line;
}

// ---------------------------------------------------------------------------------------
// restore_markup: a target range per element, made into a tree, then rendered

struct Range {
  int begin = 0, end = 0;  // translation words [begin, end); begin == end: a point before word begin
  bool empty() const { return begin >= end; }
};

Range point(int at) { return {at, at}; }

// The translation words each source word is aligned to, as a min and max (-1 when unaligned).
struct AlignedWords {
  std::vector<int> first, last;

  AlignedWords(const std::vector<WordLink>& alignment, int source_words, int target_words)
      : first(source_words, -1), last(source_words, -1) {
    for (const WordLink& link : alignment) {
      if (link.source < 0 || link.source >= source_words || link.target < 0 || link.target >= target_words) continue;
      int& lo = first[link.source];
      int& hi = last[link.source];
      lo = lo < 0 ? link.target : std::min(lo, link.target);
      hi = std::max(hi, link.target);
    }
  }
  // Where something before source word k goes: before the translation of the first aligned
  // source word from k on, else at the end.
  int insertion_point(int k, int target_words) const {
    for (int s = k; s < static_cast<int>(first.size()); ++s) {
      if (first[s] >= 0) return first[s];
    }
    return target_words;
  }
  Range covering(const MarkupElement& element, int target_words) const {
    Range range{-1, -1};
    for (int s = element.first_word; s < element.end_word && s < static_cast<int>(first.size()); ++s) {
      if (first[s] < 0) continue;
      range.begin = range.begin < 0 ? first[s] : std::min(range.begin, first[s]);
      range.end = std::max(range.end, last[s] + 1);
    }
    return range.begin < 0 ? point(insertion_point(element.first_word, target_words)) : range;
  }
};

Range clamp_into(Range range, Range parent) {
  if (range.empty()) return point(std::clamp(range.begin, parent.begin, parent.end));
  Range inside{std::max(range.begin, parent.begin), std::min(range.end, parent.end)};
  if (!inside.empty()) return inside;
  return point(range.end <= parent.begin ? parent.begin : parent.end);
}

bool overlap(Range a, Range b) { return !a.empty() && !b.empty() && a.begin < b.end && b.begin < a.end; }

// The longer part of `range` outside `other` (ties: the left part); empty if `range` ⊆ `other`.
Range outside(Range range, Range other) {
  Range left{range.begin, std::min(range.end, other.begin)}, right{std::max(range.begin, other.end), range.end};
  int left_size = std::max(0, left.end - left.begin), right_size = std::max(0, right.end - right.begin);
  if (left_size == 0 && right_size == 0) return point(range.begin);
  return left_size >= right_size ? left : right;
}

// Makes sibling pairs disjoint (see restore_markup's comment), then moves points out of them.
void separate_siblings(const std::vector<int>& siblings, std::vector<Range>& ranges) {
  for (size_t i = 0; i < siblings.size(); ++i) {
    Range& later = ranges[siblings[i]];
    for (size_t j = 0; j < i && !later.empty(); ++j) {
      Range& earlier = ranges[siblings[j]];
      if (!overlap(earlier, later)) continue;
      if (Range rest = outside(later, earlier); !rest.empty()) {
        later = rest;
      } else if (Range earlier_rest = outside(earlier, later); !earlier_rest.empty()) {
        earlier = earlier_rest;  // `later` lies inside `earlier`, so it overlaps no other sibling
      } else {
        later = point(earlier.end);
      }
    }
  }
  for (int i : siblings) {
    if (!ranges[i].empty()) continue;
    int at = ranges[i].begin;
    for (int j : siblings) {
      const Range& pair = ranges[j];
      if (pair.empty() || at <= pair.begin || at >= pair.end) continue;
      ranges[i] = point(at - pair.begin <= pair.end - at ? pair.begin : pair.end);
      break;  // siblings are disjoint now: at most one holds it
    }
  }
}

// Where each element's tags go in the translation, parents before children.
std::vector<Range> target_ranges(const MarkedLine& source, const std::vector<std::vector<int>>& children,
                                 const std::vector<WordLink>& alignment, int target_words) {
  AlignedWords aligned(alignment, source.word_count, target_words);
  std::vector<Range> ranges;
  for (const MarkupElement& element : source.elements) {
    ranges.push_back(element.first_word < element.end_word
                         ? aligned.covering(element, target_words)
                         : point(aligned.insertion_point(element.first_word, target_words)));
  }
  // children[0] is the top level, children[i + 1] element i's; element i's range is final
  // before its children's turn because its parent's index is lower.
  for (size_t node = 0; node < children.size(); ++node) {
    Range bounds = node == 0 ? Range{0, target_words} : ranges[node - 1];
    for (int child : children[node]) ranges[child] = clamp_into(ranges[child], bounds);
    separate_siblings(children[node], ranges);
  }
  return ranges;
}

// A closing tag after words attaches to them (the space goes after it); every other tag
// attaches to the word after it, so an empty pair or a standalone tag goes before its word.
enum class PieceKind { kWord, kTag, kClosingTag };
struct Piece {
  PieceKind kind;
  std::string text;
};

std::string escape_text(std::string_view word) {
  std::string out;
  for (char c : word) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

class Renderer {
 public:
  Renderer(const MarkedLine& source, const std::vector<std::vector<int>>& children, const std::vector<Range>& ranges,
           const std::vector<std::string_view>& words)
      : source_(source), children_(children), ranges_(ranges), words_(words) {}

  std::vector<Piece> render() {
    render_children(0, Range{0, static_cast<int>(words_.size())});
    return std::move(pieces_);
  }

 private:
  void render_children(size_t node, Range range) {
    std::vector<int> kids = children_[node];
    // In translation order; a point at a pair's start goes before it, at its end after it.
    std::stable_sort(kids.begin(), kids.end(), [&](int a, int b) {
      return std::make_pair(ranges_[a].begin, ranges_[a].end) < std::make_pair(ranges_[b].begin, ranges_[b].end);
    });
    int at = range.begin;
    for (int kid : kids) {
      add_words(at, ranges_[kid].begin);
      render_element(kid);
      at = std::max(at, ranges_[kid].end);
    }
    add_words(at, range.end);
  }
  void render_element(int i) {
    const MarkupElement& element = source_.elements[i];
    pieces_.push_back({PieceKind::kTag, element.open});
    if (!element.paired()) return;
    render_children(i + 1, ranges_[i]);
    pieces_.push_back({ranges_[i].empty() ? PieceKind::kTag : PieceKind::kClosingTag, element.close});
  }
  void add_words(int begin, int end) {
    for (int w = begin; w < end; ++w) pieces_.push_back({PieceKind::kWord, escape_text(words_[w])});
  }

  const MarkedLine& source_;
  const std::vector<std::vector<int>>& children_;
  const std::vector<Range>& ranges_;
  const std::vector<std::string_view>& words_;
  std::vector<Piece> pieces_;
};

// Words joined by one space each, tags attached to the words they wrap: among the tags between
// two words the space goes after the last closing tag of a pair with words, or before all of
// them if there is none.
std::string join_pieces(const std::vector<Piece>& pieces) {
  std::string out;
  bool after_word = false;
  size_t gap_begin = 0;  // the tags since the last word
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].kind != PieceKind::kWord) continue;
    size_t last_close = pieces.size();
    for (size_t j = gap_begin; j < i; ++j) {
      if (pieces[j].kind == PieceKind::kClosingTag) last_close = j;
    }
    if (after_word && last_close == pieces.size()) out += ' ';
    for (size_t j = gap_begin; j < i; ++j) {
      out += pieces[j].text;
      if (after_word && j == last_close) out += ' ';
    }
    out += pieces[i].text;
    after_word = true;
    gap_begin = i + 1;
  }
  for (size_t j = gap_begin; j < pieces.size(); ++j) out += pieces[j].text;
  return out;
}

// Every verbatim tag text of a line, sorted (a multiset).
std::vector<std::string> tag_texts(const MarkedLine& line) {
  std::vector<std::string> tags;
  for (const MarkupElement& element : line.elements) {
    tags.push_back(element.open);
    if (element.paired()) tags.push_back(element.close);
  }
  std::sort(tags.begin(), tags.end());
  return tags;
}

// Each element as its tags preceded by its ancestors' opening tags, sorted: equal for two lines
// whose tag trees are equal up to the order of siblings.
std::vector<std::string> tag_paths(const MarkedLine& line) {
  std::vector<std::string> paths;
  for (const MarkupElement& element : line.elements) {
    std::string path = element.open + '\x1f' + element.close;
    for (int up = element.parent; up >= 0; up = line.elements[up].parent) path = line.elements[up].open + '\x1f' + path;
    paths.push_back(std::move(path));
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::vector<std::string> multiset_difference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> difference;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(difference));
  return difference;
}

}  // namespace

MarkedLine strip_markup(std::string_view line) { return MarkupParser().parse(line); }

std::string restore_markup(const MarkedLine& source, std::string_view translation,
                           const std::vector<WordLink>& alignment) {
  std::vector<std::string_view> words;
  python_split(translation, words);
  std::vector<std::vector<int>> children(source.elements.size() + 1);
  for (size_t i = 0; i < source.elements.size(); ++i)
    children[source.elements[i].parent + 1].push_back(static_cast<int>(i));
  std::vector<Range> ranges = target_ranges(source, children, alignment, static_cast<int>(words.size()));
  return join_pieces(Renderer(source, children, ranges, words).render());
}

MarkupCheck check_markup(std::string_view source_line, std::string_view output_line) {
  MarkedLine source = strip_markup(source_line), output = strip_markup(output_line);
  MarkupCheck check;
  std::vector<std::string> source_tags = tag_texts(source), output_tags = tag_texts(output);
  check.missing = multiset_difference(source_tags, output_tags);
  check.extra = multiset_difference(output_tags, source_tags);
  check.same_tags = check.missing.empty() && check.extra.empty();
  check.well_formed = output.warnings.size() <= source.warnings.size();
  check.output_warnings = output.warnings;
  check.same_nesting = tag_paths(source) == tag_paths(output);
  return check;
}

}  // namespace nmt::text
