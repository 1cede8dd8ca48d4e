#!/usr/bin/env bash
# Where a training update's time goes: `perf record` over `nmt bench train`, the samples summed
# by kind (the BLAS's matrix products and their packing, nmt's fused kernels, LibTorch's other
# kernels, threads waiting, the allocator and page faults, the rest) into one table.
#
#   bash scripts/bench/profile-train.sh transformer-small [NMT_BINARY]
#
# Needs `perf` (Debian: linux-perf) and a subword model from `nmt bench init --preset MODEL
# --train DATA/train --out DIR` (NMT_PROFILE_SPM; default: one is made in NMT_PROFILE_OUT).
# Knobs: NMT_DATA, NMT_BENCH_THREADS (2), NMT_PROFILE_OUT (build/profile-train),
# NMT_PROFILE_FLAGS (more flags for nmt bench train, e.g. --unfused: the profile of nmt's plain
# path; its files are then named MODEL_--unfused.*).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODEL=${1:-}
NMT=${2:-${NMT_BINARY:-$ROOT/build/nmt}}
DATA=${NMT_DATA:-$ROOT/../shared/data}
T=${NMT_BENCH_THREADS:-2}
OUT=${NMT_PROFILE_OUT:-$ROOT/build/profile-train}
read -r -a flags <<< "${NMT_PROFILE_FLAGS:-}"
die() { echo "profile-train: $*" >&2; exit 2; }
case "$MODEL" in
  transformer-small) shape=(--max-tokens 4096 --warmup 3 --steps 10) ;;
  transformer-base) shape=(--max-tokens 1500 --warmup 1 --steps 3) ;;
  gru-small) shape=(--max-tokens 2500 --warmup 3 --steps 10) ;;
  *) die "usage: profile-train.sh transformer-small|transformer-base|gru-small [NMT_BINARY]" ;;
esac
command -v perf > /dev/null || die "perf not found (Debian: apt-get install linux-perf)"
[[ -x "$NMT" ]] || die "$NMT not found; build first"
[[ -f "$DATA/multi30k/train.en" ]] || die "Multi30k not found under $DATA (set NMT_DATA)"
mkdir -p "$OUT"
spm=${NMT_PROFILE_SPM:-$OUT/$MODEL/spm.model}
if [[ ! -f "$spm" ]]; then
  rm -rf "$OUT/$MODEL"
  "$NMT" bench init --preset "$MODEL" --train "$DATA/multi30k/train" --out "$OUT/$MODEL" --threads "$T" > /dev/null
fi
run=$(printf '%s' "$MODEL${flags[*]:+_${flags[*]}}" | tr -c 'A-Za-z0-9_.-' '_')
perf record -F 999 -o "$OUT/$run.perf" -- "$NMT" bench train --preset "$MODEL" --train "$DATA/multi30k/train" \
  --spm "$spm" --threads "$T" "${shape[@]}" "${flags[@]}" > "$OUT/$run.json" 2> "$OUT/$run.perf.log" ||
  die "perf record failed: $(tail -n 3 "$OUT/$run.perf.log")"
echo "profile-train: $run: $(cat "$OUT/$run.json")" >&2
perf report -i "$OUT/$run.perf" --no-children --sort dso,sym --stdio -g none 2> /dev/null |
  python3 "$ROOT/scripts/bench/perf_kinds.py"
