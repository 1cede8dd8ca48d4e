#!/usr/bin/env bash
# ctest: `nmt import` of Hugging Face MarianMTModels (the OPUS-MT format) translates as
# transformers' generate() does, token for token. Small random models of several configurations
# (scripts/reference/marian_reference.py: tied and untied embeddings, depths, activations, a config saying
# normalize_before, safetensors and pytorch_model.bin, a SentencePiece pair trained on Multi30k,
# random weights trained a few hundred steps so that outputs vary)
# are saved by transformers, imported, and decode 200 Multi30k sentences greedily and with
# beam 5 in both; every output must be the same pieces, and greedy log-probabilities agree to
# 1e-4. Then what nmt adds works on an import: an ensemble of a model with itself translates as
# the model, `nmt serve` answers as `nmt translate`, `nmt quantize` and --int8 run, and
# CTranslate2 translates the export of an import as nmt does; a truncated pytorch_model.bin is
# refused. Skipped (77) without Multi30k or without Python torch, transformers, sentencepiece and
# safetensors (NMT_SETUP_REFERENCE=1 scripts/setup.sh installs them, as CI's wheel build does,
# where their absence is a failure).
#   tests/equivalence/marian_import.sh NMT_BINARY SOURCE_DIR
set -euo pipefail
nmt=$1 root=$2
data=${NMT_DATA:-$root/../shared/data}/multi30k
[[ -f $data/train.en && -f $data/val.en ]] || { echo "skipped: no Multi30k under $data"; exit 77; }
source "$root/tests/equivalence/reference_python.sh"
require_python_modules "torch transformers sentencepiece safetensors"
export NMT_DATA=${NMT_DATA:-$root/../shared/data}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -n 200 "$data/val.en" > "$work/input.en"
ref=$root/scripts/reference/marian_reference.py
max=40
status=0
for spec in "tied safetensors" "untied bin" "relu-prenorm-flag safetensors"; do
  read -r variant format <<< "$spec"
  "$py" "$ref" make "$work/$variant" --variant "$variant" --spm-dir "$work/spm" --format "$format" > /dev/null
  "$nmt" import -q "$work/$variant" -o "$work/$variant-nmt"
  for mode in greedy beam; do
    beam=1
    [[ $mode == beam ]] && beam=5
    "$py" "$ref" generate "$work/$variant" "$work/input.en" --mode "$mode" --beam "$beam" --max-new-tokens "$max" \
      --length-penalty 0.0 > "$work/$variant.$mode.hf.jsonl"
    "$nmt" translate -m "$work/$variant-nmt" --beam "$beam" --length-penalty none --max-len-a 0 --max-len-b "$max" \
      --json --threads 1 < "$work/input.en" > "$work/$variant.$mode.nmt.jsonl"
    greedy=()
    [[ $mode == greedy ]] && greedy=(--greedy)
    "$py" "$ref" compare "$work/$variant.$mode.hf.jsonl" "$work/$variant.$mode.nmt.jsonl" --label "$variant ($format) $mode" \
      "${greedy[@]}" --log-prob-tolerance 1e-4 --max-new-tokens "$max" || status=1
  done
done
# A truncated pytorch_model.bin: one line naming it, exit 1, nothing written.
head -c 100000 "$work/untied/pytorch_model.bin" > "$work/untied/pytorch_model.bin.part"
mv "$work/untied/pytorch_model.bin.part" "$work/untied/pytorch_model.bin"
if "$nmt" import -q "$work/untied" -o "$work/truncated" 2> "$work/truncated.err" || [[ -e $work/truncated ]] ||
   ! grep -q "untied/pytorch_model.bin: " "$work/truncated.err" || [[ $(wc -l < "$work/truncated.err") != 1 ]]; then
  echo "FAIL: a truncated pytorch_model.bin:"; cat "$work/truncated.err"; status=1
fi

# Downstream, on the tied import.
m=$work/tied-nmt
"$nmt" translate -m "$m" -q --threads 1 < "$work/input.en" > "$work/single.txt"
"$nmt" translate -m "$m" -m "$m" -q --threads 1 < "$work/input.en" > "$work/ensemble.txt"
cmp -s "$work/single.txt" "$work/ensemble.txt" || { echo "FAIL: an ensemble of the import with itself differs from it"; status=1; }
# nmt serve answers as nmt translate does.
"$nmt" serve -m "$m" --port 0 --threads 1 2> "$work/serve.log" &
server=$!
port=""
for _ in $(seq 1 600); do
  port=$(sed -nE 's|.*listening on http://127\.0\.0\.1:([0-9]+).*|\1|p' "$work/serve.log" | head -n 1)
  [[ -n $port ]] && break
  sleep 0.1
done
head -n 5 "$work/input.en" > "$work/five.en"
answer=$("$py" -c 'import json, sys; print(json.dumps({"text": open(sys.argv[1]).read().splitlines()}))' "$work/five.en" |
  curl -s --max-time 60 "localhost:${port:-1}/translate" -d @- || true)
kill "$server" 2> /dev/null || true
wait "$server" 2> /dev/null || true
"$py" -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])["translation"]))' "$answer" > "$work/served.txt" 2> /dev/null || true
head -n 5 "$work/single.txt" | cmp -s - "$work/served.txt" || { echo "FAIL: nmt serve answers otherwise than nmt translate: $answer"; status=1; }
"$nmt" quantize -q "$m" -o "$work/tied-int8"
"$nmt" translate -m "$work/tied-int8" -q --threads 1 < "$work/input.en" > "$work/int8.txt"
[[ $(grep -c . "$work/int8.txt") -ge 190 ]] || { echo "FAIL: the int8 import left lines empty"; status=1; }
if "$py" -c 'import ctranslate2' 2>/dev/null; then
  "$py" "$root/scripts/nmt_to_ctranslate2.py" "$m" -o "$work/tied-ct2" 2>/dev/null
  head -n 200 "$data/val.fr" > "$work/ref.fr"
  "$py" "$root/scripts/ct2_check.py" --model "$m" --ct2 "$work/tied-ct2" --src "$work/input.en" --ref "$work/ref.fr" \
    --out "$work/ct2-check" --nmt "$nmt" --threads 1 --min-equal 1 --max-bleu-gap 0 > "$work/ct2-check.log" 2>&1 ||
    { echo "FAIL: CTranslate2 translates the exported import otherwise:"; tail -n 20 "$work/ct2-check.log"; status=1; }
fi
exit $status
