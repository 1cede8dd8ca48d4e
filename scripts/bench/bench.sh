#!/usr/bin/env bash
# Side-by-side speed benchmark: nmt against our PyTorch reference (scripts/reference/
# nmt_reference.py: same architectures, same weights, same batches, same threads), printing
# one table. Runs in about 10 minutes on 2 cores.
#
# NMT_LIBTORCH picks the pair, each on one LibTorch:
#   debian (default)  build/nmt on Debian's LibTorch 1.13 against Debian's python3-torch 1.13
#   wheel             build-wheel/nmt on the pinned wheel's LibTorch 2.x against the Python side
#                     of the same wheel (PYTHONPATH=scripts/torch-home.sh's folder)
# Prerequisites: `NMT_LIBTORCH=... NMT_SETUP_BENCH=1 scripts/setup.sh` and a build
# (`NMT_LIBTORCH=... scripts/test.sh` does both).
#
# Trained model directories make the translation rows realistic (output lengths of a real
# model); without them freshly initialised models are used, which decode to the length limit:
#   NMT_BENCH_SMALL=runs/tsmall NMT_BENCH_GRU=runs/gru NMT_BENCH_BASE=... scripts/bench/bench.sh
# With NMT_BENCH_SMALL given, scripts/bench/bench-ct2.sh follows (nmt against CTranslate2 on that model,
# its own table, ~10 more minutes with NMT_BENCH_ROUNDS=3; NMT_BENCH_CT2=0 leaves it out).
# NMT_BENCH_TRAIN_ONLY=1: only the training rows of transformer-small and gru-small (~3 minutes; run it
# twice or more for the spread).
# Other knobs: NMT_BENCH_ALPHA (beam search's length-penalty α, 0.6), NMT_BENCH_THREADS (2), NMT_BENCH_OUT (build/bench), NMT_DATA, NMT_BINARY, NMT_PYTHON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/scripts/bench/bench-libtorch.bash"  # NMT, PY, BUILD
REF="$ROOT/scripts/reference/nmt_reference.py"
DATA=${NMT_DATA:-$ROOT/../shared/data}
T=${NMT_BENCH_THREADS:-2}
ALPHA=${NMT_BENCH_ALPHA:-0.6}
OUT=${NMT_BENCH_OUT:-$BUILD/bench}
TRAIN="$DATA/multi30k/train"
TEST="$DATA/multi30k/test_2016_flickr.en"

[[ -x "$NMT" ]] || { echo "bench: $NMT not found; build first (scripts/test.sh)" >&2; exit 2; }
"$PY" -c 'import torch' 2>/dev/null || { echo "bench: $PY cannot import torch; run NMT_SETUP_BENCH=1 scripts/setup.sh" >&2; exit 2; }
[[ -f "$TRAIN.en" && -f "$TEST" ]] || { echo "bench: Multi30k not found under $DATA (set NMT_DATA)" >&2; exit 2; }
mkdir -p "$OUT"
RES="$OUT/results.jsonl"
: > "$RES"

# nmt gives OpenBLAS the threads and LibTorch's intra-op pool 1 (see set_threads); the
# reference gets PyTorch's best setting measured here: T intra-op threads, OpenBLAS 1.
ref() { OPENBLAS_NUM_THREADS=${NMT_BENCH_REF_BLAS_THREADS:-1} "$PY" "$REF" "$@" | tail -n 1; }
record() { # record KEY JSON
  printf '{"key": "%s", "result": %s}\n' "$1" "$2" >> "$RES"
}
log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

log "matmul peak ($T threads)"
peak=$("$NMT" bench matmul --threads "$T")
record peak "$peak"
# nmt switches OpenBLAS from its generic fallback to the CPU's own kernels (nmt/util/blas.cc);
# the reference gets the same kernels, so the comparison is about everything but the BLAS.
core=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1]).get("blas_core", ""))' "$peak")
[[ -n "$core" && -z "${OPENBLAS_CORETYPE:-}" ]] && export OPENBLAS_CORETYPE="$core"
log "OpenBLAS kernels: ${OPENBLAS_CORETYPE:-library default}"

