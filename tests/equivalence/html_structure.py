#!/usr/bin/env python3
"""Two HTML files have the same structure, as Python's own parser (html.parser) reads them: the
same tags in the same order with the same attributes (the translatable ones, alt, title,
placeholder and aria-label, may differ), the same comments and doctype, and the same text
inside <script>, <style>, <code>, <pre> and translate="no" elements. The text elsewhere may differ
(it is the translation; inline tags move with the words they wrap), and there must be as much of
it: no translated text is dropped to nothing.

    html_structure.py SOURCE.html TRANSLATED.html
"""
import sys
from html.parser import HTMLParser

TRANSLATABLE = {"alt", "title", "placeholder", "aria-label"}
KEPT = {"script", "style", "code", "pre"}


class Structure(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.events, self.kept, self.stack, self.words = [], [], [], 0

    def keeping(self):
        return any(tag in KEPT or no for tag, no in self.stack)

    def handle_starttag(self, tag, attrs):
        self.events.append(("start", tag, tuple((k, v) for k, v in attrs if k not in TRANSLATABLE)))
        if tag not in ("img", "input", "meta", "br", "hr", "link"):
            self.stack.append((tag, dict(attrs).get("translate") == "no"))

    def handle_endtag(self, tag):
        self.events.append(("end", tag))
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_startendtag(self, tag, attrs):
        self.events.append(("start", tag, tuple((k, v) for k, v in attrs if k not in TRANSLATABLE)))

    def handle_data(self, data):
        if self.keeping():
            self.kept.append(data)
        else:
            self.words += len(data.split())

    def handle_comment(self, data):
        self.events.append(("comment", data))

    def handle_decl(self, decl):
        self.events.append(("decl", decl))


def read(path):
    s = Structure()
    with open(path, encoding="utf-8") as f:
        s.feed(f.read())
    s.close()
    return s


source, translated = read(sys.argv[1]), read(sys.argv[2])
if source.events != translated.events:
    for i, (a, b) in enumerate(zip(source.events, translated.events)):
        if a != b:
            sys.exit(f"structure differs at event {i}: {a} in the source, {b} in the translation")
    sys.exit(f"{len(source.events)} events in the source, {len(translated.events)} in the translation")
if source.kept != translated.kept:
    sys.exit(f"kept text changed: {source.kept} -> {translated.kept}")
if translated.words < source.words / 2:
    sys.exit(f"{source.words} words of text in the source, only {translated.words} in the translation")
print(f"html_structure: {len(source.events)} events and {len(source.kept)} kept texts the same")
