#!/usr/bin/env python3
"""Checks the links of every Markdown file in the repository (standard library only, no network).

    python3 scripts/checks/check-links.py [--list-external] [REPO_ROOT]

For each *.md file (build*/ folders, hidden folders and fuzz-out/ left out):
  * a relative link [text](path) or [text](path#anchor) must name an existing file or folder,
    relative to the file that contains it;
  * an anchor (#anchor alone, or path.md#anchor) must be the GitHub slug of a heading of the
    target file: lowercase, punctuation removed except '-' and '_', each space turned into '-',
    and the 2nd, 3rd... heading with the same slug getting -1, -2...;
  * external links (http://, https://, mailto:) are not fetched; --list-external prints them.
Links inside fenced code blocks and inline code spans are not links and are skipped. Reference
definitions ([name]: target) and images ![alt](path) are checked as links.

Source files (app/, lib/, scripts/, tests/, .ci/, CMakeLists.txt files: .cc .h .sh .bash .py
.cmake .txt .toml) are read for the pointers their comments and strings make:
  * a repository path such as docs/training.md, scripts/setup.sh or tests/cli/torchrun.sh (rooted
    at a top-level folder, with a file extension) must exist, from the root or from the file;
  * FILE.md#anchor must name a heading of FILE.md;
  * a section named in quotes after a Markdown file (README, "Install"; docs/serving.md's
    "Errors") must be a heading of that file.
A source file with "check-links: skip" in its first ten lines is not read (a test's fixture).

Prints one line per broken link (FILE:LINE: message) and exits 1; otherwise prints
"links: N checked, 0 broken" and exits 0.
"""
import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

