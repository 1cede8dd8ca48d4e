#!/usr/bin/env python3
"""Writes N synthetic English-French pairs as TSV to stdout, seeded: Multi30k's and Tatoeba's
pairs recombined (one pair, or two joined) with a number sometimes put in front of both sides,
so a corpus of any size has natural-looking, length-varied, mostly unique pairs. For benchmarks
of corpora larger than memory (scripts/bench/bench-scale.sh); nothing it writes is stored in the
repository.

  python3 scripts/gen/synth_corpus.py N [SEED] [DATA_DIR] > corpus.tsv
"""
import random
import sys


def load_pairs(data_dir):
    pairs = []
    with open(f"{data_dir}/multi30k/train.en", encoding="utf-8") as en, \
            open(f"{data_dir}/multi30k/train.fr", encoding="utf-8") as fr:
        for a, b in zip(en, fr):
            pairs.append((a.strip(), b.strip()))
    with open(f"{data_dir}/tatoeba-fra-eng/fra.txt", encoding="utf-8") as tsv:
        for line in tsv:
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 2:
                pairs.append((cols[0].strip(), cols[1].strip()))
    return [p for p in pairs if p[0] and p[1]]


def main():
    n = int(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    data_dir = sys.argv[3] if len(sys.argv) > 3 else "../shared/data"
    pairs = load_pairs(data_dir)
    rng = random.Random(seed)
    m = len(pairs)
    out = sys.stdout
    buf = []
    for k in range(n):
        a = pairs[rng.randrange(m)]
        r = rng.random()
        if r < 0.5:
            src, tgt = a
        else:
            b = pairs[rng.randrange(m)]
            src, tgt = a[0] + " " + b[0], a[1] + " " + b[1]
        if r > 0.8:
            num = str(rng.randrange(1000))
            src, tgt = num + ". " + src, num + ". " + tgt
        buf.append(src + "\t" + tgt + "\n")
        if len(buf) == 65536:
            out.write("".join(buf))
            buf.clear()
    out.write("".join(buf))


if __name__ == "__main__":
    main()
