#!/usr/bin/env bash
# Times `nmt bleu` (and `nmt-score`, the same code in a binary without LibTorch, whose libraries
# take ~0.4 s to load) against the sacreBLEU 2.6.0 command line on the same inputs:
#   * paired bootstrap resampling: 1,000 resamples, 3 systems, 1,000 sentences (BLEU + chrF,
#     then BLEU + chrF + TER);
#   * TER of one system on test_2016_flickr;
#   * --confidence (1,000 resamples) of one system, BLEU + chrF.
# The references are Multi30k's test_2016_flickr.fr; the systems are deterministic
# perturbations of it (dropped, swapped, shifted and replaced words). Each command runs
# NMT_BENCH_REPEAT times (default 3) and the fastest wall time is kept; the outputs of the two
# programs are compared byte for byte.
#
#   bash scripts/bench-score.sh [build/nmt [build/nmt-score]]   (needs: pip install sacrebleu==2.6.0)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
nmt="${1:-$root/build/nmt}"
nmt_score="${2:-$(dirname "$nmt")/nmt-score}"
data="${NMT_DATA:-$root/../shared/data}"
ref="$data/multi30k/test_2016_flickr.fr"
repeat="${NMT_BENCH_REPEAT:-3}"
[[ -x "$nmt" ]] || { echo "bench-score: no nmt binary at $nmt (build the nmt_cli target)" >&2; exit 1; }
[[ -x "$nmt_score" ]] || { echo "bench-score: no nmt-score at $nmt_score (build the nmt_score target)" >&2; exit 1; }
[[ -f "$ref" ]] || { echo "bench-score: no reference at $ref (set NMT_DATA)" >&2; exit 1; }
python3 -c 'import sacrebleu, sys; sys.exit(sacrebleu.__version__ != "2.6.0")' ||
  { echo "bench-score: needs sacreBLEU 2.6.0 (pip install sacrebleu==2.6.0)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$ref" "$work/ref.txt"
python3 - "$work" <<'EOF'
import random, sys
work = sys.argv[1]
ref = open(f"{work}/ref.txt", encoding="utf-8").read().split("\n")[:-1]
vocab = sorted({w for l in ref for w in l.split()})
def system(seed, drop, swap, shift, replace):
    rng = random.Random(seed)
    out = []
    for line in ref:
        w = [x for x in line.split() if rng.random() >= drop]
        w = [rng.choice(vocab) if rng.random() < replace else x for x in w]
        for i in range(len(w) - 1):
            if rng.random() < swap:
                w[i], w[i + 1] = w[i + 1], w[i]
        if len(w) > 4 and rng.random() < shift:
            k = rng.randrange(1, 4); s = rng.randrange(len(w) - k)
            block = w[s:s + k]; del w[s:s + k]; t = rng.randrange(len(w) + 1); w[t:t] = block
        out.append(" ".join(w))
    open(f"{work}/sys{seed}.txt", "w", encoding="utf-8").write("\n".join(out) + "\n")
system(1, 0.05, 0.05, 0.3, 0.05)
system(2, 0.10, 0.10, 0.5, 0.10)
system(3, 0.15, 0.15, 0.7, 0.15)
EOF

# The fastest of $repeat runs, in seconds; the output of the last run goes to $2.
best_time() {
  local out="$1"; shift
  local best=""
  for _ in $(seq "$repeat"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" > "$out" 2>/dev/null
    t1=$(date +%s.%N)
    best=$(python3 -c "t=$t1-$t0; b='$best'; print(f'{min(t, float(b)) if b else t:.3f}')")
  done
  echo "$best"
}

cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "CPU: $cpu ($(nproc) cores), sacreBLEU 2.6.0 (Python $(python3 -c 'import platform; print(platform.python_version())'), numpy $(python3 -c 'import numpy; print(numpy.__version__)')), best of $repeat runs"
echo
echo "| task | sacreBLEU 2.6.0 | nmt bleu | speed-up | nmt-score | speed-up | same output |"
echo "|---|---|---|---|---|---|---|"
cd "$work"
export NO_COLOR=1
unset SACREBLEU_SEED SACREBLEU_FORMAT
row() {
  local task="$1"; shift
  local s n f
  s=$(best_time sacre.out python3 -m sacrebleu "$@")
  n=$(best_time nmt.out "$nmt" bleu "$@")
  f=$(best_time score.out "$nmt_score" bleu "$@")
  local same=no
  cmp -s sacre.out nmt.out && cmp -s sacre.out score.out && same=yes
  echo "| $task | ${s} s | ${n} s | $(python3 -c "print(f'{$s/$n:.1f}x')") | ${f} s |" \
       "$(python3 -c "print(f'{$s/max($f, 0.001):.0f}x')") | $same |"
}
row "paired bootstrap, 1,000 resamples, 3 systems x 1,000 sentences, BLEU + chrF" \
  ref.txt -i sys1.txt sys2.txt sys3.txt -m bleu chrf --paired-bs -f text
row "paired bootstrap, same, BLEU + chrF + TER" \
  ref.txt -i sys1.txt sys2.txt sys3.txt -m bleu chrf ter --paired-bs -f text
row "TER, one system, test_2016_flickr (1,000 sentences)" ref.txt -i sys3.txt -m ter -f text
row "--confidence, 1,000 resamples, BLEU + chrF" ref.txt -i sys2.txt -m bleu chrf --confidence -f text