EXCLUDED_DIRS = re.compile(r"^(build.*|fuzz-out|node_modules|\..*)$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]*(?:\([^()\s]*\)[^()\s<>]*)*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.IGNORECASE)
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
SOURCE_DIRS = ("app", "lib", "scripts", "tests", ".ci")
SOURCE_SUFFIXES = {".cc", ".h", ".hpp", ".sh", ".bash", ".py", ".cmake", ".toml"}
SOURCE_PATH = re.compile(
    r"(?<![\w/.$-])((?:\.\./)*(?:docs|scripts|tests|lib|app|data|models|\.ci)/[\w./+-]*?"
    r"\.(?:md|sh|bash|py|cc|h|toml|cmake|version|txt|supp))(?:#([\w-]+))?(?![\w/*-])")
TOP_LEVEL_MD = re.compile(r"(?<![\w/.-])((?:README|CONTRIBUTING|CHANGELOG)\.md)#([\w-]+)")
SECTION_NAMED = re.compile(
    r"(?<![\w/.-])((?:docs/)?[\w.-]*(?:README|\.md))(?:\.md)?(?:'s)?,?\s+(?:section\s+)?\"([^\"]{3,80})\"")


def markdown_files(root):
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if any(EXCLUDED_DIRS.match(part) for part in rel.parts[:-1]):
            continue
        yield path


def slug(text):
    """GitHub's heading anchor: markup dropped, lowercase, punctuation but - and _ removed,
    spaces to -."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "")
    text = text.lower()
    out = []
    for ch in text:
        if ch in "-_" or ch == " ":
            out.append("-" if ch == " " else ch)
        elif ch.isalnum() or unicodedata.category(ch).startswith("M"):
            out.append(ch)
        # everything else (punctuation, symbols) is dropped
    return "".join(out)


def scan(path):
    """Returns (anchors, links): the heading slugs of the file, and (line, target) of its links."""
    lines = path.read_text(encoding="utf-8").split("\n")
    anchors, counts, links = set(), {}, []
    fence = None
    previous = ""
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            previous = ""
            continue
        if m:
            fence = m.group(1)
            previous = ""
            continue
        heading = None
        h = HEADING.match(line)
        if h:
            heading = h.group(2)
        elif SETEXT.match(line) and previous.strip() and not previous.lstrip().startswith(("-", "*", "|", ">")):
            heading = previous.strip()
        if heading is not None:
            base = slug(heading)
            n = counts.get(base, 0)
            anchors.add(base if n == 0 else f"{base}-{n}")
            counts[base] = n + 1
        for a in HTML_ANCHOR.finditer(line):
            anchors.add(a.group(1))
        text = CODE_SPAN.sub(lambda c: " " * len(c.group(0)), line)
        for l in INLINE_LINK.finditer(text):
            links.append((number, l.group(1)))
        r = REF_DEF.match(text)
        if r:
            links.append((number, r.group(1)))
        previous = line
    return anchors, links


def source_files(root):
    for top in SOURCE_DIRS:
        base = root / top
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(root)
            if any(EXCLUDED_DIRS.match(part) for part in rel.parts[1:-1]) or "fuzz" in rel.parts[:2] and "corpus" in str(rel):
                continue
            if path.is_file() and (path.suffix in SOURCE_SUFFIXES or path.name == "CMakeLists.txt" or
                                   path.parent.name == ".ci"):
                yield path
    top_cmake = root / "CMakeLists.txt"
    if top_cmake.is_file():
        yield top_cmake


def heading_anchors(path, cache):
    if path not in cache:
        cache[path] = scan(path)[0]
    return cache[path]


def source_pointers(root, cache):
    """(checked, broken) for the repository paths and Markdown sections source files point to."""
    checked, broken = 0, []
    for path in source_files(root):
        name = path.relative_to(root)
        try:
            lines = path.read_text(encoding="utf-8").split("\n")
        except UnicodeDecodeError:
            continue
        if any("check-links: skip" in l for l in lines[:10]):
            continue  # its paths are a fixture's, not pointers into this repository
        for number, line in enumerate(lines, 1):
            found = [(m.group(1), m.group(2)) for m in SOURCE_PATH.finditer(line)]
            found += [(m.group(1), m.group(2)) for m in TOP_LEVEL_MD.finditer(line)]
            for target, anchor in found:
                checked += 1
                dest = next((d for d in (root / target, path.parent / target, root / "lib" / "nmt" / target) if d.exists()), None)
                if dest is None:
                    broken.append(f"{name}:{number}: {target}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in heading_anchors(dest.resolve(), cache):
                    broken.append(f"{name}:{number}: {target}#{anchor}: no heading with that anchor")
            for m in SECTION_NAMED.finditer(line):
                doc = m.group(1) if m.group(1).endswith(".md") else m.group(1) + ".md"
                dest = next((d for d in (root / doc, root / "docs" / doc) if d.is_file()), None)
                if dest is None:
                    continue  # not a file of ours: a word that happens to end in README
                checked += 1
                if slug(m.group(2)) not in heading_anchors(dest.resolve(), cache):
                    broken.append(f"{name}:{number}: {doc}, \"{m.group(2)}\": no such section")
    return checked, broken


def main(argv):
    list_external = "--list-external" in argv
    rest = [a for a in argv if a != "--list-external"]
    if any(a.startswith("-") for a in rest) or len(rest) > 1:
        print("usage: check-links.py [--list-external] [REPO_ROOT]", file=sys.stderr)
        return 2
    root = Path(rest[0] if rest else Path(__file__).resolve().parents[2]).resolve()
    files = list(markdown_files(root))
    scanned = {p: scan(p) for p in files}
    checked, broken, external = 0, [], []
    for path, (_, links) in scanned.items():
        name = path.relative_to(root)
        for number, target in links:
            checked += 1
            if EXTERNAL.match(target):
                external.append(f"{name}:{number}: {target}")
                continue
            file_part, _, anchor = target.partition("#")
            file_part = unquote(file_part)
            if file_part:
                dest = (root / file_part.lstrip("/")) if file_part.startswith("/") else (path.parent / file_part)
                dest = Path(dest).resolve()
                if not dest.exists():
                    broken.append(f"{name}:{number}: {target}: no such file")
                    continue
                try:
                    dest.relative_to(root)
                except ValueError:
                    broken.append(f"{name}:{number}: {target}: points outside the repository")
                    continue
            else:
                dest = path
            if anchor:
                if dest.is_dir() or dest.suffix.lower() != ".md":
                    broken.append(f"{name}:{number}: {target}: an anchor into a file that is not Markdown")
                    continue
                anchors = scanned[dest][0] if dest in scanned else scan(dest)[0]
                if unquote(anchor) not in anchors:
                    broken.append(f"{name}:{number}: {target}: no heading with anchor #{anchor} in {dest.relative_to(root)}")
    source_checked, source_broken = source_pointers(root, {p: a for p, (a, _) in scanned.items()})
    checked += source_checked
    broken += source_broken
    if list_external:
        for e in external:
            print(e)
    for b in broken:
        print(b)
    if broken:
        print(f"links: {checked} checked, {len(broken)} broken", file=sys.stderr)
        return 1
    print(f"links: {checked} checked, 0 broken")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
