#!/usr/bin/env bash
# `nmt translate`, `eval`, `score` and `serve` with --engine native run in `nmt` itself on the CPU engine
# (app/launcher/main.cc): the process never maps LibTorch, and what it prints is what nmt-torch
# prints with the same flags (one model, an ensemble, int8, n-best JSON, an HTML page, eval's
# BLEU). A search the engine cannot run is refused in one line, exit 2.
#   launcher_engine.sh NMT_BINARY SOURCE_DIR
set -euo pipefail
nmt=$1 root=$2
full="$(dirname "$nmt")/nmt-torch"
source "$root/tests/support/serve_helpers.sh"
work=$(mktemp -d)
server=
cleanup() { [[ -z $server ]] || kill "$server" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for seed in 3 4; do
  "$nmt" train --preset transformer-tiny --train "$root/data/fixtures/tiny" --valid "$root/data/fixtures/tiny" \
    --out "$work/model$seed" --max-steps 60 --valid-every 60 --seed $seed --threads 1 -q
done
src=$root/data/fixtures/tiny.en
same() {  # same FLAGS...: nmt and nmt-torch print the same for these flags
  "$nmt" translate -q --threads 1 --engine native "$@" < "$src" > "$work/here" 2> "$work/here.err" ||
    { cat "$work/here.err"; exit 1; }
  "$full" translate -q --threads 1 --engine native "$@" < "$src" > "$work/full"
  cmp "$work/here" "$work/full" || { echo "nmt and nmt-torch differ with: $*"; diff "$work/here" "$work/full"; exit 1; }
  [[ $(wc -l < "$work/here") -eq $(wc -l < "$src") ]]
}
same -m "$work/model3"
same -m "$work/model3" -m "$work/model4" --beam 4
same -m "$work/model3" --int8
same -m "$work/model3" --beam 4 --nbest 2 --json --alignment
"$nmt" eval -q --threads 1 --engine native -m "$work/model3" --src "$src" --ref "$root/data/fixtures/tiny.fr" > "$work/eval.here"
"$full" eval -q --threads 1 --engine native -m "$work/model3" --src "$src" --ref "$root/data/fixtures/tiny.fr" > "$work/eval.full"
cmp "$work/eval.here" "$work/eval.full"
"$nmt" translate -q --threads 1 --engine native -m "$work/model3" -i "$root/data/fixtures/page.html" -o "$work/here.html"
"$full" translate -q --threads 1 --engine native -m "$work/model3" -i "$root/data/fixtures/page.html" -o "$work/full.html"
cmp "$work/here.html" "$work/full.html"
# Scores: the same as nmt-torch's on the engine, and within 1e-4 of LibTorch's forced decoding.
for bin in "$nmt" "$full"; do
  "$bin" score -q --threads 1 --engine native -m "$work/model3" --src "$src" --tgt "$root/data/fixtures/tiny.fr" --per-token \
    > "$work/score.$(basename "$bin")"
done
cmp "$work/score.nmt" "$work/score.nmt-torch"
"$full" score -q --threads 1 --engine torch -m "$work/model3" --src "$src" --tgt "$root/data/fixtures/tiny.fr" --per-token \
  > "$work/score.torch"
python3 - "$work/score.nmt" "$work/score.torch" <<'PY'
import sys
a, b = (open(p).read().split() for p in sys.argv[1:3])
assert len(a) == len(b) > 0, (len(a), len(b))
worst = max(abs(float(x) - float(y)) for x, y in zip(a, b))
assert worst <= 1e-4, f"engine and LibTorch scores differ by {worst}"
PY
# Phrases to include: searched here, on the engine, keeping the hypotheses LibTorch's beam keeps.
for _ in $(seq "$(wc -l < "$src")"); do echo chien; done > "$work/include"
"$nmt" translate -q --threads 1 -m "$work/model3" --beam 4 --constraints "$work/include" --json < "$src" > "$work/here"
"$full" translate -q --threads 1 --engine torch -m "$work/model3" --beam 4 --constraints "$work/include" --json \
  < "$src" > "$work/full"
python3 - "$work/here" "$work/full" <<'PY'
import json, sys
here, full = ([json.loads(l) for l in open(p, encoding="utf-8")] for p in sys.argv[1:3])
assert len(here) == len(full) > 0
for a, b in zip(here, full):
    assert (a["tokens"], a["unmet_constraints"]) == (b["tokens"], b["unmet_constraints"]), (a, b)
    assert "chien" in a["translation"] or a["unmet_constraints"], a
PY
# Sampling runs here, on the engine, drawing what nmt-torch's LibTorch decoder draws for a seed.
same -m "$work/model3" --sampling top-k:5 --seed 11
# A server on the engine: this very process (not nmt-torch) answers, and it maps no LibTorch.
start_server "$work/serve.log" "$nmt" --engine native -m "$work/model3" --threads 1 -q
[[ $(readlink "/proc/$server/exe") == "$(readlink -f "$nmt")" ]] || { echo "the server is $(readlink "/proc/$server/exe")"; exit 1; }
if grep -E "libtorch|libc10" "/proc/$server/maps"; then echo "nmt serve --engine native mapped LibTorch"; exit 1; fi
first=$(head -n 1 "$src")
expected=$("$full" translate -q --threads 1 --engine native -m "$work/model3" <<< "$first")
got=$(post_translate "$port" "$first")
[[ "$got" == "$expected" ]] || { echo "served '$got', nmt-torch '$expected'"; exit 1; }
echo "launcher_engine: ok"
