#!/usr/bin/env bash
# Paragraphs against sentences: does a model translate a paragraph as well as its sentences
# given one per line? Paragraphs are three consecutive sentences of Multi30k's val and of a
# Tatoeba sample (one pair in 50), joined with spaces; their references are joined the same
# way. Three systems, each scored on the paragraphs (BLEU and chrF, sacreBLEU's 13a, cased):
#   lines        the sentences one per line, their translations joined afterwards
#   paragraphs   the paragraphs as they are (nmt splits them into sentences)
#   whole        the paragraphs with --whole-lines (each one sentence to the model)
#   moses        the paragraphs split by the Moses splitter (`sentence-splitter` on PyPI, when
#                nmt's venv has it), its sentences translated one per line and joined: what a
#                splitter made for the job gives, beside nmt's own
#
#   scripts/bench/paragraphs-bleu.sh MODEL_DIR [OUT_DIR]      # OUT_DIR: build/bench-paragraphs
# Knobs: BEAM (5), NMT_THREADS (2), NMT_BINARY (build/nmt), NMT_DATA (../shared/data), PYTHON
# (nmt's venv).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "paragraphs-bleu: $*" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 MODEL_DIR [OUT_DIR]"
MODEL=$1
OUT=${2:-$ROOT/build/bench-paragraphs}
NMT=${NMT_BINARY:-$ROOT/build/nmt}
DATA=${NMT_DATA:-$ROOT/../shared/data}
PY=${PYTHON:-$HOME/.cache/nmt/venv/bin/python}
systems="lines paragraphs whole"
[[ -x $PY ]] && "$PY" -c "import sentence_splitter" 2>/dev/null && systems+=" moses"
[[ -d $MODEL ]] || die "$MODEL: no such model directory"
[[ -x $NMT ]] || die "$NMT: no nmt binary (build first, or set NMT_BINARY)"
[[ -f $DATA/multi30k/val.en && -f $DATA/tatoeba-fra-eng/fra.txt ]] || die "$DATA: no Multi30k or Tatoeba (scripts/get-data.sh, or set NMT_DATA)"
mkdir -p "$OUT"
echo "# paragraphs-bleu, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "# $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1); $("$NMT" --version)"
echo "# model $MODEL, beam ${BEAM:-5}"
# Sentences (SET.en, SET.fr) and their paragraphs (SET.para.en, SET.para.fr), three to one.
paragraphs() { awk 'NR % 3 == 1 { p = $0; next } { p = p " " $0 } NR % 3 == 0 { print p }' "$1"; }
cp "$DATA/multi30k/val.en" "$OUT/multi30k-val.en"
cp "$DATA/multi30k/val.fr" "$OUT/multi30k-val.fr"
awk -F'\t' 'NR % 50 == 1 { print $1 > "'"$OUT"'/tatoeba.en"; print $2 > "'"$OUT"'/tatoeba.fr" }' "$DATA/tatoeba-fra-eng/fra.txt"
echo "| set | paragraphs | system | BLEU | chrF |"
echo "|---|---|---|---|---|"
for set in multi30k-val tatoeba; do
  n=$(( $(wc -l < "$OUT/$set.en") / 3 * 3 ))
  for l in en fr; do head -n "$n" "$OUT/$set.$l" > "$OUT/$set.cut.$l"; paragraphs "$OUT/$set.cut.$l" > "$OUT/$set.para.$l"; done
  run() { "$NMT" translate -q -m "$MODEL" --beam "${BEAM:-5}" --threads "${NMT_THREADS:-2}" "$@"; }
  run -i "$OUT/$set.cut.en" -o "$OUT/$set.lines.out"
  paragraphs "$OUT/$set.lines.out" > "$OUT/$set.lines.para"
  run -i "$OUT/$set.para.en" -o "$OUT/$set.paragraphs.para"
  run -i "$OUT/$set.para.en" -o "$OUT/$set.whole.para" --whole-lines
  if [[ $systems == *moses* ]]; then
    # One sentence per line, and per paragraph how many.
    "$PY" -c 'import sys, sentence_splitter
m = sentence_splitter.SentenceSplitter(language="en")
with open(sys.argv[2], "w") as counts:
    for p in open(sys.argv[1], encoding="utf-8"):
        s = m.split(p.rstrip("\n"))
        counts.write(f"{len(s)}\n")
        print("\n".join(s))' "$OUT/$set.para.en" "$OUT/$set.moses.counts" > "$OUT/$set.moses.en"
    run -i "$OUT/$set.moses.en" -o "$OUT/$set.moses.out" --whole-lines
    awk 'NR == FNR { n[FNR] = $1; next } { line = line (k ? " " : "") $0; if (++k == n[p + 1]) { print line; line = ""; k = 0; p++ } }' \
      "$OUT/$set.moses.counts" "$OUT/$set.moses.out" > "$OUT/$set.moses.para"
  fi
  for system in $systems; do
    scores=$("$NMT" bleu "$OUT/$set.para.fr" -i "$OUT/$set.$system.para" -m bleu chrf --score-only -w 2 | tr -d '[],' | tr '\n' ' ')
    read -r bleu chrf <<< "$scores"
    echo "| $set | $((n / 3)) | $system | $bleu | $chrf |"
  done
done
