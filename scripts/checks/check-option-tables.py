#!/usr/bin/env python3
"""Every command's flags come from the option tables (docs/design.md, "Options declared once").

    python3 scripts/checks/check-option-tables.py [REPO_ROOT]

Reads the C++ files under REPO_ROOT/app/ (all but app/option_binder.cc and app/option_binder.h,
which bind the tables to CLI11) and finds each flag or range declared there by hand:
  * a call of CLI11's add_option or add_flag (or their _function / _callback forms);
  * a range written by hand: ->check(CLI::...), CLI::Range, CLI::PositiveNumber,
    CLI::NonNegativeNumber, or a message saying "must be between", "must be at least" or
    "must be a number above" (the words of a table's range check).
Each is allowed only if docs/design.md lists it under the heading "Flags outside the option
tables", one list item per flag: `app/FILE: --flag — reason` (a flag as its call names it:
"-o,--output" is listed as --output or -o, a positional argument by its name; several flags of
one call may be listed as --record/--no-record). A listed exception that matches nothing fails
too, so the list says exactly where a flag is declared by hand.

Prints one line per finding (FILE:LINE: why) and exits 1; otherwise prints "option tables: N
commands checked, 0 hand-declared flags outside the listed exceptions" (N: the subcommands the
files declare) and exits 0. Exits 2 when REPO_ROOT has no app/ or docs/design.md.
"""
import re
import string
import sys
from pathlib import Path

BINDER_FILES = {"app/option_binder.cc", "app/option_binder.h"}
SECTION = "Flags outside the option tables"
CALL = re.compile(r"\badd_(?:option|flag)(?:_function|_callback)?\s*\(")
SUBCOMMAND = re.compile(r"\badd_subcommand\s*\(")
HAND_RANGE = re.compile(r"->\s*check\s*\(\s*CLI::(\w+)|\bCLI::(Range|PositiveNumber|NonNegativeNumber)\b")
RANGE_WORDS = re.compile(r"must be (?:between|at least|a number above)")
FLAG_WORD = re.compile(r"(?<![\w-])--?[A-Za-z0-9][\w-]*")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
ITEM = re.compile(r"^\s*[-*+]\s+(.*)$")
EXCEPTION = re.compile(r"^(app/\S+?):\s+(\S+)\s+[—–]\s+(\S.*)$")


