#include "nmt/doc/html.h"

#include <gumbo.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

#include "nmt/text/sentence_split.h"
#include "nmt/text/unicode.h"
#include "nmt/util/error.h"

namespace nmt::doc {

namespace {

bool is_skipped(const GumboNode* node) {
  if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE) return false;
  const GumboElement& e = node->v.element;
  switch (e.tag) {
    case GUMBO_TAG_SCRIPT: case GUMBO_TAG_STYLE: case GUMBO_TAG_CODE: case GUMBO_TAG_PRE: case GUMBO_TAG_KBD:
    case GUMBO_TAG_SAMP: case GUMBO_TAG_VAR: case GUMBO_TAG_TEXTAREA: case GUMBO_TAG_SVG: case GUMBO_TAG_MATH:
    case GUMBO_TAG_TEMPLATE: case GUMBO_TAG_NOSCRIPT:
      return true;
    default:
      break;
  }
  const GumboAttribute* no = gumbo_get_attribute(&e.attributes, "translate");
  return no && std::strcmp(no->value, "no") == 0;
}

// Phrasing content that may sit inside a sentence (HTML's inline elements).
bool is_inline(const GumboNode* node) {
  if (node->type != GUMBO_NODE_ELEMENT) return false;
  switch (node->v.element.tag) {
    case GUMBO_TAG_A: case GUMBO_TAG_ABBR: case GUMBO_TAG_B: case GUMBO_TAG_BDI: case GUMBO_TAG_BDO:
    case GUMBO_TAG_BR: case GUMBO_TAG_CITE: case GUMBO_TAG_DATA: case GUMBO_TAG_DFN: case GUMBO_TAG_EM:
    case GUMBO_TAG_I: case GUMBO_TAG_IMG: case GUMBO_TAG_INS: case GUMBO_TAG_DEL: case GUMBO_TAG_MARK: case GUMBO_TAG_Q:
    case GUMBO_TAG_S: case GUMBO_TAG_SMALL: case GUMBO_TAG_SPAN: case GUMBO_TAG_STRONG: case GUMBO_TAG_SUB:
    case GUMBO_TAG_SUP: case GUMBO_TAG_TIME: case GUMBO_TAG_U: case GUMBO_TAG_WBR: case GUMBO_TAG_FONT:
      return true;
    default:
      return false;
  }
}

bool is_text(const GumboNode* node) {
  return node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_WHITESPACE || node->type == GUMBO_NODE_CDATA;
}

// Whether an inline element holds only text and inline elements, none of them skipped (else it
// ends a run: its text cannot be carried through the markup path).
bool is_plain_inline(const GumboNode* node, int depth = 0) {
  if (!is_inline(node) || is_skipped(node) || depth > kMaxHtmlDepth) return false;
  const GumboVector& children = node->v.element.children;
  for (unsigned i = 0; i < children.length; ++i) {
    const auto* child = static_cast<const GumboNode*>(children.data[i]);
    if (!is_text(child) && child->type != GUMBO_NODE_COMMENT && !is_plain_inline(child, depth + 1)) return false;
  }
  return true;
}

// [begin, end) of a node's original bytes; false for one the parser inserted or moved.
bool source_range(const GumboNode* node, size_t& begin, size_t& end) {
  if (is_text(node) || node->type == GUMBO_NODE_COMMENT) {
    begin = node->v.text.start_pos.offset;
    end = begin + node->v.text.original_text.length;
    return true;
  }
  const GumboElement& e = node->v.element;
  if (e.original_tag.length == 0) return false;
  begin = e.start_pos.offset;
  end = e.original_end_tag.length ? e.end_pos.offset + e.original_end_tag.length : begin + e.original_tag.length;
  return end >= begin;
}

// Whether a node holds text other than whitespace (itself or in its inline children).
bool has_words(const GumboNode* node, int depth = 0) {
  if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_CDATA) return true;
  if (node->type != GUMBO_NODE_ELEMENT || depth > kMaxHtmlDepth) return false;
  const GumboVector& children = node->v.element.children;
  for (unsigned i = 0; i < children.length; ++i)
    if (has_words(static_cast<const GumboNode*>(children.data[i]), depth + 1)) return true;
  return false;
}

class Planner {
 public:
  explicit Planner(HtmlPlan& plan) : plan_(plan) {}

