#!/usr/bin/env bash
# A/B speed check of two nmt binaries (before and after a refactor) on the same models and
# input, measured alternately in one run so machine load hits both alike: translation
# (greedy and beam 5, batch 64, sentences/s) and training (tokens/s), median of ROUNDS.
#
#   scripts/bench/bench-ab.sh BEFORE_NMT AFTER_NMT MODEL_DIR...
#
# Knobs: ROUNDS (3), NMT_BENCH_THREADS (2), NMT_BENCH_LIMIT (sentences, 300), NMT_DATA.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 BEFORE_NMT AFTER_NMT MODEL_DIR..." >&2; exit 2; }
before="$1"; after="$2"; shift 2
root="$(cd "$(dirname "$0")/../.." && pwd)"
data="${NMT_DATA:-$root/../shared/data}/multi30k"
rounds="${ROUNDS:-3}"; T="${NMT_BENCH_THREADS:-2}"; limit="${NMT_BENCH_LIMIT:-300}"
src="$data/test_2016_flickr.en"
[ -r "$src" ] || { echo "$0: $src not found (set NMT_DATA)" >&2; exit 2; }
peak=$("$after" bench matmul --threads "$T")
core=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("blas_core", ""))' "$peak")
[[ -n "$core" && -z "${OPENBLAS_CORETYPE:-}" ]] && export OPENBLAS_CORETYPE="$core"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); OpenBLAS kernels: ${OPENBLAS_CORETYPE:-library default}; threads $T; load $(cut -d' ' -f1-3 /proc/loadavg)"
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
median() { python3 -c 'import sys,statistics; print("%.1f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
printf '%-22s %-18s %12s %12s %8s\n' model measure before after ratio
for model in "$@"; do
  name="$(basename "$model")"
  for beam in 1 5; do
    b=(); a=()
    for ((r = 0; r < rounds; r++)); do
      for which in before after; do
        bin="$before"; [ "$which" = after ] && bin="$after"
        out=$("$bin" bench translate -m "$model" --src "$src" --limit "$limit" --batch-size 64 --beam "$beam" --threads "$T" | tail -1)
        v=$(field "$out" sentences_per_s)
        if [ "$which" = before ]; then b+=("$v"); else a+=("$v"); fi
      done
    done
    mb=$(median "${b[@]}"); ma=$(median "${a[@]}")
    printf '%-22s %-18s %12s %12s %8s\n' "$name" "beam $beam sent/s" "$mb" "$ma" "$(python3 -c "print('%.3f' % ($ma / $mb))")"
  done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