def blank(text, start, end):
    """`text` with [start, end) replaced by spaces, newlines kept (line numbers hold)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def find_or_end(text, what, start):
    """Where `what` is in `text` from `start` on, else the end of `text`."""
    at = text.find(what, start)
    return len(text) if at < 0 else at


def split_code(text):
    """(code, literals): `text` with its comments and the bodies of its string and character
    literals blanked (every offset kept), and the (start, end, body) of each string literal."""
    code, literals, i, n = text, [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            end = find_or_end(text, "\n", i)
            code = blank(code, i, end)
        elif text.startswith("/*", i):
            end = min(find_or_end(text, "*/", i + 2) + 2, n)
            code = blank(code, i, end)
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            delim = text[i + 2:find_or_end(text, "(", i + 2)]
            end = min(find_or_end(text, ")" + delim + '"', i) + len(delim) + 2, n)
            literals.append((i + 1, end, text[i + 3 + len(delim):end - len(delim) - 2]))
            code = blank(code, i + 2, end - 1)
        elif text[i] == "'" and i > 0 and text[i - 1] in string.hexdigits:
            end = i + 1  # a digit separator (1'000'000), not a character literal
        elif text[i] in "\"'":
            end = i + 1
            while end < n and text[end] != text[i] and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            end += 1
            if text[i] == '"':
                literals.append((i, end, text[i + 1:end - 1]))
            code = blank(code, i + 1, end - 1)
        else:
            end = i + 1
        i = end
    return code, literals


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def flag_names(literal):
    """{"-o", "--output"} of "-o,--output"; {"--record", "--no-record"} of "--record,!--no-record"."""
    return {name.strip().lstrip("!") for name in literal.split(",") if name.strip()}


def first_flag(text):
    """The first --flag or -f that `text` names, as a set (empty when none)."""
    return set(FLAG_WORD.findall(text)[:1])


def findings_in(text):
    """[(line, names, why)] of the flags and ranges one file declares by hand, and the number of
    subcommands it declares."""
    code, literals = split_code(text)
    found, calls = [], []
    for m in CALL.finditer(code):
        end = find_or_end(code, ";", m.end())
        literal = next((body for s, e, body in literals if m.end() <= s < end), None)
        names = flag_names(literal) if literal is not None else {"?"}
        shown = f'"{literal}"' if literal is not None else code[m.end():end].split(",")[0].strip()
        found.append((line_of(code, m.start()), names, f"{m.group(0).rstrip('( ')}({shown}) declares a flag by hand"))
        calls.append((m.start(), end, names))
    for m in HAND_RANGE.finditer(code):
        # In a declaration, its flag; elsewhere the flag its line names.
        names = next((names for s, e, names in calls if s <= m.start() < e), None)
        names = names or first_flag(text.split("\n")[line_of(code, m.start()) - 1]) or {"?"}
        why = f"CLI::{m.group(1) or m.group(2)} checks a range by hand ({'/'.join(sorted(names))})"
        found.append((line_of(code, m.start()), names, why))
    for start, _, body in literals:
        words = RANGE_WORDS.search(body)
        if words:
            names = first_flag(body) or {"?"}
            why = f'"{words.group(0)}" checks a range by hand ({"/".join(sorted(names))})'
            found.append((line_of(code, start), names, why))
    return found, len(SUBCOMMAND.findall(code))


def read_exceptions(design):
    """[(line, file, names, reason)] listed under the SECTION heading of docs/design.md, and the
    lines of that section that do not read as an exception."""
    lines = design.read_text(encoding="utf-8").split("\n")
    exceptions, unreadable, level = [], [], None
    for number, line in enumerate(lines, 1):
        heading = HEADING.match(line)
        if heading:
            if level is not None and len(heading.group(1)) <= level:
                break
            if heading.group(2) == SECTION:
                level = len(heading.group(1))
            continue
        item = ITEM.match(line) if level is not None else None
        if not item:
            continue
        m = EXCEPTION.match(item.group(1).replace("`", ""))
        if m:
            names = {n.lstrip("!") for n in re.split(r"[,/]", m.group(2)) if n}
            exceptions.append((number, m.group(1), names, m.group(3)))
        else:
            unreadable.append(number)
    return (exceptions, unreadable) if level is not None else (None, [])


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2])
    design = root / "docs" / "design.md"
    if not (root / "app").is_dir() or not design.is_file():
        print(f"check-option-tables: {root} has no app/ or no docs/design.md", file=sys.stderr)
        return 2
    exceptions, unreadable = read_exceptions(design)
    problems = []
    if exceptions is None:
        problems.append(f'docs/design.md: no section "{SECTION}" (the list of allowed exceptions)')
        exceptions = []
    problems += [f"docs/design.md:{n}: not an exception as `app/FILE: --flag — reason` reads" for n in unreadable]
    used, hand_declared, commands = set(), 0, 0
    for path in sorted((root / "app").rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.suffix not in (".cc", ".h", ".hpp", ".cpp") or relative in BINDER_FILES:
            continue
        found, subcommands = findings_in(path.read_text(encoding="utf-8"))
        commands += subcommands
        for line, names, why in found:
            allowed = [e for e in exceptions if e[1] == relative and e[2] & names]
            used.update(e[0] for e in allowed)
            if not allowed:
                hand_declared += 1
                problems.append(f"{relative}:{line}: {why}: declare it in an option table, or list it under "
                                f'"{SECTION}" in docs/design.md')
    for number, file, names, _ in exceptions:
        if number not in used:
            problems.append(f"docs/design.md:{number}: {file}: {'/'.join(sorted(names))} is listed as an exception "
                            "but declared nowhere by hand there: remove the line")
    for p in problems:
        print(p)
    print(f"option tables: {commands} commands checked, {hand_declared} hand-declared flags outside the listed "
          "exceptions")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
