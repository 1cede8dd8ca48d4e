#!/usr/bin/env bash
# The share of translations whose markup survives `nmt translate --markup`: every tag of the
# source present once and the output well-formed, checked by scripts/bench/markup_eval.py with Python's
# html.parser (not nmt's own code). Two sets: data/fixtures/markup.en (40 hand-written captions,
# 4 of them unbalanced on purpose) and test_2017_flickr's 1,000 English sources tagged at random
# (seeded: 1-3 nested or disjoint pairs of <b>/<i>/<u>/<a href>, <x id="N"/> and <br> between
# words), sentences the repository's tests never saw.
#
#   scripts/bench/bench-markup.sh MODEL_DIR [OUT_DIR]          # OUT_DIR: build/bench-markup
# Knobs: BEAM (5), NMT_THREADS (2), SEED (1), NMT_BINARY (build/nmt), NMT_DATA (../shared/data).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "bench-markup: $*" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 MODEL_DIR [OUT_DIR]"
MODEL=$1
OUT=${2:-$ROOT/build/bench-markup}
NMT=${NMT_BINARY:-$ROOT/build/nmt}
DATA=${NMT_DATA:-$ROOT/../shared/data}/multi30k
[[ -d $MODEL ]] || die "$MODEL: no such model directory"
[[ -x $NMT ]] || die "$NMT: no nmt binary (build first, or set NMT_BINARY)"
[[ -f $DATA/test_2017_flickr.en ]] || die "$DATA/test_2017_flickr.en: missing (scripts/get-data.sh, or set NMT_DATA)"
mkdir -p "$OUT"
echo "# bench-markup, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "# $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1); $("$NMT" --version)"
echo "# model $MODEL, beam ${BEAM:-5}, seed ${SEED:-1}"
cp "$ROOT/data/fixtures/markup.en" "$OUT/fixture.tagged"
python3 "$ROOT/scripts/bench/markup_eval.py" make "$DATA/test_2017_flickr.en" "${SEED:-1}" > "$OUT/test_2017.tagged"
for set in fixture test_2017; do
  "$NMT" translate -m "$MODEL" --markup --beam "${BEAM:-5}" --threads "${NMT_THREADS:-2}" \
    --input "$OUT/$set.tagged" --output "$OUT/$set.out" 2> "$OUT/$set.log"
  echo "$set: $(python3 "$ROOT/scripts/bench/markup_eval.py" check "$OUT/$set.tagged" "$OUT/$set.out" | head -n 1); $(grep -c '^warning' "$OUT/$set.log" || true) warnings"
done