  void element(const GumboNode* node, int depth = 0) {
    if (is_skipped(node)) return;
    if (depth > kMaxHtmlDepth) {
      ++plan_.too_deep;
      return;
    }
    attributes(node);
    const GumboVector& children = node->v.element.children;
    std::vector<const GumboNode*> run;
    for (unsigned i = 0; i < children.length; ++i) {
      const auto* child = static_cast<const GumboNode*>(children.data[i]);
      if (is_text(child) || is_plain_inline(child)) {
        run.push_back(child);
        continue;
      }
      flush(run);
      if (child->type == GUMBO_NODE_ELEMENT || child->type == GUMBO_NODE_TEMPLATE) element(child, depth + 1);
    }
    flush(run);
  }

 private:
  void attributes(const GumboNode* node) {
    const GumboVector& attributes = node->v.element.attributes;
    for (unsigned i = 0; i < attributes.length; ++i) {
      const auto* a = static_cast<const GumboAttribute*>(attributes.data[i]);
      const bool translatable = !std::strcmp(a->name, "alt") || !std::strcmp(a->name, "title") ||
                                !std::strcmp(a->name, "placeholder") || !std::strcmp(a->name, "aria-label");
      if (!translatable || text::python_strip(std::string_view(a->value)).empty() || a->original_value.length < 2) continue;
      size_t begin = a->value_start.offset, end = begin + a->original_value.length;
      const char first = plan_.original[begin];
      if (first == '"' || first == '\'') ++begin, --end;  // inside the quotes
      plan_.pieces.push_back({begin, end, a->value, false, true});
    }
  }

  void inline_attributes(const GumboNode* node, int depth = 0) {
    if (node->type != GUMBO_NODE_ELEMENT || depth > kMaxHtmlDepth) return;
    attributes(node);
    const GumboVector& children = node->v.element.children;
    for (unsigned i = 0; i < children.length; ++i)
      inline_attributes(static_cast<const GumboNode*>(children.data[i]), depth + 1);
  }

  // A run of text and inline elements: one piece, unless it is only whitespace or was moved.
  void flush(std::vector<const GumboNode*>& run) {
    if (run.empty()) return;
    size_t begin = 0, end = 0, last_end = 0;
    bool contiguous = true, has_tags = false, has_text = false;
    std::string decoded;  // the text nodes' text, entities decoded (what a run without tags is)
    for (size_t i = 0; i < run.size(); ++i) {
      if (is_text(run[i])) decoded += run[i]->v.text.text;
      size_t b = 0, e = 0;
      if (!source_range(run[i], b, e) || (i > 0 && b < last_end)) contiguous = false;
      if (i == 0) begin = b;
      last_end = e;
      has_tags |= !is_text(run[i]);
      has_text |= has_words(run[i]);
    }
    end = last_end;
    if (!has_text)  // e.g. an <img> alone: its alt and title are what there is to translate
      for (const auto* node : run) inline_attributes(node);
    run.clear();
    if (!contiguous || !has_text) return;
    const std::string& s = plan_.original;
    while (begin < end && text::is_ascii_space(s[begin])) ++begin;
    while (end > begin && text::is_ascii_space(s[end - 1])) --end;
    if (begin == end) return;
    std::string piece = s.substr(begin, end - begin);
    if (has_tags) {
      plan_.pieces.push_back({begin, end, std::move(piece), true, false});
    } else {
      const std::string_view trimmed = text::python_strip(std::string_view(decoded));
      plan_.pieces.push_back({begin, end, std::string(trimmed), false, false});
    }
  }

  HtmlPlan& plan_;
};

std::string escaped(const std::string& text, bool attribute) {
  std::string out;
  for (char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"' && attribute) out += "&quot;";
    else out += c;
  }
  return out;
}

}  // namespace

HtmlPlan plan_html(std::string html) {
  if (!text::is_valid_utf8(html)) throw RuntimeError("not valid UTF-8 (an HTML document must be UTF-8)");
  HtmlPlan plan;
  plan.original = std::move(html);
  // Parse errors are not used; unlimited, each unclosed element of a page 100,000 deep records
  // one with a copy of the open-element stack (out of memory).
  static const GumboOptions options = [] {
    GumboOptions o = kGumboDefaultOptions;
    o.max_errors = 0;
    return o;
  }();
  std::unique_ptr<GumboOutput, void (*)(GumboOutput*)> out(
      gumbo_parse_with_options(&options, plan.original.data(), plan.original.size()),
      [](GumboOutput* o) { gumbo_destroy_output(&options, o); });
  Planner(plan).element(out->root);
  std::sort(plan.pieces.begin(), plan.pieces.end(), [](const TextPiece& a, const TextPiece& b) { return a.begin < b.begin; });
  // Overlaps cannot come from the walk (attributes are of elements outside runs); kept out anyway.
  std::vector<TextPiece> kept;
  for (auto& p : plan.pieces)
    if (kept.empty() || p.begin >= kept.back().end) kept.push_back(std::move(p));
  plan.pieces = std::move(kept);
  return plan;
}

