#!/usr/bin/env bash
# Where decoding's time goes: `perf record` over `nmt bench translate` on test_2016_flickr, the
# samples summed by kind (scripts/bench/perf_kinds.py: the BLAS's matrix products, nmt's int8 and fused
# kernels, LibTorch's other kernels, threads waiting, the allocator) into one table, then the
# symbols that took the most samples.
#
#   bash scripts/bench/profile-translate.sh MODEL_DIR [NMT_BINARY]
#
# Needs `perf` (Debian: linux-perf). Knobs: NMT_DATA, NMT_BENCH_THREADS (1), NMT_PROFILE_BATCH
# (64), NMT_PROFILE_BEAM (1), NMT_PROFILE_TOP (15 symbols), NMT_PROFILE_OUT (build/profile-translate).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODEL=${1:-}
NMT=${2:-${NMT_BINARY:-$ROOT/build/nmt}}
DATA=${NMT_DATA:-$ROOT/../shared/data}
T=${NMT_BENCH_THREADS:-1}
BATCH=${NMT_PROFILE_BATCH:-64}
BEAM=${NMT_PROFILE_BEAM:-1}
TOP=${NMT_PROFILE_TOP:-15}
OUT=${NMT_PROFILE_OUT:-$ROOT/build/profile-translate}
SRC="$DATA/multi30k/test_2016_flickr.en"
die() { echo "profile-translate: $*" >&2; exit 2; }
[[ -n "$MODEL" ]] || die "usage: profile-translate.sh MODEL_DIR [NMT_BINARY]"
[[ -f "$MODEL/model.pt" ]] || die "$MODEL/model.pt not found"
command -v perf > /dev/null || die "perf not found (Debian: apt-get install linux-perf)"
[[ -x "$NMT" ]] || die "$NMT not found; build first"
[[ -f "$SRC" ]] || die "$SRC not found (set NMT_DATA)"
for v in T BATCH BEAM TOP; do [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer, not '${!v}'"; done
mkdir -p "$OUT"
perf record -F 999 -o "$OUT/profile.perf" -- "$NMT" bench translate -m "$MODEL" --src "$SRC" --threads "$T" \
  --batch-size "$BATCH" --beam "$BEAM" --alpha 0 > "$OUT/profile.json" 2> "$OUT/profile.perf.log" ||
  die "perf record failed: $(tail -n 3 "$OUT/profile.perf.log")"
echo "nmt bench translate: $(cat "$OUT/profile.json")"
echo
perf report -i "$OUT/profile.perf" --no-children --sort dso,sym --stdio -g none 2> /dev/null > "$OUT/report.txt"
python3 "$ROOT/scripts/bench/perf_kinds.py" < "$OUT/report.txt"
echo
echo "The $TOP symbols with the most samples:"
grep -E '^ +[0-9.]+%' "$OUT/report.txt" | head -n "$TOP"
