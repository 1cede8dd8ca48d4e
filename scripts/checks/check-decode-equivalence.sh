#!/usr/bin/env bash
# Decoding outputs that must not change when the decoder's code is refactored: greedy and
# beam-5 translations of test_2016_flickr, and for its first 50 lines a 3-best list with
# scores and the greedy attention, for each model directory given. With NMT_EQUIVALENCE_ALL=1,
# also every writer and request path on those 50 lines: --json with n-best, --alignment,
# --markup, --constraints/--avoid, --prefix-tab, sampling with a seed, no-repeat, nmt score and
# nmt eval (these need a binary that has all of those options).
#
#   scripts/checks/check-decode-equivalence.sh record NMT_BINARY OUT_DIR MODEL_DIR...
#   scripts/checks/check-decode-equivalence.sh compare BEFORE_DIR AFTER_DIR
#
# Record with the old binary, record with the new one, compare: every file must be identical.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
data="${NMT_DATA:-$root/../shared/data}/multi30k"
# The request and writer paths, on the 50 lines SRC: OUT.* files.
record_all() {
  local nmt=$1 model=$2 out=$3 src=$4 t=(-q --threads 2 -m "$2" -i "$4")
  "$nmt" translate "${t[@]}" --beam 4 --nbest 2 --json -o "$out.json"
  "$nmt" translate "${t[@]}" --beam 3 --alignment -o "$out.alignment"
  sed 's/^\([^ ]*\) /<b>\1<\/b> /' "$src" > "$out.marked"
  "$nmt" translate -q --threads 2 -m "$model" -i "$out.marked" --markup -o "$out.markup"
  awk '{print (NR % 3 == 0) ? "la" : ""}' "$src" > "$out.include"
  printf 'un\n' > "$out.avoid"
  "$nmt" translate "${t[@]}" --beam 4 --constraints "$out.include" --avoid "$out.avoid" --json -o "$out.constrained"
  paste "$src" <(awk '{print (NR % 2) ? "Un" : ""}' "$src") > "$out.tab"
  "$nmt" translate -q --threads 2 -m "$model" -i "$out.tab" --prefix-tab -o "$out.prefixed"
  "$nmt" translate "${t[@]}" --sampling top-k:5 --seed 3 -o "$out.sampled"
  "$nmt" translate "${t[@]}" --no-repeat-ngram 2 --beam 2 -o "$out.norepeat"
  "$nmt" score -q --threads 2 -m "$model" --src "$src" --tgt "$out.norepeat" --per-token -o "$out.score"
  "$nmt" eval -q --threads 2 -m "$model" --src "$src" --ref "$out.norepeat" --no-record > "$out.eval"
  rm "$out.marked" "$out.include" "$out.avoid" "$out.tab"
}

case "${1:-}" in
  record)
    [ $# -ge 4 ] || { echo "usage: $0 record NMT_BINARY OUT_DIR MODEL_DIR..." >&2; exit 2; }
    nmt="$2"; out="$3"; shift 3
    mkdir -p "$out"
    src="$data/test_2016_flickr.en"
    [ -r "$src" ] || { echo "$0: $src not found (set NMT_DATA)" >&2; exit 2; }
    for model in "$@"; do
      name="$(basename "$model")"
      "$nmt" translate -q --threads 2 -m "$model" -i "$src" -o "$out/$name.greedy"
      "$nmt" translate -q --threads 2 -m "$model" -i "$src" --beam 5 -o "$out/$name.beam5"
      head -50 "$src" > "$out/$name.src50"
      "$nmt" translate -q --threads 2 -m "$model" -i "$out/$name.src50" --beam 5 --nbest 3 -o "$out/$name.nbest3"
      "$nmt" translate -q --threads 2 -m "$model" -i "$out/$name.src50" --attention "$out/$name.attention.jsonl" \
        -o "$out/$name.attention.out"
      if grep -q '"type": "transformer"' "$model/config.json"; then
        "$nmt" translate -q --threads 2 -m "$model" -i "$out/$name.src50" --attention-layer 0 --attention-head 1 \
          --attention "$out/$name.attention-l0h1.jsonl" -o "$out/$name.attention-l0h1.out"
      fi
      [ "${NMT_EQUIVALENCE_ALL:-0}" = 1 ] && record_all "$nmt" "$model" "$out/$name" "$out/$name.src50"
      rm "$out/$name.src50"
      echo "$name: $(wc -l < "$out/$name.greedy") lines recorded"
    done ;;
  compare)
    [ $# -eq 3 ] || { echo "usage: $0 compare BEFORE_DIR AFTER_DIR" >&2; exit 2; }
    status=0
    for f in "$2"/*; do
      name="$(basename "$f")"
      if cmp -s "$f" "$3/$name"; then echo "identical: $name"
      else echo "DIFFERENT: $name ($(diff <(cat "$f") <(cat "$3/$name" 2>/dev/null) | grep -c '^<') lines)"; status=1; fi
    done
    exit $status ;;
  *) echo "usage: $0 record NMT_BINARY OUT_DIR MODEL_DIR... | compare BEFORE_DIR AFTER_DIR" >&2; exit 2 ;;
esac
