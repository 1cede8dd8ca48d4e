#!/usr/bin/env bash
# What OpenBLAS's kernel choice (OPENBLAS_CORETYPE) does to nmt on this CPU, Debian's LibTorch
# 1.13 build: the float32 matrix-product peak and transformer-small's training speed under each
# kernel set, and under nmt's own choice (the variable unset: nmt keeps OpenBLAS's choice unless
# that is its generic Prescott fallback, see lib/nmt/util/blas.cc). Alternating rounds, medians.
#
#   bash scripts/bench/bench-blas-kernels.sh
#
# Knobs: NMT_BINARY (build/nmt), NMT_BENCH_ROUNDS (2), NMT_BENCH_THREADS (2), NMT_BENCH_CORETYPES
# ("unset Prescott Haswell Zen SkylakeX"), NMT_BENCH_OUT (build/bench-blas), NMT_DATA.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NMT=${NMT_BINARY:-$ROOT/build/nmt}
DATA=${NMT_DATA:-$ROOT/../shared/data}
T=${NMT_BENCH_THREADS:-2}
ROUNDS=${NMT_BENCH_ROUNDS:-2}
read -r -a CORES <<< "${NMT_BENCH_CORETYPES:-unset Prescott Haswell Zen SkylakeX}"
OUT=${NMT_BENCH_OUT:-$ROOT/build/bench-blas}
die() { echo "bench-blas-kernels: $*" >&2; exit 2; }
[[ -x "$NMT" ]] || die "$NMT not found; build first"
[[ -f "$DATA/multi30k/train.en" ]] || die "Multi30k not found under $DATA (set NMT_DATA)"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "NMT_BENCH_ROUNDS must be a positive integer, not '$ROUNDS'"
mkdir -p "$OUT"
RES="$OUT/results.jsonl"
: > "$RES"
if [[ ! -f "$OUT/transformer-small/spm.model" ]]; then
  "$NMT" bench init --preset transformer-small --train "$DATA/multi30k/train" --out "$OUT/transformer-small" \
    --threads "$T" > /dev/null
fi
with_core() { if [[ "$1" == unset ]]; then env -u OPENBLAS_CORETYPE "${@:2}"; else OPENBLAS_CORETYPE="$1" "${@:2}"; fi; }
for round in $(seq 1 "$ROUNDS"); do
  for core in "${CORES[@]}"; do
    echo "[bench-blas-kernels $(date +%H:%M:%S)] round $round/$ROUNDS: $core" >&2
    m=$(with_core "$core" "$NMT" bench matmul --threads "$T")
    t=$(with_core "$core" "$NMT" bench train --preset transformer-small --train "$DATA/multi30k/train" \
      --spm "$OUT/transformer-small/spm.model" --threads "$T" --max-tokens 4096 --warmup 3 --steps 10)
    printf '{"core": "%s", "matmul": %s, "train": %s}\n' "$core" "$m" "$t" >> "$RES"
  done
done
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
isa=$(grep -o -w -E 'avx2|fma|avx512f|avx512_vnni|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ')
python3 - "$RES" "$cpu" "$isa" "$T" "$(git -C "$ROOT" rev-parse --short HEAD)" <<'PYEOF' | tee "$OUT/table.md"
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    rows.setdefault(j["core"], []).append(j)
print(f"CPU: {sys.argv[2]} ({sys.argv[3].strip()}), {sys.argv[4]} threads, commit {sys.argv[5]}, medians of {len(next(iter(rows.values())))} alternating rounds.\n")
print("| OPENBLAS_CORETYPE | kernels in use | matmul peak GFLOP/s | transformer-small training tokens/s |")
print("|---|---|---:|---:|")
for core, js in rows.items():
    used = js[0]["matmul"].get("blas_core", "?")
    peak = statistics.median(j["matmul"]["peak_gflops"] for j in js)
    tps = statistics.median(j["train"]["tokens_per_s"] for j in js)
    print(f"| {'unset (nmt chooses)' if core == 'unset' else core} | {used} | {peak:.1f} | {tps:,.0f} |")
PYEOF