# name preset max_tokens warmup steps trained-dir
models=(
  "transformer-small transformer-small 4096 3 10 ${NMT_BENCH_SMALL:-}"
  "transformer-base transformer-base 1500 1 3 ${NMT_BENCH_BASE:-}"
  "gru-small gru-small 2500 3 10 ${NMT_BENCH_GRU:-}"
)
TRAIN_ONLY=${NMT_BENCH_TRAIN_ONLY:-0}
for spec in "${models[@]}"; do
  read -r name preset max_tokens warmup steps trained <<< "$spec"
  [[ $TRAIN_ONLY == 1 && $name == transformer-base ]] && continue
  dir="$OUT/$name"
  if [[ -n "$trained" ]]; then
    dir="$trained"
  else
    log "$name: initialising a model (no trained directory given)"
    rm -rf "$dir"
    "$NMT" bench init --preset "$preset" --train "$TRAIN" --out "$dir" --threads "$T"
  fi
  spm="$dir/spm.model"
  log "$name: training, nmt"
  record "$name/train/nmt" "$("$NMT" bench train --preset "$preset" --train "$TRAIN" --spm "$spm" --threads "$T" \
    --max-tokens "$max_tokens" --warmup "$warmup" --steps "$steps" \
    --dump-batches "$OUT/$name.batches.jsonl" --dump-config "$OUT/$name.config.json")"
  log "$name: training, PyTorch"
  record "$name/train/torch" "$(ref train --config "$OUT/$name.config.json" --batches "$OUT/$name.batches.jsonl" \
    --warmup "$warmup" --steps "$steps" --threads "$T")"
  [[ $TRAIN_ONLY == 1 ]] && continue

  # Translation: batch 64 on the whole test set, batch 1 on its first 100 sentences
  # (the naive loop on the first 100 at both sizes: it is quadratic in the output length).
  for b in 64 1; do
    limit=0; [[ $b == 1 ]] && limit=100
    [[ -z "$trained" ]] && limit=100   # untrained models decode to the length limit: keep it short
    log "$name: translating, batch $b, nmt"
    record "$name/b$b/nmt" "$("$NMT" bench translate -m "$dir" --src "$TEST" --batch-size "$b" --limit "$limit" \
      --threads "$T" --dump-ids "$OUT/$name.ids.$b.jsonl" --dump-hyp-ids "$OUT/$name.hyp.nmt.$b.jsonl")"
    log "$name: translating, batch $b, PyTorch with cache"
    record "$name/b$b/cached" "$(ref translate --model "$dir" --ids "$OUT/$name.ids.$b.jsonl" --batch-size "$b" \
      --threads "$T" --mode cached --out "$OUT/$name.hyp.cached.$b.jsonl")"
    naive_limit=100
    [[ $name == transformer-base ]] && naive_limit=30
    log "$name: translating, batch $b, PyTorch naive (first $naive_limit)"
    head -n "$naive_limit" "$OUT/$name.ids.$b.jsonl" > "$OUT/$name.ids.naive.$b.jsonl"
    record "$name/b$b/naive" "$(ref translate --model "$dir" --ids "$OUT/$name.ids.naive.$b.jsonl" --batch-size "$b" \
      --threads "$T" --mode naive)"
    if cmp -s "$OUT/$name.hyp.nmt.$b.jsonl" "$OUT/$name.hyp.cached.$b.jsonl"; then same=true; else same=false; fi
    record "$name/b$b/identical" "$same"
  done
  if [[ $name == transformer-small ]]; then
    log "$name: beam 5, batch 64, nmt"
    record "$name/beam5/nmt" "$("$NMT" bench translate -m "$dir" --src "$TEST" --batch-size 64 --beam 5 --alpha "$ALPHA" --threads "$T" \
      $([[ -z "$trained" ]] && echo --limit 100))"
    log "$name: beam 5 with shrinking beams (Marian's search), batch 64, nmt"
    record "$name/beam5shrink/nmt" "$("$NMT" bench translate -m "$dir" --src "$TEST" --batch-size 64 --beam 5 --alpha "$ALPHA" --beam-shrink \
      --threads "$T" $([[ -z "$trained" ]] && echo --limit 100))"
  fi
  # Time to the first translated line of a one-line input, model load included.
  start=$(date +%s.%N)
  echo "A man is riding a bike." | "$NMT" translate -m "$dir" --threads "$T" > /dev/null
  end=$(date +%s.%N)
  record "$name/first_line" "$("$PY" -c "print(round($end - $start, 3))")"
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
versions="nmt: $("$NMT" --version); reference: PyTorch $("$PY" -c 'import torch; print(torch.__version__)')"
"$PY" - "$RES" "$T" "$cpu" "$versions" <<'PYEOF' | tee "$OUT/table.md"
import json, sys
res = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    res[j["key"]] = j["result"]
threads = sys.argv[2]
peak = res["peak"]["peak_gflops"]
rows = []
def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"
blas = res['peak'].get('blas_core') or "none: LibTorch's own BLAS (MKL in the PyTorch wheel)"
print(f"CPU: {sys.argv[3]}. {sys.argv[4]}.")
print(f"Machine matmul peak: {peak:.1f} GFLOP/s (float32, {threads} threads, best of 256..2048; OpenBLAS kernels: {blas}, the same for both).\n")
print("| model | measure | nmt | PyTorch | nmt / PyTorch |")
print("|---|---|---:|---:|---:|")
for name in ["transformer-small", "transformer-base", "gru-small"]:
    if f"{name}/train/nmt" not in res:
        continue
    n, p = res[f"{name}/train/nmt"], res[f"{name}/train/torch"]
    print(f"| {name} | training tokens/s ({n['steps']} steps, {n['max_tokens']}-token batches) | {n['tokens_per_s']:.0f} | {p['tokens_per_s']:.0f} | {ratio(n['tokens_per_s'], p['tokens_per_s'])} |")
    print(f"| {name} | training GFLOP/s (% of peak) | {n['gflops']:.1f} ({100 * n['gflops'] / peak:.0f} %) | {n['gflops'] * n['seconds'] / p['seconds']:.1f} | |")
    print(f"| {name} | training loss after {n['steps']} steps (same batches) | {n['final_loss']:.6f} | {p.get('final_loss', float('nan')):.6f} | |")
    print(f"| {name} | training peak RSS (MB) | {n['peak_rss_mb']:.0f} | {p['peak_rss_mb']:.0f} | |")
    if f"{name}/b64/nmt" not in res:
        continue
    for b in ["64", "1"]:
        nt, c, nv = res[f"{name}/b{b}/nmt"], res[f"{name}/b{b}/cached"], res[f"{name}/b{b}/naive"]
        same = "identical outputs" if res.get(f"{name}/b{b}/identical") else "OUTPUTS DIFFER"
        print(f"| {name} | greedy batch {b}: sentences/s vs PyTorch cached ({nt['sentences']} sent., {same}) | {nt['sentences_per_s']:.1f} | {c['sentences_per_s']:.1f} | {ratio(nt['sentences_per_s'], c['sentences_per_s'])} |")
        print(f"| {name} | greedy batch {b}: sentences/s vs PyTorch naive ({nv['sentences']} sent.) | {nt['sentences_per_s']:.1f} | {nv['sentences_per_s']:.1f} | {ratio(nt['sentences_per_s'], nv['sentences_per_s'])} |")
        print(f"| {name} | greedy batch {b}: target tokens/s | {nt['target_tokens_per_s']:.0f} | {c['target_tokens_per_s']:.0f} | {ratio(nt['target_tokens_per_s'], c['target_tokens_per_s'])} |")
        print(f"| {name} | greedy batch {b}: peak RSS (MB) | {nt['peak_rss_mb']:.0f} | {c['peak_rss_mb']:.0f} | |")
    if f"{name}/beam5/nmt" in res:
        bm, g = res[f"{name}/beam5/nmt"], res[f"{name}/b64/nmt"]
        print(f"| {name} | beam 5, batch 64: sentences/s (time vs greedy) | {bm['sentences_per_s']:.1f} ({g['sentences_per_s'] / bm['sentences_per_s']:.2f}x greedy's time) | | |")
    if f"{name}/beam5shrink/nmt" in res:
        bm, g = res[f"{name}/beam5shrink/nmt"], res[f"{name}/b64/nmt"]
        print(f"| {name} | beam 5 with shrinking beams (--beam-shrink), batch 64: sentences/s (time vs greedy) | {bm['sentences_per_s']:.1f} ({g['sentences_per_s'] / bm['sentences_per_s']:.2f}x greedy's time) | | |")
    print(f"| {name} | time to first translated line (model load included, s) | {float(res[f'{name}/first_line']):.2f} | | |")
PYEOF
log "results in $OUT (results.jsonl, table.md)"

if [[ -n "${NMT_BENCH_SMALL:-}" && "${NMT_BENCH_CT2:-1}" == 1 ]]; then
  log "nmt against CTranslate2 on $NMT_BENCH_SMALL (scripts/bench/bench-ct2.sh)"
  NMT_BENCH_CT2_MODEL="$NMT_BENCH_SMALL" NMT_BINARY="$NMT" NMT_DATA="$DATA" NMT_BENCH_OUT="$OUT/ct2" \
    bash "$ROOT/scripts/bench/bench-ct2.sh"
fi
