#!/usr/bin/env bash
# Alignment error rate (AER, Och & Ney 2003) of `nmt translate --alignment` against a reference
# word alignment made on this machine, for each Transformer decoder layer's cross-attention
# (--attention-layer 0..L-1, --attention-head -1: the mean of the heads), so the docs can state
# the AER and recommend a layer.
#
#   scripts/bench/alignment-aer.sh MODEL_DIR [OUT_DIR]            # OUT_DIR: build/alignment-aer
#   LINES=100 scripts/bench/alignment-aer.sh /work/ref/m-transformer-tiny /tmp/aer   # a try
#
# Reference aligner: eflomal 2.0.0 (Östling & Tiedemann 2017; PyPI "eflomal", its eflomal-align
# command, default model 3 = IBM1 + HMM + fertility, 3 samplers), installed outside the repository:
#   python3 -m venv ~/.cache/nmt/align-venv && ~/.cache/nmt/align-venv/bin/pip install eflomal==2.0.0
# (it compiles its C sampler: needs gcc). Debian 12 has no fast_align package. eflomal's sampler
# is not seeded, so two runs give slightly different references (see AER_REPEAT below).
#
# What is aligned: Multi30k train (29,000 pairs, TRAIN_LINES for fewer) plus the pairs to be scored
# (the source lines of test_2016_flickr, LINES of them, and nmt's translations), lower-cased
# whitespace tokens, both directions (eflomal's forward and reverse links), symmetrised with
# grow-diag-final-and (scripts/bench/alignment_aer.py, Koehn's; `alignment_aer.py selftest` checks it
# on hand-made inputs). Pairs with an empty translation are left out of the aligner and score
# nothing on either side. Words on nmt's side are the same whitespace tokens (--alignment's
# Pharaoh SOURCE-TARGET word pairs).
# Scores: sure = possible = the reference links R, nmt's links A, counts summed over the corpus:
# precision |A∩R|/|A|, recall |A∩R|/|R|, AER 1 - 2|A∩R|/(|A|+|R|); plus a diagonal baseline
# (target word j linked to source word round(j*|s|/|t|)), and with AER_REPEAT=1 a second eflomal
# run scored against the first (the reference's own noise).
#
# Knobs: LINES (test sentences, default all 1,000), TRAIN_LINES (default all 29,000), BEAM (5),
# NMT_THREADS (2; also eflomal's OpenMP threads), AER_REPEAT (0), EFLOMAL (path of eflomal-align;
# default ~/.cache/nmt/align-venv/bin/eflomal-align), NMT_BINARY (build/nmt), NMT_DATA, NMT_PYTHON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "alignment-aer: $*" >&2; exit 2; }
log() { printf '[alignment-aer %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 MODEL_DIR [OUT_DIR]"
# The exact command, with the knobs set in the environment.
command="$(printf '%q ' "$0" "$@" | sed 's/ $//')"
for v in AER_REPEAT NMT_THREADS BEAM TRAIN_LINES LINES; do
  if [[ -n "${!v:-}" ]]; then command="$v=${!v} $command"; fi
done
MODEL=$1
OUT=${2:-$ROOT/build/alignment-aer}
NMT=${NMT_BINARY:-$ROOT/build/nmt}
PY=${NMT_PYTHON:-python3}
DATA=${NMT_DATA:-$ROOT/../shared/data}
LINES=${LINES:-0}
TRAIN_LINES=${TRAIN_LINES:-0}
BEAM=${BEAM:-5}
THREADS=${NMT_THREADS:-2}
REPEAT=${AER_REPEAT:-0}
EFLOMAL=${EFLOMAL:-$HOME/.cache/nmt/align-venv/bin/eflomal-align}
HELPER="$ROOT/scripts/bench/alignment_aer.py"
SET=test_2016_flickr

[[ -d "$MODEL" ]] || die "model directory $MODEL not found"
[[ -f "$MODEL/config.json" ]] || die "$MODEL has no config.json: not an nmt model directory"
[[ -x "$NMT" ]] || die "$NMT not found or not executable (set NMT_BINARY)"
for f in "$DATA/multi30k/train.en" "$DATA/multi30k/train.fr" "$DATA/multi30k/$SET.en"; do
  [[ -s "$f" ]] || die "$f not found (set NMT_DATA)"
done
for v in LINES TRAIN_LINES; do [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a number of lines (0 = all), not '${!v}'"; done
[[ "$BEAM" =~ ^[1-9][0-9]*$ ]] || die "BEAM must be a positive integer, not '$BEAM'"
[[ "$THREADS" =~ ^[1-9][0-9]*$ ]] || die "NMT_THREADS must be a positive integer, not '$THREADS'"
[[ $("$NMT" translate --help) == *--alignment* ]] || die "$NMT has no 'translate --alignment' (build a newer nmt)"
[[ -x "$EFLOMAL" ]] || die "eflomal-align not found at $EFLOMAL: python3 -m venv ~/.cache/nmt/align-venv && ~/.cache/nmt/align-venv/bin/pip install eflomal==2.0.0 (needs gcc), or set EFLOMAL"
"$PY" "$HELPER" selftest > /dev/null || die "scripts/bench/alignment_aer.py selftest failed"
eflomal_version=$("$(dirname "$EFLOMAL")/python" -c 'import importlib.metadata as m; print(m.version("eflomal"))' 2>/dev/null || echo unknown)

# Decoder layers to compare: the Transformer's decoder_layers; other models have one attention.
read -r mtype layers < <("$PY" -c 'import json, sys; m = json.load(open(sys.argv[1]))["model"]; print(m.get("type", "?"), m.get("decoder_layers", 0) if m.get("type") == "transformer" else 0)' "$MODEL/config.json")
LAYERS=(-1)
if [[ $layers -gt 0 ]]; then mapfile -t LAYERS < <(seq 0 $((layers - 1))); fi
mkdir -p "$OUT" || die "cannot create $OUT"

if [[ $LINES -gt 0 ]]; then head -n "$LINES" "$DATA/multi30k/$SET.en" > "$OUT/src.en"; else cp "$DATA/multi30k/$SET.en" "$OUT/src.en"; fi

# nmt's translations and links, one run per layer (the translation is the same in each: the layer
# only chooses the attention the links are read from).
for L in "${LAYERS[@]}"; do
  log "nmt translate --alignment --attention-layer $L ($mtype, beam $BEAM)"
  "$NMT" translate -q -m "$MODEL" -i "$OUT/src.en" -o "$OUT/layer$L.jsonl" --json --alignment \
    --attention-layer "$L" --attention-head -1 --beam "$BEAM" --threads "$THREADS" ||
    die "nmt translate --alignment failed (layer $L)"
  "$PY" "$HELPER" prepare "$OUT/layer$L.jsonl" "$OUT/src.en" "$OUT/layer$L"
done
first=${LAYERS[0]}
for L in "${LAYERS[@]}"; do
  cmp -s "$OUT/layer$L.tgt" "$OUT/layer$first.tgt" || die "translations differ between layers $first and $L"
done
cp "$OUT/layer$first.src" "$OUT/test.src"
cp "$OUT/layer$first.tgt" "$OUT/test.tgt"
cp "$OUT/layer$first.keep" "$OUT/keep"
kept=$(grep -c '^1$' "$OUT/keep" || true)
total=$(wc -l < "$OUT/keep")
[[ $kept -gt 0 ]] || die "every translation is empty: nothing to align"

# The reference: eflomal on train + the scored pairs, both directions, grow-diag-final-and.
train() {
  if [[ $TRAIN_LINES -gt 0 ]]; then head -n "$TRAIN_LINES" "$1"; else cat "$1"; fi | "$PY" -c 'import sys; [print(" ".join(l.lower().split())) for l in sys.stdin]'
}
{ train "$DATA/multi30k/train.en"; cat "$OUT/test.src"; } > "$OUT/aligner.src"
{ train "$DATA/multi30k/train.fr"; cat "$OUT/test.tgt"; } > "$OUT/aligner.tgt"
ntrain=$(($(wc -l < "$OUT/aligner.src") - kept))
# Lines of the corpus that are empty on either side would shift eflomal's line numbers: none
# must be (Multi30k has none; the scored pairs are non-empty by construction).
"$PY" - "$OUT/aligner.src" "$OUT/aligner.tgt" <<'PYEOF' || die "the aligner's corpus has an empty line"
import sys
a, b = (open(p, encoding="utf-8").read().split("\n")[:-1] for p in sys.argv[1:3])
assert len(a) == len(b) and all(x.strip() and y.strip() for x, y in zip(a, b)), "empty or unequal"
PYEOF
reference() { # reference SUFFIX: OUT/ref-SUFFIX.{fwd,rev,gdfa} (the last `kept` lines: the scored pairs)
  log "eflomal on $ntrain training + $kept scored pairs ($1)"
  local start=$SECONDS
  OMP_NUM_THREADS=$THREADS "$EFLOMAL" --overwrite -s "$OUT/aligner.src" -t "$OUT/aligner.tgt" \
    -f "$OUT/all-$1.fwd" -r "$OUT/all-$1.rev" 2> "$OUT/eflomal-$1.log" || die "eflomal failed: see $OUT/eflomal-$1.log"
  eflomal_s=$((SECONDS - start))
  tail -n "$kept" "$OUT/all-$1.fwd" > "$OUT/ref-$1.fwd"
  tail -n "$kept" "$OUT/all-$1.rev" > "$OUT/ref-$1.rev"
  "$PY" "$HELPER" gdfa "$OUT/ref-$1.fwd" "$OUT/ref-$1.rev" > "$OUT/ref-$1.gdfa"
}
reference 1
# Every line of the test set: the reference has links only for the kept ones.
expand() { # expand KEPT_LINES_FILE > ALL_LINES_FILE (empty lines where the translation was empty)
  "$PY" -c 'import sys; keep = open(sys.argv[1]).read().split(); it = iter(open(sys.argv[2], encoding="utf-8").read().split("\n")); [print(next(it) if k == "1" else "") for k in keep]' "$OUT/keep" "$1"
}
expand "$OUT/ref-1.gdfa" > "$OUT/reference.gdfa"
"$PY" "$HELPER" diagonal "$OUT/src.en" <("$PY" -c 'import json, sys; [print(json.loads(l)["translation"]) for l in open(sys.argv[1], encoding="utf-8")]' "$OUT/layer$first.jsonl") > "$OUT/diagonal.hyp"
if [[ $REPEAT == 1 ]]; then
  reference 2
  expand "$OUT/ref-2.gdfa" > "$OUT/reference-2.gdfa"
fi

# The header and the table.
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
isa=$(grep -o -w -E 'avx2|avx512f|avx512_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/ $//')
blas=$("$NMT" bench matmul --threads "$THREADS")
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null) ]]; then commit="$commit (+ uncommitted changes)"; fi
{
  "$PY" "$HELPER" header "$cpu" "$isa" "$blas" "$("$NMT" --version)" "$commit" "$(date -u '+%Y-%m-%d %H:%M UTC')"
  if [[ ${LAYERS[0]} == -1 ]]; then what="its one attention"; else what="${#LAYERS[@]} decoder layer(s) compared, heads averaged"; fi
  echo "Model $MODEL ($mtype, $what); $SET, $total sentences (${kept} with a non-empty translation), beam $BEAM."
  echo "Reference: eflomal $eflomal_version (model 3, 3 samplers, ${eflomal_s}s) on $ntrain Multi30k train pairs + the $kept scored pairs, lower-cased whitespace tokens, both directions, grow-diag-final-and; sure = possible = its links."
  echo "Command: \`$command\`"
  echo
  echo "| links from | links | reference links | shared | precision | recall | AER |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  row() { # row LABEL HYP [REF]
    "$PY" "$HELPER" row "$1" "${3:-$OUT/reference.gdfa}" "$2"
  }
  for L in "${LAYERS[@]}"; do
    label="nmt, layer $L"
    if [[ $L == -1 ]]; then label="nmt, the model's attention"; elif [[ $L == $((${#LAYERS[@]} - 1)) ]]; then label="$label (last, the default)"; fi
    row "$label" "$OUT/layer$L.hyp"
  done
  row "diagonal baseline" "$OUT/diagonal.hyp"
  if [[ $REPEAT == 1 ]]; then row "eflomal, a second run (reference noise)" "$OUT/reference-2.gdfa"; fi
  echo
  echo "AER = 1 - 2|A∩R|/(|A|+|R|) with sure = possible links (lower is better), counts summed over the corpus."
} | tee "$OUT/table.md"
log "outputs in $OUT (table.md, layer*.jsonl nmt's output, reference.gdfa, ref-*.fwd/.rev eflomal's directions)"
