#!/usr/bin/env bash
# GPU benchmark: nmt against Python eager PyTorch of the same LibTorch (scripts/reference/
# nmt_reference.py --device: same architectures, same weights, same batches), printing one
# table: training tokens/s for transformer-small, transformer-base and gru-small at 2,500- and
# 25,000-token batches in fp32 and bf16; greedy and beam-5 decoding sentences/s at batch 1, 64
# and 1,024; peak GPU memory (LibTorch's caching allocator) and GPU utilisation (nvidia-smi,
# sampled every 200 ms while each row runs).
#
# On the CUDA machine, from the repository root, after building as ../shared/gpu/README.md says
# (the build's nmt and the same PyTorch wheel's Python):
#   bash .device/build-on-device.sh && NMT_BINARY=/tmp/b/nmt bash scripts/bench/bench-gpu.sh
# Knobs: NMT_BENCH_DEVICE (cuda), NMT_BENCH_STEPS (timed updates, 30), NMT_BENCH_WARMUP (5),
# NMT_BENCH_ROW_LIMIT (seconds a row may take, 120; one that fails or overruns reads "failed"),
# NMT_BENCH_MODELS ("transformer-small transformer-base gru-small"), NMT_BENCH_TOKENS ("2500
# 25000"), NMT_BENCH_BATCHES ("1 64 1024"), NMT_BENCH_SMALL / _BASE /
# _GRU (trained model directories: realistic output lengths for the decoding rows), NMT_DATA,
# NMT_PYTHON, NMT_BENCH_OUT (/tmp/bench-gpu). On a CPU, as a check of the script (not a
# measurement): NMT_BENCH_DEVICE=cpu NMT_BENCH_STEPS=1 NMT_BENCH_WARMUP=1 NMT_BENCH_TOKENS=500
# NMT_BENCH_BATCHES="1 64" NMT_BENCH_MODELS=gru-small bash scripts/bench/bench-gpu.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NMT=${NMT_BINARY:-$ROOT/build/nmt}
PY=$(bash "$ROOT/scripts/nmt-python.sh")
REF="$ROOT/scripts/reference/nmt_reference.py"
DATA=${NMT_DATA:-$ROOT/../shared/data}
DEVICE=${NMT_BENCH_DEVICE:-cuda}
STEPS=${NMT_BENCH_STEPS:-30}
WARMUP=${NMT_BENCH_WARMUP:-5}
OUT=${NMT_BENCH_OUT:-/tmp/bench-gpu}
TRAIN="$DATA/multi30k/train"
TEST="$DATA/multi30k/test_2016_flickr.en"
read -r -a MODELS <<< "${NMT_BENCH_MODELS:-transformer-small transformer-base gru-small}"
read -r -a TOKENS <<< "${NMT_BENCH_TOKENS:-2500 25000}"
read -r -a BATCHES <<< "${NMT_BENCH_BATCHES:-1 64 1024}"

