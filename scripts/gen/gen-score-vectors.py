#!/usr/bin/env python3
"""Generates tests/score-vectors/: sacreBLEU 2.6.0's own outputs on varied cases, which the test
suite (tests/unit/metrics/score_vectors_test.cc, tests/cli/bleu_test.cc) compares nmt with.

Each case is a directory with its inputs (ref*.txt, sys*.txt: small, a few dozen lines) and
expected.json:

  "runs":   sacreBLEU command lines (as structured options) and their exact stdout, run through
            the sacreBLEU CLI with NO_COLOR=1 (text tables, JSON, --confidence, --paired-bs,
            --paired-ar, sentence level, every tokenizer and TER option used);
  "api":    full-precision numbers from the Python API for each metric configuration: corpus
            scores, sentence scores, bootstrap CI (mean, half-width, their numpy types), and
            paired bootstrap / approximate randomisation results per system.

Inputs are Multi30k test_2016_flickr references ($NMT_DATA or ../shared/data) with seeded,
deterministic perturbations, plus hand-written lines (Unicode punctuation and symbols, CJK,
empty lines). Needs `pip install sacrebleu==2.6.0` (numpy 2.x).

  python3 scripts/gen/gen-score-vectors.py                  # regenerate all cases
  python3 scripts/gen/gen-score-vectors.py --out DIR --case NAME --refs R1 [R2] --systems S1 S2 ...
                                                        # a new case from your own files
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.significance import PairedTest

from synth_systems import perturb  # scripts/gen/synth_systems.py, beside this file

assert sacrebleu.__version__ == "2.6.0", f"need sacreBLEU 2.6.0, found {sacrebleu.__version__}"

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.environ.get("NMT_DATA", os.path.join(ROOT, "..", "shared", "data"))

# Metric configurations: sacreBLEU CLI flags and the matching API constructor.
CONFIGS = {
    "bleu": ([], lambda: BLEU()),
    "bleu-intl": (["--tokenize", "intl"], lambda: BLEU(tokenize="intl")),
    "bleu-char": (["--tokenize", "char"], lambda: BLEU(tokenize="char")),
    "bleu-zh": (["--tokenize", "zh"], lambda: BLEU(tokenize="zh")),
    "bleu-none-lc": (["--tokenize", "none", "--lowercase"], lambda: BLEU(tokenize="none", lowercase=True)),
    "chrf": ([], lambda: CHRF()),
    "chrf++": (["--chrf-word-order", "2"], lambda: CHRF(word_order=2)),
    "ter": ([], lambda: TER()),
    "ter-norm": (["--ter-normalized"], lambda: TER(normalized=True)),
    "ter-norm-asian-nopunct": (["--ter-normalized", "--ter-asian-support", "--ter-no-punct"],
                               lambda: TER(normalized=True, asian_support=True, no_punct=True)),
    "ter-case-nopunct": (["--ter-case-sensitive", "--ter-no-punct"],
                         lambda: TER(case_sensitive=True, no_punct=True)),
}


def read(path):
    with open(path, encoding="utf-8", newline="\n") as f:
        return [line.rstrip() for line in f]


def write(path, lines):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(line + "\n" for line in lines))


def run_cli(case_dir, refs, systems, run):
    """sacreBLEU's CLI on the case's files; returns stdout (stderr must be empty of errors)."""
    cmd = [sys.executable, "-m", "sacrebleu", *refs, "-i", *systems]
    cmd += ["-m", *run["metrics"]] + run.get("flags", [])
    env = dict(os.environ, NO_COLOR="1")
    env.pop("SACREBLEU_FORMAT", None)
    if "seed" in run:
        env["SACREBLEU_SEED"] = run["seed"]
    else:
        env.pop("SACREBLEU_SEED", None)
    p = subprocess.run(cmd, cwd=case_dir, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"sacrebleu failed on {case_dir} {run}: {p.stderr}")
    return p.stdout


def f32(x):
    return bool(isinstance(x, np.float32))


def api_numbers(refs_lines, systems_lines, config, n_boot, n_ar):
    make = CONFIGS[config][1]
    out = {}
    metric = make()
    first = systems_lines[0]
    out["corpus"] = [make().corpus_score(s, refs_lines).score for s in systems_lines]
    out["sentence"] = [metric.sentence_score(h, [r[i] for r in refs_lines]).score for i, h in enumerate(first)]
    os.environ.pop("SACREBLEU_SEED", None)
    try:
        s = make().corpus_score(first, refs_lines, n_bootstrap=n_boot)
        out["confidence"] = {"n": n_boot, "mean": float(s._mean), "mean_f32": f32(s._mean),
                             "ci": float(s._ci), "ci_f32": f32(s._ci)}
    except TypeError as e:  # statistics.mean on float and float32 scores mixed (empty references)
        out["confidence"] = {"n": n_boot, "error": str(e)}
    if len(systems_lines) > 1:
        named = [(f"s{i}", lines) for i, lines in enumerate(systems_lines)]
        for test, n in (("bs", n_boot), ("ar", n_ar)):
            _, scores = PairedTest(named, {"m": make()}, refs_lines, test_type=test, n_samples=n)()
            (key, results), = [(k, v) for k, v in scores.items() if k != "System"]
            out[f"paired_{test}"] = {"n": n, "results": [
                {"score": r.score, "p_value": r.p_value,
                 "mean": None if r.mean is None else float(r.mean), "mean_f32": f32(r.mean),
                 "ci": None if r.ci is None else float(r.ci), "ci_f32": f32(r.ci)} for r in results]}
    return out


def make_case(out_dir, name, refs, systems, runs, configs, n_boot=200, n_ar=300):
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir, exist_ok=True)
    ref_files = []
    for k, lines in enumerate(refs):
        ref_files.append(f"ref{k + 1}.txt")
        write(os.path.join(case_dir, ref_files[-1]), lines)
    sys_files = []
    for k, lines in enumerate(systems):
        sys_files.append(f"sys{k + 1}.txt")
        write(os.path.join(case_dir, sys_files[-1]), lines)
    refs_lines = [read(os.path.join(case_dir, f)) for f in ref_files]
    systems_lines = [read(os.path.join(case_dir, f)) for f in sys_files]
    expected = {"sacrebleu": sacrebleu.__version__, "numpy": np.__version__, "refs": ref_files,
                "systems": sys_files, "runs": [], "api": {}}
    for run in runs:
        use = sys_files[:run.get("n_systems", len(sys_files))]
        expected["runs"].append(dict(run, systems=use, stdout=run_cli(case_dir, ref_files, use, run)))
    for config in configs:
        expected["api"][config] = api_numbers(refs_lines, systems_lines, config, n_boot, n_ar)
    with open(os.path.join(case_dir, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{name}: {len(runs)} CLI runs, {len(configs)} API configurations")


UNICODE_REFS = [
    "« Bonjour », dit-il — c'est l'été ; 3,5 % des 1.000 élèves (environ) l'ont vu !",
    "Le prix : 12,50 € ou $13.99… n'est-ce pas ? Oui¡ ¿Sí?",
    "Un homme en t-shirt #42 joue au 1-2-3 soleil @ Paris & Lyon.",
    "",
    "Straße — ΣΊΣΥΦΟΣ ΣΙΣΥΦΟΣ İstanbul ǅemal ﬁn",
    "“Quoted” ‘text’ with em—dash and en–dash, plus ellipsis… and bullets • here.",
    "Math: 2+2=4, 5×3=15, 10÷2=5, √9=3, π≈3.14159, ∑ and ∞ ± ≤ ≥.",
    "Emoji 😀 and 👍🏽 and flags 🇫🇷 with hearts ❤️ and stars ★☆.",
    "  Leading and trailing spaces   with\u00a0NBSP\u202fand\u2009thin spaces  ",
    "我们今天去北京，看了长城。你好吗？",
    "日本語のテキスト、カタカナとひらがな。東京へ行きます！",
    "한국어 문장입니다. 안녕하세요?",
    "Mixed 中文 and English, 数字123和符号！（括号）【方括号】",
    "Tabs\tinside\tthe line and &amp; entities &lt;b&gt; &quot;q&quot;",
    "Numbers 1,000,000.50 and 3.14 and -7 and 1990-2000 and 5-year-old.",
    "Il n'y a pas d'apostrophe’s here, it's John's dog's bone.",
]


def unicode_systems():
    a, b = [], []
    for i, line in enumerate(UNICODE_REFS):
        words = line.split()
        a.append(" ".join(words[:-1]) if i % 3 == 0 else line.replace(",", "").replace("。", ""))
        b.append(" ".join(reversed(words)) if i % 2 else line.lower())
    return a, b


def default_cases(out_dir):
    ref_all = read(os.path.join(DATA, "multi30k", "test_2016_flickr.fr"))
    ref40 = ref_all[:40]
    sys_good = perturb(ref40, 1, drop=0.05, swap=0.05)
    sys_mid = perturb(ref40, 2, drop=0.1, shift=0.4, replace=0.05)
    sys_bad = perturb(ref40, 3, drop=0.2, swap=0.2, shift=0.6, replace=0.2, empty=0.05)
    all_metrics = ["bleu", "chrf", "ter"]
    make_case(out_dir, "m30k_three_systems", [ref40], [sys_good, sys_mid, sys_bad], [
        {"metrics": all_metrics, "flags": ["-f", "text"], "n_systems": 1},
        {"metrics": all_metrics, "flags": ["-f", "json"], "n_systems": 1},
        {"metrics": all_metrics, "flags": ["-f", "text", "--confidence", "-cin", "200", "-w", "3"], "n_systems": 1},
        {"metrics": all_metrics, "flags": ["-f", "json", "--confidence", "-cin", "300"], "n_systems": 1},
        {"metrics": all_metrics, "flags": ["-f", "text", "--confidence"], "n_systems": 1, "seed": "7"},
        {"metrics": all_metrics, "flags": ["-f", "text"]},
        {"metrics": all_metrics, "flags": ["-f", "json", "-w", "2"]},
        {"metrics": all_metrics, "flags": ["-f", "text", "--paired-bs", "--paired-bs-n", "200"]},
        {"metrics": ["ter", "bleu"], "flags": ["-f", "text", "--paired-ar", "--paired-ar-n", "300", "-w", "2"]},
        {"metrics": ["bleu"], "flags": ["-f", "json", "--paired-ar", "--paired-ar-n", "300"]},
        {"metrics": ["bleu", "chrf"], "flags": ["-f", "text", "--paired-bs"], "seed": "2024"},
        {"metrics": ["chrf"], "flags": ["-f", "text", "--chrf-word-order", "2", "--paired-bs", "-pbsn", "150"]},
        {"metrics": ["bleu", "chrf", "ter"], "flags": ["-f", "text", "--short", "--paired-bs", "-pbsn", "100"]},
        {"metrics": ["ter"], "flags": ["-f", "text", "--sentence-level"], "n_systems": 1},
        {"metrics": ["chrf"], "flags": ["-f", "text", "--sentence-level", "--chrf-word-order", "2", "-w", "4"],
         "n_systems": 1},
        {"metrics": ["bleu"], "flags": ["-f", "text", "--sentence-level", "--short"], "n_systems": 1},
        {"metrics": ["bleu", "chrf", "ter"], "flags": ["-f", "text", "--score-only"], "n_systems": 1},
    ], ["bleu", "chrf", "chrf++", "ter", "ter-norm", "bleu-intl", "bleu-char"])

    ref30 = ref_all[100:130]
    second_ref = perturb(ref30, 11, drop=0.1, swap=0.1, shift=0.3)
    make_case(out_dir, "m30k_two_references", [ref30, second_ref],
              [perturb(ref30, 12, drop=0.1, replace=0.1), perturb(ref30, 13, drop=0.15, shift=0.5, swap=0.1)], [
        {"metrics": ["bleu", "chrf", "ter"], "flags": ["-f", "text", "--confidence", "-cin", "250"], "n_systems": 1},
        {"metrics": ["bleu", "chrf", "ter"], "flags": ["-f", "text", "--paired-bs", "-pbsn", "250"]},
        {"metrics": ["ter", "chrf"], "flags": ["-f", "text", "--paired-ar", "-parn", "200"]},
        {"metrics": ["ter"], "flags": ["-f", "text", "--sentence-level", "-w", "3"], "n_systems": 1},
    ], ["bleu", "chrf", "ter", "ter-norm"])

    uni_a, uni_b = unicode_systems()
    make_case(out_dir, "unicode_cjk_punctuation", [UNICODE_REFS], [uni_a, uni_b], [
        {"metrics": ["bleu"], "flags": ["-f", "text", "--tokenize", "intl"], "n_systems": 1},
        {"metrics": ["bleu"], "flags": ["-f", "text", "--tokenize", "char", "--sentence-level"], "n_systems": 1},
        {"metrics": ["bleu"], "flags": ["-f", "text", "--tokenize", "zh", "--sentence-level"], "n_systems": 1},
        {"metrics": ["bleu"], "flags": ["-f", "json", "--tokenize", "intl", "-w", "3"]},
        {"metrics": ["ter"], "flags": ["-f", "text", "--ter-normalized", "--ter-asian-support", "--sentence-level"],
         "n_systems": 1},
        {"metrics": ["ter"], "flags": ["-f", "text", "--ter-normalized", "--ter-asian-support", "--ter-no-punct"]},
        {"metrics": ["ter"], "flags": ["-f", "text", "--ter-case-sensitive", "--ter-no-punct", "--sentence-level"],
         "n_systems": 1},
        {"metrics": ["bleu", "chrf", "ter"], "flags": ["-f", "text", "--paired-bs", "-pbsn", "100"]},
    ], ["bleu", "bleu-intl", "bleu-char", "bleu-zh", "bleu-none-lc", "chrf", "chrf++", "ter", "ter-norm",
        "ter-norm-asian-nopunct", "ter-case-nopunct"], n_boot=100, n_ar=100)

    empty_refs = ["a b c d", "", "le chat", "", "x y z"]
    make_case(out_dir, "empty_lines", [empty_refs], [["a b c", "", "", "un mot", "x y z"],
                                                     ["", "", "le chat noir", "", "z y x"]], [
        {"metrics": ["bleu", "chrf", "ter"], "flags": ["-f", "text"]},
        {"metrics": ["ter"], "flags": ["-f", "text", "--sentence-level"], "n_systems": 1},
        {"metrics": ["bleu", "ter"], "flags": ["-f", "text", "--paired-bs", "-pbsn", "60"]},
        {"metrics": ["bleu", "ter"], "flags": ["-f", "text", "--paired-ar", "-parn", "60"]},
    ], ["bleu", "chrf", "ter"], n_boot=60, n_ar=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "score-vectors"))
    ap.add_argument("--case", help="name of a new case built from --refs and --systems")
    ap.add_argument("--refs", nargs="+")
    ap.add_argument("--systems", nargs="+")
    ap.add_argument("--metrics", nargs="+", default=["bleu", "chrf", "ter"])
    args = ap.parse_args()
    if args.case:
        refs = [read(p) for p in args.refs]
        systems = [read(p) for p in args.systems]
        runs = [{"metrics": args.metrics, "flags": ["-f", "text"], "n_systems": 1},
                {"metrics": args.metrics, "flags": ["-f", "text", "--confidence", "-cin", "200"], "n_systems": 1}]
        if len(systems) > 1:
            runs += [{"metrics": args.metrics, "flags": ["-f", "text", "--paired-bs", "-pbsn", "200"]},
                     {"metrics": args.metrics, "flags": ["-f", "json", "--paired-ar", "-parn", "300"]}]
        make_case(args.out, args.case, refs, systems, runs,
                  [m for m in args.metrics if m in CONFIGS])
        return
    default_cases(args.out)


if __name__ == "__main__":
    main()
