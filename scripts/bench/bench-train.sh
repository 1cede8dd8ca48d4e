#!/usr/bin/env bash
# Training speed: nmt (its fused kernels on, and off with --unfused) against eager PyTorch of the
# same LibTorch (scripts/reference/nmt_reference.py: same model, weights, batches and threads),
# for transformer-small, transformer-base and gru-small, measured alternately (each round runs
# every row once) and printed as one table of medians, with the losses after the timed steps
# (the same batches: they must agree to 1e-4) and each row's share of the machine's measured
# float32 matrix-product peak.
#
#   bash scripts/bench/bench-train.sh                        # Debian's LibTorch 1.13 (build/nmt)
#   NMT_LIBTORCH=wheel bash scripts/bench/bench-train.sh     # the wheel's LibTorch 2.x (build-wheel/nmt)
#
# Prerequisites: `NMT_LIBTORCH=... NMT_SETUP_BENCH=1 scripts/setup.sh` and a build.
# Knobs: NMT_BENCH_ROUNDS (3), NMT_BENCH_THREADS (2), NMT_BENCH_MODELS ("transformer-small
# transformer-base gru-small"), NMT_BENCH_OUT (BUILD/bench-train), NMT_DATA, NMT_BINARY, NMT_PYTHON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/scripts/bench/bench-libtorch.bash"  # NMT, PY, BUILD
REF="$ROOT/scripts/reference/nmt_reference.py"
DATA=${NMT_DATA:-$ROOT/../shared/data}
T=${NMT_BENCH_THREADS:-2}
ROUNDS=${NMT_BENCH_ROUNDS:-3}
read -r -a MODELS <<< "${NMT_BENCH_MODELS:-transformer-small transformer-base gru-small}"
OUT=${NMT_BENCH_OUT:-$BUILD/bench-train}
TRAIN="$DATA/multi30k/train"

die() { echo "bench-train: $*" >&2; exit 2; }
log() { printf '[bench-train %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
[[ -x "$NMT" ]] || die "$NMT not found; build first"
"$PY" -c 'import torch' 2>/dev/null || die "$PY cannot import torch; run NMT_LIBTORCH=$LIBTORCH NMT_SETUP_BENCH=1 scripts/setup.sh"
[[ -f "$TRAIN.en" ]] || die "Multi30k not found under $DATA (set NMT_DATA)"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "NMT_BENCH_ROUNDS must be a positive integer, not '$ROUNDS'"
for m in "${MODELS[@]}"; do
  case "$m" in transformer-small|transformer-base|gru-small) ;; *) die "unknown model '$m' in NMT_BENCH_MODELS" ;; esac
done
mkdir -p "$OUT"
RES="$OUT/results.jsonl"
: > "$RES"
record() { # record KEY ROUND JSON: a run that printed no JSON object stops the benchmark
  [[ "$3" == "{"* ]] || die "$1 (round $2) failed; its output: ${3:-nothing}"
  printf '{"key": "%s", "round": %s, "result": %s}\n' "$1" "$2" "$3" >> "$RES"
}

peak=$("$NMT" bench matmul --threads "$T") || die "nmt bench matmul failed"
record peak 0 "$peak"
core=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1]).get("blas_core", ""))' "$peak")
[[ -n "$core" && -z "${OPENBLAS_CORETYPE:-}" ]] && export OPENBLAS_CORETYPE="$core"
log "matmul peak measured; OpenBLAS kernels: ${OPENBLAS_CORETYPE:-library default}"

# name: max_tokens warmup steps (transformer-base: fewer, smaller batches: 3 s an update here)
declare -A SHAPE=([transformer-small]="4096 3 10" [transformer-base]="1500 1 3" [gru-small]="2500 3 10")
for name in "${MODELS[@]}"; do
  read -r max_tokens warmup steps <<< "${SHAPE[$name]}"
  log "$name: subword model and batches"
  rm -rf "$OUT/$name"
  "$NMT" bench init --preset "$name" --train "$TRAIN" --out "$OUT/$name" --threads "$T" > /dev/null
done

