#!/usr/bin/env python3
"""Runs the shell examples of the docs, so they cannot go stale.

Every fenced shell block (```sh, ```bash, ```shell, ```console) in README.md, CONTRIBUTING.md and
docs/**/*.md carries a marker on one of the two lines above it:

    <!-- example: run -->                          run here, must exit 0
    <!-- example: run, output: REGEX -->           ... and its output must match REGEX
    <!-- example: not run (REASON) -->             not runnable here, and why (e.g. trains for
                                                   an hour, needs a GPU or a second machine)
    <!-- example: run by CI -->                    set-up, build and tests: .ci/run runs them

A block without a marker is an error. `run` blocks execute with bash -e -o pipefail, one at a
time, in a scratch folder laid out as the docs assume: build/ (the build under test), scripts/,
data/downloaded/multi30k/ (train, val, test_2016_flickr and test_2017_flickr: the repository's
tiny fixture corpus), models/t-small (a tiny Transformer trained for the run, in seconds), and
ref.fr, hyp.fr, base.fr, new.fr to score. nmt is also on PATH. Each block gets 120 s, and
whatever it started in the background (a server) is stopped after it.
Prints one line per failure (file:line: what) and exits 1, else a count and exits 0.

    python3 scripts/checks/run-doc-examples.py BUILD_DIR [REPO_ROOT]
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

FENCE = re.compile(r"^\s*```+\s*([A-Za-z]*)")
SHELL = {"sh", "bash", "shell", "console"}
MARKER = re.compile(r"<!--\s*example:\s*(run by CI|run(?:,\s*output:\s*(.*?))?|not run\s*\((.+)\))\s*-->")


def blocks(path):
    """Yields (line of the fence, marker match or None, text) for each shell block."""
    lines = path.read_text(encoding="utf-8").split("\n")
    inside, lang, start, body = False, "", 0, []
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if m and not inside:
            inside, lang, start, body = True, m.group(1).lower(), number, []
        elif m and inside:
            inside = False
            if lang in SHELL:
                above = [l for l in lines[max(0, start - 3): start - 1] if l.strip()]
                marker = next((MARKER.search(l) for l in reversed(above[-2:]) if MARKER.search(l)), None)
                yield start, marker, "\n".join(body)
        elif inside:
            body.append(line)


def run(cmd, cwd, env, timeout):
    """Runs a block; returns (exit status or "timeout", output). Output goes to a file, not a
    pipe: a server the block left in the background would hold a pipe open."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as out:
        proc = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", cmd], cwd=cwd, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            status = "timeout"
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # a server or anything else left in the background
        except ProcessLookupError:
            pass
        proc.wait()
        out.seek(0)
        return status, out.read()


def train_model(w, options):
    """Trains one of the examples' models in seconds (seeded, one thread), or raises."""
    status, out = run(f"build/nmt train {options} --seed 1 --threads 1 -q", w, None, 300)
    if status != 0:
        raise RuntimeError(f"the examples' model ({options}) did not train (exit {status}): {out[-500:]}")


def workspace(build, root):
    """The scratch folder the examples run in (see the module's text)."""
    w = Path(tempfile.mkdtemp(prefix="nmt-doc-examples."))
    (w / "build").symlink_to(Path(build).resolve())
    (w / "scripts").symlink_to(root / "scripts")
    data = w / "data" / "downloaded" / "multi30k"
    data.mkdir(parents=True)
    for split in ("train", "val", "test_2016_flickr", "test_2017_flickr"):
        for lang in ("en", "fr"):
            shutil.copy(root / "data" / "fixtures" / f"tiny.{lang}", data / f"{split}.{lang}")
    ref = (root / "data" / "fixtures" / "tiny.fr").read_text(encoding="utf-8").splitlines()
    (w / "ref.fr").write_text("\n".join(ref) + "\n", encoding="utf-8")
    (w / "hyp.fr").write_text("\n".join(" ".join(l.split()[:-1]) for l in ref) + "\n", encoding="utf-8")
    (w / "base.fr").write_text("\n".join(" ".join(l.split()[1:]) for l in ref) + "\n", encoding="utf-8")
    (w / "new.fr").write_text("\n".join(l for l in ref) + "\n", encoding="utf-8")
    for name in ("in.en", "test.en", "en.txt", "input.en"):
        shutil.copy(root / "data" / "fixtures" / "tiny.en", w / name)
    shutil.copy(root / "data" / "fixtures" / "tiny.fr", w / "test.fr")
    shutil.copy(root / "data" / "fixtures" / "page.html", w / "page.html")
    corpus = "--train data/downloaded/multi30k/train --valid data/downloaded/multi30k/val"
    train_model(w, f"--preset gru-tiny {corpus} --out models/gru-small --max-steps 20 --valid-every 20")
    train_model(w, f"--preset transformer-tiny {corpus} --src en --tgt fr --out models/t-small "
                   f"--max-steps 40 --valid-every 40 --save-every 10 --keep-last 8 --lr 5e-3")
    return w


def main():
    if len(sys.argv) < 2:
        print("usage: run-doc-examples.py BUILD_DIR [REPO_ROOT]", file=sys.stderr)
        return 2
    build = sys.argv[1]
    root = Path(sys.argv[2] if len(sys.argv) > 2 else Path(__file__).resolve().parents[2]).resolve()
    docs = [root / "README.md", root / "CONTRIBUTING.md"] + sorted((root / "docs").rglob("*.md"))
    found, problems = [], []
    for doc in (d for d in docs if d.is_file()):
        for line, marker, text in blocks(doc):
            where = f"{doc.relative_to(root)}:{line}"
            if marker is None:
                problems.append(f"{where}: shell example with no '<!-- example: ... -->' marker (run, or not run and why)")
            elif marker.group(1).startswith("run") and marker.group(1) != "run by CI":
                found.append((where, marker.group(2), text))
    counts = {"run": 0}
    if found:
        w = workspace(build, root)
        env = dict(os.environ, PATH=f"{w / 'build'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                   DATA="data/downloaded/multi30k")
        try:
            for where, expected, text in found:
                status, out = run(text, w, env, 120)
                counts["run"] += 1
                if status != 0:
                    tail = " | ".join(out.strip().splitlines()[-3:])
                    problems.append(f"{where}: example failed (exit {status}): {tail}")
                elif expected and not re.search(expected, out):
                    problems.append(f"{where}: example's output does not match /{expected}/: {out.strip()[-300:]}")
        finally:
            shutil.rmtree(w, ignore_errors=True)
    for p in problems:
        print(p)
    print(f"doc examples: {counts['run']} run, {len(problems)} failed or unmarked")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
