#!/usr/bin/env python3
"""Every nmt command line shown in the docs names a subcommand and flags that exist.

Reads the shell examples (fenced ```sh / ```bash / ```shell / ```console blocks) of README.md,
CONTRIBUTING.md and docs/**/*.md, finds each `nmt SUBCOMMAND ...` call (also build/nmt,
build-wheel/nmt, ./nmt), and checks the subcommand and every flag it is given against what
`NMT SUBCOMMAND --help` prints. Also checks that every scripts/[FOLDER/]NAME it mentions exists.
Prints one line per stale example (file:line: what) and exits 1, else a count and exits 0.

    python3 scripts/checks/check-doc-commands.py build/nmt [REPO_ROOT]
"""
import functools
import re
import subprocess
import sys
from pathlib import Path

FENCE = re.compile(r"^(\s*)```+\s*([A-Za-z]*)")
SHELL_LANGS = {"sh", "bash", "shell", "console"}
CALL = re.compile(r"(?:^|[\s;|&(`$])(?:\S*/)?nmt[ \t]+([a-z][a-z0-9-]*)((?:[ \t]+[^\s|;&><`)]+)*)")
FLAG = re.compile(r"^(--[A-Za-z0-9][A-Za-z0-9-]*|-[A-Za-z])(?:=.*)?$")
SCRIPT = re.compile(r"\bscripts/([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*\.(?:sh|bash|py))")


@functools.lru_cache(maxsize=None)
def help_flags(nmt, *command):
    args = [nmt, *command, "--help"]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    flags = set(re.findall(r"(?<![A-Za-z0-9-])(--[A-Za-z0-9][A-Za-z0-9-]*|-[A-Za-z])(?=[\s,={\[]|$)", out.stdout))
    return flags | {"-h", "--help"}


def shell_blocks(path):
    """Yields (first line number, text) of each shell block in a Markdown file."""
    lines = path.read_text(encoding="utf-8").split("\n")
    block, lang, start = None, "", 0
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if m and block is None:
            block, lang, start = [], m.group(2).lower(), number + 1
        elif m and block is not None:
            if lang in SHELL_LANGS:
                yield start, "\n".join(block)
            block = None
        elif block is not None:
            block.append(line)


def main():
    if len(sys.argv) < 2:
        print("usage: check-doc-commands.py NMT_BINARY [REPO_ROOT]", file=sys.stderr)
        return 2
    nmt = sys.argv[1]
    root = Path(sys.argv[2] if len(sys.argv) > 2 else Path(__file__).resolve().parents[2])
    top = help_flags(nmt)
    if top is None:
        print(f"check-doc-commands: {nmt} --help failed", file=sys.stderr)
        return 2
    helps, problems, calls = {}, [], 0
    docs = [root / "README.md", root / "CONTRIBUTING.md"] + sorted((root / "docs").rglob("*.md"))
    for doc in (d for d in docs if d.is_file()):
        name = doc.relative_to(root)
        for start, text in shell_blocks(doc):
            joined = text.replace("\\\n", "  ")
            for m in CALL.finditer(joined):
                command, rest = m.group(1), m.group(2)
                line = start + joined[: m.start()].count("\n")
                words = rest.split()
                # A nested subcommand (nmt bench translate ...): its own options count.
                if words and not words[0].startswith("-") and help_flags(nmt, command, words[0]) is not None:
                    command, rest = f"{command} {words[0]}", " ".join(words[1:])
                if command not in helps:
                    helps[command] = help_flags(nmt, *command.split())
                known = helps[command]
                calls += 1
                if known is None:
                    problems.append(f"{name}:{line}: 'nmt {command}' is not a subcommand")
                    continue
                for word in rest.split():
                    f = FLAG.match(word)
                    if f and f.group(1) not in known and f.group(1) not in top:
                        problems.append(f"{name}:{line}: 'nmt {command}' has no option {f.group(1)}")
            for m in SCRIPT.finditer(text):
                if not (root / "scripts" / m.group(1)).is_file():
                    line = start + text[: m.start()].count("\n")
                    problems.append(f"{name}:{line}: scripts/{m.group(1)} does not exist")
    for p in problems:
        print(p)
    print(f"doc commands: {calls} nmt calls checked, {len(problems)} stale")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