for round in $(seq 1 "$ROUNDS"); do
  for name in "${MODELS[@]}"; do
    read -r max_tokens warmup steps <<< "${SHAPE[$name]}"
    args=(--preset "$name" --train "$TRAIN" --spm "$OUT/$name/spm.model" --threads "$T" --max-tokens "$max_tokens"
          --warmup "$warmup" --steps "$steps")
    log "round $round/$ROUNDS: $name, nmt"
    result=$("$NMT" bench train "${args[@]}" --dump-batches "$OUT/$name.batches.jsonl" \
      --dump-config "$OUT/$name.config.json") || die "$name: nmt bench train failed"
    record "$name/nmt" "$round" "$result"
    log "round $round/$ROUNDS: $name, nmt --unfused"
    result=$("$NMT" bench train "${args[@]}" --unfused) || die "$name: nmt bench train --unfused failed"
    record "$name/unfused" "$round" "$result"
    log "round $round/$ROUNDS: $name, PyTorch eager"
    # The reference's best setting measured here: T intra-op threads, OpenBLAS 1.
    result=$(OPENBLAS_NUM_THREADS=1 "$PY" "$REF" train --config "$OUT/$name.config.json" \
      --batches "$OUT/$name.batches.jsonl" --warmup "$warmup" --steps "$steps" --threads "$T" | tail -n 1) ||
      die "$name: the PyTorch reference failed"
    record "$name/torch" "$round" "$result"
  done
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
isa=$(grep -o -w -E 'avx2|fma|avx512f|avx512_vnni|avx_vnni|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')
versions="nmt: $("$NMT" --version); reference: PyTorch $("$PY" -c 'import torch; print(torch.__version__)')"
"$PY" - "$RES" "$T" "$cpu" "$isa" "$versions" "$(git -C "$ROOT" rev-parse --short HEAD)" <<'PYEOF' | tee "$OUT/table.md"
import json, statistics, sys
res = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    res.setdefault(j["key"], []).append(j["result"])
threads, cpu, isa, versions, commit = sys.argv[2:7]
peak = res["peak"][0]
blas = peak.get("blas_core") or "LibTorch's own BLAS (MKL in the PyTorch wheel)"
med = lambda rows, k: statistics.median(r[k] for r in rows)
print(f"CPU: {cpu} ({isa.strip()}). {versions}. Commit {commit}, {threads} threads, "
      f"{len(res[next(k for k in res if k != 'peak')])} alternating rounds, medians.")
print(f"Matmul peak: {peak['peak_gflops']:.1f} GFLOP/s (float32, best of 256..2048); BLAS kernels: {blas}.\n")
print("| model | batch | nmt tokens/s | nmt --unfused | PyTorch eager | nmt / PyTorch | fused kernels' gain | "
      "nmt's share of matmul peak | loss after the steps: nmt / --unfused / PyTorch | peak RSS MB: nmt / PyTorch |")
print("|---|---|---:|---:|---:|---:|---:|---:|---|---|")
for name in ["transformer-small", "transformer-base", "gru-small"]:
    if f"{name}/nmt" not in res:
        continue
    n, u, p = res[f"{name}/nmt"], res[f"{name}/unfused"], res[f"{name}/torch"]
    tn, tu, tp = med(n, "tokens_per_s"), med(u, "tokens_per_s"), med(p, "tokens_per_s")
    share = 100 * med(n, "gflops") / peak["peak_gflops"]
    print(f"| {name} | {n[0]['steps']} × {n[0]['max_tokens']} tokens | {tn:,.0f} | {tu:,.0f} | {tp:,.0f} | "
          f"**{tn / tp:.2f}×** | {tn / tu:.2f}× | {share:.0f} % | {n[0]['final_loss']:.6f} / {u[0]['final_loss']:.6f} / "
          f"{p[0]['final_loss']:.6f} | {med(n, 'peak_rss_mb'):,.0f} / {med(p, 'peak_rss_mb'):,.0f} |")
print()
print("Per round, nmt / PyTorch: " + "; ".join(
    f"{name} " + ", ".join(f"{a['tokens_per_s'] / b['tokens_per_s']:.2f}" for a, b in zip(res[f'{name}/nmt'], res[f'{name}/torch']))
    for name in ["transformer-small", "transformer-base", "gru-small"] if f"{name}/nmt" in res))
PYEOF
log "results in $OUT (results.jsonl, table.md)"
