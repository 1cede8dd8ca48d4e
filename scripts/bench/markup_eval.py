#!/usr/bin/env python3
"""Markup that survives translation, measured (`nmt translate --markup`): tagged source lines in,
and for each output line an independent check, with Python's html.parser rather than nmt's own
code, that the output has exactly the source's tags and that they are properly nested.

    markup_eval.py make SOURCE SEED > TAGGED      # tag held-out sentences at random, seeded
    markup_eval.py check TAGGED OUTPUT            # one summary line, and the failures

`make` wraps random word spans of each line in <b>, <i>, <u> or <a href="..."> (1-3 pairs, some
nested), inserts <x id="N"/> placeholders and <br> between words, and escapes the text's & < >,
so every line is balanced markup. `check` counts a line as kept when the output's tags (their
verbatim text, with multiplicity) equal the source's and, for a balanced source, every closing
tag closes the innermost open one and nothing stays open.
"""
import html.parser
import random
import sys

VOID = {"br", "hr", "img", "input", "meta", "link", "wbr", "area", "base", "col", "embed", "source", "track"}


class Tags(html.parser.HTMLParser):
    """The verbatim tags of a line, in order, and whether they nest."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.stack, self.nested = [], [], True

    def handle_starttag(self, tag, attrs):
        self.tags.append(self.get_starttag_text())
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(self.get_starttag_text())

    def handle_endtag(self, tag):
        self.tags.append(f"</{tag}>")
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            self.nested = False

    def handle_comment(self, data):
        self.tags.append(f"<!--{data}-->")


def parse(line):
    p = Tags()
    p.feed(line)
    p.close()
    return sorted(p.tags), p.nested and not p.stack


def escape(word):
    return word.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def tag_line(line, rng):
    words = [escape(w) for w in line.split()]
    if not words:
        return line
    opens, closes = [[] for _ in words], [[] for _ in words]
    spans = []
    for _ in range(rng.randint(1, 3)):
        # A span inside one already chosen, or disjoint from all: pairs nest, never cross.
        a = rng.randrange(len(words))
        b = rng.randrange(a, min(len(words), a + 4))
        if any(not (b < s or a > e or (s <= a and b <= e) or (a <= s and e <= b)) for s, e in spans):
            continue
        spans.append((a, b))
    for n, (a, b) in enumerate(sorted(spans, key=lambda s: (s[0], -s[1]))):
        name = rng.choice(["b", "i", "u", "a"])
        opens[a].append(f'<a href="https://example.org/{n}?x=1&amp;y=2">' if name == "a" else f"<{name}>")
        closes[b].insert(0, f"</{name}>")
    out = []
    for i, w in enumerate(words):
        if rng.random() < 0.08:
            out.append(f'<x id="{i}"/>' if rng.random() < 0.7 else "<br>")
        out.append("".join(opens[i]) + w + "".join(closes[i]))
    return " ".join(out)


def make(source, seed):
    for n, line in enumerate(open(source, encoding="utf-8")):
        rng = random.Random(f"{seed}/{n}")
        print(tag_line(line.rstrip("\n"), rng))


def check(tagged, output):
    src = open(tagged, encoding="utf-8").read().split("\n")[:-1]
    out = open(output, encoding="utf-8").read().split("\n")[:-1]
    if len(src) != len(out):
        sys.exit(f"markup_eval: {tagged} has {len(src)} lines, {output} {len(out)}")
    kept = balanced = kept_balanced = 0
    failures = []
    for n, (s, o) in enumerate(zip(src, out), 1):
        s_tags, s_nested = parse(s)
        o_tags, o_nested = parse(o)
        ok = s_tags == o_tags and (o_nested or not s_nested)
        kept += ok
        balanced += s_nested
        kept_balanced += ok and s_nested
        if not ok:
            failures.append(f"line {n}: {s!r} -> {o!r}")
    print(f"{len(src)} lines, {kept} with every tag kept and well-formed ({100 * kept / max(1, len(src)):.1f}%); "
          f"balanced sources {balanced}, of which kept {kept_balanced}")
    for f in failures[:20]:
        print(f)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
