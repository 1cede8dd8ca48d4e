#!/usr/bin/env bash
# nmt's sentence splitter (text/sentence_split.h) against the Moses splitter (`sentence-splitter`
# on PyPI) and pysbd on paragraphs of known sentences: scripts/bench/sentence_split_eval.py says
# which. Prints one Markdown table.
#
#   scripts/bench/sentence-split.sh
# Knobs: NMT_BUILD (build), NMT_DATA (../shared/data), PYTHON (nmt's venv, else python3; it
# needs `pip install sentence-splitter pysbd`).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "sentence-split: $*" >&2; exit 2; }
SPLIT=${NMT_BUILD:-$ROOT/build}/tests/nmt_split_sentences
DATA=${NMT_DATA:-$ROOT/../shared/data}
PY=${PYTHON:-$HOME/.cache/nmt/venv/bin/python}
[[ -x $PY ]] || PY=python3
[[ -x $SPLIT ]] || die "$SPLIT: missing (build the tests first, or set NMT_BUILD)"
[[ -f $DATA/multi30k/val.en && -f $DATA/tatoeba-fra-eng/fra.txt ]] || die "$DATA: no Multi30k or Tatoeba (scripts/get-data.sh, or set NMT_DATA)"
"$PY" -c "import pysbd, sentence_splitter" 2>/dev/null || die "$PY: needs pysbd and sentence-splitter (pip install sentence-splitter pysbd)"
echo "# sentence-split, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "# ICU $(pkg-config --modversion icu-uc 2>/dev/null || echo '?'), $("$PY" -c 'import importlib.metadata as m; print("sentence-splitter", m.version("sentence-splitter"), "pysbd", m.version("pysbd"))')"
"$PY" "$ROOT/scripts/bench/sentence_split_eval.py" "$SPLIT" "$DATA" "$ROOT/data/fixtures/paragraphs.en"
