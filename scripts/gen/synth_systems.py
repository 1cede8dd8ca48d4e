#!/usr/bin/env python3
"""Synthetic systems for the scorers: a reference's lines with words dropped, replaced by others of
the reference, swapped with their neighbour and moved as blocks, seeded, so that BLEU, chrF, TER
and the significance tests have systems of graded quality without a model. Written once for
scripts/bench/bench-score.sh, scripts/bench/bench-python-score.py (`systems`, three of them)
and scripts/gen/gen-score-vectors.py (`perturb`, the cases of tests/score-vectors). Standard
library only.

    python3 scripts/gen/synth_systems.py REF OUT_DIR     # OUT_DIR/sys1.txt, sys2.txt, sys3.txt
"""
import random
import sys


def perturb(lines, seed, drop=0.0, swap=0.0, shift=0.0, replace=0.0, empty=0.0):
    """Deterministic word-level noise: drops, adjacent swaps, block shifts, replacements.

    `empty` is the share of lines made empty. None draws nothing for it: each line then takes one
    random number fewer, which is how the benchmarks' systems (`systems`) were drawn; 0.0 (the
    default) draws and never empties, which is how tests/score-vectors' were."""
    rng = random.Random(seed)
    vocab = sorted({w for line in lines for w in line.split()})
    out = []
    for line in lines:
        w = line.split()
        if empty is not None and rng.random() < empty:
            out.append("")
            continue
        w = [x for x in w if rng.random() >= drop]
        w = [rng.choice(vocab) if rng.random() < replace else x for x in w]
        for i in range(len(w) - 1):
            if rng.random() < swap:
                w[i], w[i + 1] = w[i + 1], w[i]
        if len(w) > 4 and rng.random() < shift:
            k = rng.randrange(1, 4)
            s = rng.randrange(len(w) - k)
            block = w[s:s + k]
            del w[s:s + k]
            t = rng.randrange(len(w) + 1)
            w[t:t] = block
        out.append(" ".join(w))
    return out


def systems(ref):
    """The benchmarks' three systems of REF's lines, from the closest to the farthest."""
    return [perturb(ref, 1, drop=0.05, swap=0.05, shift=0.3, replace=0.05, empty=None),
            perturb(ref, 2, drop=0.10, swap=0.10, shift=0.5, replace=0.10, empty=None),
            perturb(ref, 3, drop=0.15, swap=0.15, shift=0.7, replace=0.15, empty=None)]


def main(argv):
    if len(argv) != 2:
        print("usage: synth_systems.py REF OUT_DIR", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        ref = f.read().split("\n")[:-1]
    for n, lines in enumerate(systems(ref), 1):
        with open(f"{argv[1]}/sys{n}.txt", "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
