#!/usr/bin/env bash
# Speed of an imported OPUS-MT model (docs/benchmarks.md, "The imported OPUS-MT model"): a
# MarianMTModel of the real OPUS-MT en-fr shape (6+6 layers, d 512, 8 heads, FFN 2048, swish,
# 59,514 pieces) with random weights, made by transformers (scripts/reference/marian_reference.py), imported
# by `nmt import`, converted by CTranslate2's own converter; scripts/bench/bench_import.py then times
# nmt, transformers' generate() and CTranslate2 on the same sentences and prints the table.
#
#   scripts/bench/bench-import.sh                # NMT_BENCH_OUT (build/bench-import), NMT_BINARY (build/nmt)
#
# Prerequisites: `NMT_LIBTORCH=wheel NMT_SETUP_REFERENCE=1 scripts/setup.sh` and a build.
# Knobs: NMT_BENCH_SENTENCES (200, the first of Multi30k's val), NMT_BENCH_THREADS ("1 2"),
# NMT_BENCH_ROUNDS (2), NMT_BENCH_BATCH (32), NMT_BENCH_SEARCHES ("greedy beam5").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NMT=${NMT_BINARY:-$ROOT/build/nmt}
PY=$(bash "$ROOT/scripts/nmt-python.sh")
DATA=${NMT_DATA:-$ROOT/../shared/data}
OUT=${NMT_BENCH_OUT:-$ROOT/build/bench-import}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}  # as scripts/bench/bench-ct2.sh: a shared 2-core machine
if ! "$PY" -c 'import torch' 2>/dev/null; then
  home=$(bash "$ROOT/scripts/torch-home.sh")
  export PYTHONPATH="$home:$home-cuda-deps${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" -c 'import torch, transformers, ctranslate2, sentencepiece' 2>/dev/null ||
  { echo "bench-import: $PY lacks torch, transformers, ctranslate2 or sentencepiece: NMT_LIBTORCH=wheel NMT_SETUP_REFERENCE=1 scripts/setup.sh" >&2; exit 2; }
[[ -x "$NMT" ]] || { echo "bench-import: $NMT not found; build first" >&2; exit 2; }
mkdir -p "$OUT"
head -n "${NMT_BENCH_SENTENCES:-200}" "$DATA/multi30k/val.en" > "$OUT/src.en"
if [[ ! -f "$OUT/opus-shape/config.json" ]]; then
  "$PY" "$ROOT/scripts/reference/marian_reference.py" make "$OUT/opus-shape" --variant opus-shape --spm-dir "$OUT/spm" \
    --vocab-size 59514 >&2
fi
"$NMT" import "$OUT/opus-shape" -o "$OUT/opus-shape-nmt" --force
[[ -f "$OUT/opus-shape-ct2/model.bin" ]] ||
  "$(dirname "$PY")/ct2-transformers-converter" --model "$OUT/opus-shape" --output_dir "$OUT/opus-shape-ct2" --force >&2
read -r -a threads <<< "${NMT_BENCH_THREADS:-1 2}"
"$PY" "$ROOT/scripts/bench/bench_import.py" --hf "$OUT/opus-shape" --nmt "$OUT/opus-shape-nmt" --ct2 "$OUT/opus-shape-ct2" \
  --src "$OUT/src.en" --nmt-binary "$NMT" --threads "${threads[@]}" --rounds "${NMT_BENCH_ROUNDS:-2}" \
  --batch-size "${NMT_BENCH_BATCH:-32}" --searches ${NMT_BENCH_SEARCHES:-greedy beam5}
