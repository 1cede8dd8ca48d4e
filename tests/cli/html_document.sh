#!/usr/bin/env bash
# `nmt translate --format html` on a page (data/fixtures/page.html): Python's own HTML parser
# finds the same tags, attributes, comments and kept text (script, style, code, pre,
# translate="no") in the translation as in the page, and its text translated.
#   html_document.sh NMT_BINARY SOURCE_DIR
set -euo pipefail
nmt=$1 root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$nmt" train --preset transformer-tiny --train "$root/data/fixtures/tiny" --valid "$root/data/fixtures/tiny" \
  --out "$work/model" --max-steps 100 --valid-every 100 --seed 3 --threads 1 -q
"$nmt" translate -q --threads 1 -m "$work/model" -i "$root/data/fixtures/page.html" -o "$work/page.fr.html"
python3 "$root/tests/equivalence/html_structure.py" "$root/data/fixtures/page.html" "$work/page.fr.html"
# The text was translated: the heading is not the English one any more.
! grep -q "<h1>Two dogs are playing in the snow</h1>" "$work/page.fr.html"
# A file that is not UTF-8 is refused in one line naming it, and no output is written.
printf '<p>caf\xe9</p>' > "$work/latin1.html"
if "$nmt" translate -q -m "$work/model" -i "$work/latin1.html" -o "$work/out.html" 2> "$work/err"; then
  echo "a Latin-1 page was accepted"; exit 1
fi
grep -q "latin1.html: not valid UTF-8" "$work/err" || { cat "$work/err"; exit 1; }
[[ ! -e $work/out.html ]]
# Options that write lines are refused with a document.
if "$nmt" translate -q -m "$work/model" -i "$root/data/fixtures/page.html" --json 2> "$work/err"; then exit 1; fi
grep -q "does not take --json" "$work/err"
echo "html_document: ok"