[[ -x "$NMT" ]] || { echo "bench-gpu: $NMT not found (NMT_BINARY)" >&2; exit 2; }
"$PY" -c 'import torch' 2>/dev/null || { echo "bench-gpu: $PY cannot import torch" >&2; exit 2; }
[[ -f "$TRAIN.en" && -f "$TEST" ]] || { echo "bench-gpu: Multi30k not found under $DATA (NMT_DATA)" >&2; exit 2; }
# nmt's LibTorch 2.x build runs attention through the fused kernel (scaled_dot_product_attention),
# and on a GPU its Linear layers through ATen's linear (the bias inside the addmm): so does the
# reference then, as a Python user of PyTorch 2.x would.
REF_FLAGS=()
[[ "$("$NMT" --version)" =~ LibTorch\ ([0-9]+)\. && ${BASH_REMATCH[1]} -ge 2 ]] && REF_FLAGS+=(--sdpa)
[[ $DEVICE == cuda* ]] && REF_FLAGS+=(--fused-linear)
mkdir -p "$OUT"
RES="$OUT/results.jsonl"
: > "$RES"
log() { printf '[bench-gpu %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Runs a command while nvidia-smi samples the GPU's utilisation; records {"result", "gpu_util"}.
measure() { # measure KEY COMMAND...
  local key=$1 util="$OUT/util.csv" sampler="" result
  shift
  if [[ $DEVICE == cuda* ]] && command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 > "$util" 2>/dev/null &
    sampler=$!
  fi
  # A row that fails or overruns NMT_BENCH_ROW_LIMIT seconds is recorded as such, and the
  # table goes on: a lent GPU's minutes are too few to lose the other rows to one.
  if ! result=$(timeout "${NMT_BENCH_ROW_LIMIT:-120}" "$@" | tail -n 1) || [[ "$result" != \{* ]]; then
    log "$key: failed or timed out"
    result='{"failed": true}'
  fi
  [[ -n "$sampler" ]] && kill "$sampler" 2>/dev/null && wait "$sampler" 2>/dev/null || true
  local mean=null
  [[ -n "$sampler" && -s "$util" ]] && mean=$(awk '{s += $1; n++} END {printf "%.0f", n ? s / n : 0}' "$util")
  printf '{"key": "%s", "result": %s, "gpu_util": %s}\n' "$key" "$result" "$mean" >> "$RES"
}

trained_dir() {
  case $1 in
    transformer-small) echo "${NMT_BENCH_SMALL:-}" ;;
    transformer-base) echo "${NMT_BENCH_BASE:-}" ;;
    gru-small) echo "${NMT_BENCH_GRU:-}" ;;
  esac
}

for model in "${MODELS[@]}"; do
  dir=$(trained_dir "$model")
  if [[ -z "$dir" ]]; then
    dir="$OUT/$model"
    log "$model: initialising a model (no trained directory given: decoding runs to the length limit)"
    rm -rf "$dir"
    "$NMT" bench init --preset "$model" --train "$TRAIN" --out "$dir"
  fi
  for tokens in "${TOKENS[@]}"; do
    for precision in fp32 bf16; do
      flag=()
      [[ $precision == bf16 ]] && flag=(--bf16)
      [[ $precision == bf16 && $DEVICE == cpu ]] && continue  # bf16 autocast is CUDA-only in nmt
      tag="$model/train/$tokens/$precision"
      log "$tag: nmt"
      measure "$tag/nmt" "$NMT" bench train --preset "$model" --train "$TRAIN" --spm "$dir/spm.model" \
        --device "$DEVICE" "${flag[@]}" --max-tokens "$tokens" --warmup "$WARMUP" --steps "$STEPS" \
        --dump-batches "$OUT/batches.jsonl" --dump-config "$OUT/config.json"
      log "$tag: PyTorch eager"
      measure "$tag/torch" "$PY" "$REF" train --config "$OUT/config.json" --batches "$OUT/batches.jsonl" \
        --device "$DEVICE" "${flag[@]}" "${REF_FLAGS[@]}" --warmup "$WARMUP" --steps "$STEPS"
    done
  done
  for beam in 1 5; do
    for batch in "${BATCHES[@]}"; do
      limit=0
      [[ $batch == 1 ]] && limit=${NMT_BENCH_B1_LIMIT:-200}
      tag="$model/beam$beam/b$batch"
      log "$tag: nmt"
      measure "$tag/nmt" "$NMT" bench translate -m "$dir" --src "$TEST" --device "$DEVICE" --batch-size "$batch" \
        --beam "$beam" --limit "$limit" --dump-ids "$OUT/ids.jsonl"
      if [[ $beam == 1 ]]; then  # the reference decodes greedily only
        log "$tag: PyTorch eager, cached"
        measure "$tag/torch" "$PY" "$REF" translate --model "$dir" --ids "$OUT/ids.jsonl" --device "$DEVICE" "${REF_FLAGS[@]}" \
          --batch-size "$batch" --limit "$limit"
      fi
    done
  done
done

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
versions="nmt: $("$NMT" --version); reference: PyTorch $("$PY" -c 'import torch; print(torch.__version__)')"
"$PY" "$ROOT/scripts/bench/bench_gpu_table.py" "$RES" "${gpu:-no GPU ($DEVICE)}" "$versions" | tee "$OUT/table.md"
log "results in $OUT (results.jsonl, table.md)"
