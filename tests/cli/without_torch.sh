#!/usr/bin/env bash
# The build without LibTorch (NMT_LIBTORCH=none): `nmt translate`, `eval`, `score` and `serve` work on
# the CPU engine (a Transformer and a GRU with random weights, nmt_random_model, alone and as an
# ensemble; beam search, n-best JSON, int8, paragraphs, an HTML page), the same output on every
# run; `nmt quantize` writes int8 copies, `nmt import` imports a MarianMTModel; what needs
# LibTorch is refused in one line, exit 2.
#   without_torch.sh NMT_BINARY NMT_RANDOM_MODEL SOURCE_DIR
set -euo pipefail
nmt=$1 random_model=$2 root=$3
source "$root/tests/support/serve_helpers.sh"
work=$(mktemp -d)
server=
cleanup() { [[ -z $server ]] || kill "$server" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
fixtures=$root/data/fixtures
"$random_model" "$work/transformer" transformer "$fixtures/tiny.en" "$fixtures/tiny.fr"
"$random_model" "$work/gru" gru "$fixtures/tiny.en" "$fixtures/tiny.fr"
src=$fixtures/tiny.en lines=$(wc -l < "$fixtures/tiny.en")
for flags in "-m $work/transformer" "-m $work/gru --beam 3" "-m $work/transformer -m $work/gru --beam 2" \
             "-m $work/transformer --int8" "-m $work/gru --sampling top-p:0.9 --seed 5" \
             "-m $work/gru --beam 3 --nbest 2 --json --alignment"; do
  # shellcheck disable=SC2086
  "$nmt" translate -q --threads 1 $flags < "$src" > "$work/a" 2> "$work/err" || { echo "$flags:"; cat "$work/err"; exit 1; }
  # shellcheck disable=SC2086
  "$nmt" translate -q --threads 1 $flags < "$src" > "$work/b"
  cmp "$work/a" "$work/b"
  [[ $(wc -l < "$work/a") -eq $lines ]] || { echo "$flags: $(wc -l < "$work/a") lines"; exit 1; }
done
python3 - "$work/a" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    assert {"translation", "tokens", "score", "log_prob", "alignment", "nbest"} <= r.keys(), r.keys()
    assert len(r["nbest"]) == 2, r
PY
# Scoring: one finite log-probability per pair, forced decoding on the engine.
"$nmt" score -q --threads 1 -m "$work/gru" --src "$src" --tgt "$fixtures/tiny.fr" > "$work/scores"
[[ $(wc -l < "$work/scores") -eq $lines ]] && ! grep -q -v -E '^-[0-9]+\.[0-9]{6}$' "$work/scores" || { cat "$work/scores"; exit 1; }
"$nmt" eval -q --threads 1 -m "$work/transformer" --src "$src" --ref "$fixtures/tiny.fr" > "$work/eval"
grep -q "BLEU" "$work/eval" || { cat "$work/eval"; exit 1; }
"$nmt" translate -q --threads 1 -m "$work/transformer" -i "$fixtures/page.html" -o "$work/page.html"
grep -q "<html" "$work/page.html"
"$nmt" translate -q --threads 1 -m "$work/transformer" < "$fixtures/paragraphs.en" > "$work/paragraphs"
[[ $(wc -l < "$work/paragraphs") -eq $(wc -l < "$fixtures/paragraphs.en") ]]
# What fails is refused in one line, exit STATUS.
fails() {  # fails STATUS PATTERN COMMAND...
  local expected=$1 pattern=$2 status=0
  shift 2
  "$nmt" "$@" < "$src" > /dev/null 2> "$work/err" || status=$?
  [[ $status -eq $expected && $(wc -l < "$work/err") -eq 1 ]] && grep -q -- "$pattern" "$work/err" ||
    { echo "nmt $* (exit $status):"; cat "$work/err"; exit 1; }
}
# nmt quantize writes int8 copies that translate as --int8 quantises on load, both model kinds.
for kind in transformer gru; do
  "$nmt" quantize -q "$work/$kind" -o "$work/$kind.int8"
  grep -q '"quantization": "int8"' "$work/$kind.int8/config.json"
  "$nmt" translate -q --threads 1 --beam 3 -m "$work/$kind.int8" < "$src" > "$work/a"
  "$nmt" translate -q --threads 1 --beam 3 -m "$work/$kind" --int8 < "$src" > "$work/b"
  cmp "$work/a" "$work/b"
  [[ $(stat -c %s "$work/$kind.int8/model.safetensors") -lt $(stat -c %s "$work/$kind/model.safetensors") ]]
done
fails 2 "already exists (--force replaces it)" quantize "$work/transformer" -o "$work/transformer.int8"
fails 1 "already an int8 model" quantize "$work/transformer.int8" -o "$work/again"
mkdir "$work/format1" && cp "$work/transformer"/{config.json,spm.model} "$work/format1"
fails 1 "format1/model.safetensors: does not exist.*nmt upgrade" quantize "$work/format1" -o "$work/never"
[[ ! -e $work/never ]]
# nmt import of a MarianMTModel directory (model.safetensors), which then translates; a
# pytorch_model.bin needs LibTorch's unpickler, said in one line.
"$random_model" "$work/hf" marian "$fixtures/tiny.en" "$fixtures/tiny.fr"
"$nmt" import -q "$work/hf" -o "$work/imported"
[[ -f $work/imported/model.safetensors && ! -e $work/imported/model.pt ]]
echo "a man with a dog" | "$nmt" translate -q -m "$work/imported" --json --max-len-a 0 --max-len-b 5 > "$work/a"
python3 - "$work/a" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1], encoding="utf-8").read())
assert 0 < len(r["tokens"]) <= 5 and not {"<pad>", "<s>"} & set(r["tokens"]), r
PY
mv "$work/hf/model.safetensors" "$work/hf/pytorch_model.bin"
fails 1 "pytorch_model.bin needs LibTorch's unpickler" import "$work/hf" -o "$work/never"
[[ ! -e $work/never ]]
# What needs LibTorch is refused in one line, exit 2, naming the build.
refused() { fails 2 "$@"; }
refused "needs LibTorch.*NMT_LIBTORCH=none" train --preset transformer-tiny --train x --valid x --out "$work/m"
refused "needs LibTorch.*NMT_LIBTORCH=none" average -m "$work/transformer" -o "$work/avg"
refused "without LibTorch" translate -q -m "$work/transformer" --engine torch
# Phrases to include, searched on the engine: each in its line's translation, or named unmet.
for _ in $(seq "$lines"); do echo un; done > "$work/include"
"$nmt" translate -q --threads 1 -m "$work/transformer" --constraints "$work/include" --json < "$src" > "$work/a"
python3 - "$work/a" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    assert "un" in r["translation"] or r["unmet_constraints"] == ["un"], r
PY
"$nmt" --version | grep -q "no LibTorch"
# A server on the engine answers as translate does.
start_server "$work/serve.log" "$nmt" -m "$work/transformer" --threads 1 -q
first=$(head -n 1 "$src")
expected=$("$nmt" translate -q --threads 1 -m "$work/transformer" <<< "$first")
got=$(post_translate "$port" "$first")
[[ "$got" == "$expected" ]] || { echo "served '$got', translate '$expected'"; exit 1; }
echo "without_torch: ok"