namespace {

bool is_void_tag(std::string_view tag) {
  for (const char* v : {"br", "img", "wbr", "input", "hr", "meta", "link", "area", "source", "embed", "col", "track"})
    if (tag == v) return true;
  return false;
}

// The markup with every tag replaced by as many spaces (so the sentence rules see "park. Next"
// in "<i>park.</i> Next"), and the number of inline elements open before each byte.
void mask_tags(const std::string& markup, std::string& masked, std::vector<int>& depth) {
  masked = markup;
  depth.assign(markup.size() + 1, 0);
  int open = 0;
  for (size_t i = 0; i < markup.size();) {
    depth[i] = open;
    if (markup[i] != '<') {
      ++i;
      continue;
    }
    const size_t close = markup.find('>', i);
    if (close == std::string::npos) break;
    const bool end_tag = i + 1 < markup.size() && markup[i + 1] == '/';
    size_t name_start = i + (end_tag ? 2 : 1), name_end = name_start;
    while (name_end < close && std::isalnum(static_cast<unsigned char>(markup[name_end]))) ++name_end;
    std::string name = markup.substr(name_start, name_end - name_start);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool self_closing = markup[close - 1] == '/' || is_void_tag(name) || markup[i + 1] == '!';
    if (end_tag) open = std::max(0, open - 1);
    for (size_t k = i; k <= close; ++k) {
      masked[k] = ' ';
      depth[k] = open;
    }
    if (!end_tag && !self_closing) ++open;
    i = close + 1;
  }
  depth[markup.size()] = open;
}

}  // namespace

void split_markup_sentences(HtmlPlan& plan, const text::SentenceSplitter& splitter) {
  std::vector<TextPiece> out;
  for (auto& piece : plan.pieces) {
    if (!piece.markup) {
      out.push_back(std::move(piece));
      continue;
    }
    std::string masked;
    std::vector<int> depth;
    mask_tags(piece.text, masked, depth);
    // Cut where a sentence begins with no element open; each part trimmed of its spaces.
    std::vector<size_t> cuts = {0};
    for (const auto& span : splitter.split(masked))
      if (span.begin > 0 && depth[span.begin] == 0) cuts.push_back(span.begin);
    cuts.push_back(piece.text.size());
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      size_t b = cuts[k], e = cuts[k + 1];
      while (b < e && text::is_ascii_space(piece.text[b])) ++b;
      while (e > b && text::is_ascii_space(piece.text[e - 1])) --e;
      if (b == e) continue;
      out.push_back({piece.begin + b, piece.begin + e, piece.text.substr(b, e - b), true, false});
    }
  }
  plan.pieces = std::move(out);
}

std::vector<std::vector<std::string>> translate_pieces(const std::vector<HtmlPlan>& plans,
                                                       const TranslatePieces& translate) {
  std::vector<std::string> texts[2];  // plain, markup
  for (const auto& plan : plans)
    for (const auto& piece : plan.pieces) texts[piece.markup].push_back(piece.text);
  const std::vector<std::string> translated[2] = {translate(texts[0], false), translate(texts[1], true)};
  size_t next[2] = {0, 0};
  std::vector<std::vector<std::string>> out;
  for (const auto& plan : plans) {
    out.emplace_back();
    for (const auto& piece : plan.pieces) out.back().push_back(translated[piece.markup].at(next[piece.markup]++));
  }
  return out;
}

std::string apply_translations(const HtmlPlan& plan, const std::vector<std::string>& translations) {
  if (translations.size() != plan.pieces.size())
    throw RuntimeError("HTML document: a translation count that does not match the pieces (a bug)");
  std::string out;
  size_t at = 0;
  for (size_t i = 0; i < plan.pieces.size(); ++i) {
    const TextPiece& p = plan.pieces[i];
    out.append(plan.original, at, p.begin - at);
    out += p.markup ? translations[i] : escaped(translations[i], p.attribute);
    at = p.end;
  }
  out.append(plan.original, at, std::string::npos);
  return out;
}

}  // namespace nmt::doc
