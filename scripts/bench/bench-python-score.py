#!/usr/bin/env python3
"""nmt_score (nmt's Python module) against sacreBLEU 2.6.0's Python API on the same inputs, in one
run, alternating the two so that both see the same machine load:

  * corpus BLEU + chrF (corpus_bleu, corpus_chrf) on 3,000 sentences;
  * sentence BLEU over 10,000 sentences (BLEU(effective_order=True).sentence_score per line, and
    the sacrebleu.sentence_bleu function, which builds its metric at every call);
  * paired bootstrap resampling (PairedTest, 1,000 resamples), 3 systems of 3,000 sentences,
    BLEU + chrF.

References: the first lines of Multi30k's train.fr ($NMT_DATA, default ../shared/data); systems:
deterministic perturbations of them (dropped, swapped, shifted, replaced words;
scripts/gen/synth_systems.py). Each row runs
--repeat times (default 5); the table gives the medians of wall time and of the process's CPU
time, and the ratio of the medians. The two libraries' scores are checked equal first.

  ~/.cache/nmt/venv/bin/python scripts/bench/bench-python-score.py   (needs nmt_score and sacrebleu==2.6.0)
"""
import argparse
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

import sacrebleu
import nmt_score
from sacrebleu.significance import PairedTest as SbPairedTest
from nmt_score.significance import PairedTest as NmtPairedTest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "gen"))
from synth_systems import systems  # noqa: E402  (scripts/gen/)


def systems_of(ref, n):
    return systems(ref)[:n]


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", default=os.environ.get("NMT_DATA", str(pathlib.Path(__file__).resolve().parents[3] / "shared" / "data")))
    args = ap.parse_args()
    with open(pathlib.Path(args.data) / "multi30k" / "train.fr", encoding="utf-8") as f:
        train = [line.rstrip() for line in f]
    ref3k, ref10k = train[:3000], train[:10000]
    sys3k = systems_of(ref3k, 3)
    hyp10k = systems_of(ref10k, 1)[0]
    os.environ.pop("SACREBLEU_SEED", None)

    def corpus(lib):
        return lambda: (lib.corpus_bleu(sys3k[0], [ref3k]).score, lib.corpus_chrf(sys3k[0], [ref3k]).score)

    def sentence_method(lib):
        def run():
            bleu = lib.BLEU(effective_order=True)
            return [bleu.sentence_score(h, [r]).score for h, r in zip(hyp10k, ref10k)]
        return run

    def sentence_function(lib):
        return lambda: [lib.sentence_bleu(h, [r]).score for h, r in zip(hyp10k, ref10k)]

    def paired(lib, test):
        def run():
            named = [(f"sys{i + 1}", s) for i, s in enumerate(sys3k)]
            metrics = {"BLEU": lib.BLEU(references=[ref3k]), "chrF": lib.CHRF(references=[ref3k])}
            _, scores = test(named, metrics, None, test_type="bs", n_samples=1000)()
            return [(r.score, r.p_value, r.mean, r.ci) for k, v in scores.items() if k != "System" for r in v]
        return run

    rows = [
        ("corpus BLEU + chrF, 3,000 sentences", corpus(sacrebleu), corpus(nmt_score)),
        ("sentence BLEU, 10,000 sentences (BLEU().sentence_score)", sentence_method(sacrebleu), sentence_method(nmt_score)),
        ("sentence BLEU, 10,000 sentences (sentence_bleu())", sentence_function(sacrebleu), sentence_function(nmt_score)),
        ("paired bootstrap, 1,000 resamples, 3 systems x 3,000, BLEU + chrF",
         paired(sacrebleu, SbPairedTest), paired(nmt_score, NmtPairedTest)),
    ]
    commit = subprocess.run(["git", "-C", str(pathlib.Path(__file__).parent), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}, sacrebleu {sacrebleu.__version__}, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    print("| what | sacreBLEU wall (CPU) | nmt_score wall (CPU) | speed-up wall (CPU) |")
    print("|---|---:|---:|---:|")
    for name, sb_fn, nmt_fn in rows:
        sb, nm = [], []
        for _ in range(args.repeat):
            sb.append(timed(sb_fn))
            nm.append(timed(nmt_fn))
        assert sb[0][2] == nm[0][2], f"{name}: the two libraries disagree"
        med = lambda runs, i: statistics.median(r[i] for r in runs)
        print(f"| {name} | {med(sb, 0) * 1e3:.0f} ms ({med(sb, 1) * 1e3:.0f} ms) | "
              f"{med(nm, 0) * 1e3:.1f} ms ({med(nm, 1) * 1e3:.1f} ms) | "
              f"{med(sb, 0) / med(nm, 0):.0f}x ({med(sb, 1) / med(nm, 1):.0f}x) |", flush=True)
    print(f"# load average {os.getloadavg()[0]:.1f} at the end; median of {args.repeat} runs each, alternating")


if __name__ == "__main__":
    main()
