#!/usr/bin/env bash
# ctest: a Transformer converted by scripts/nmt_to_ctranslate2.py translates in CTranslate2
# exactly as in nmt (greedy, nmt's length rule), post-norm with tied output and pre-norm with
# two layers each side. Models: transformer-tiny trained 30 updates on 2,000 Multi30k pairs
# (seconds). Skipped (77) without Multi30k or without Python ctranslate2, sentencepiece and
# torch (installed by NMT_SETUP_REFERENCE=1 scripts/setup.sh, as CI's wheel build does).
#   tests/equivalence/ct2_equivalence.sh NMT_BINARY SOURCE_DIR
set -euo pipefail
nmt=$1 root=$2
data=${NMT_DATA:-$root/../shared/data}/multi30k
[[ -f $data/train.en && -f $data/test_2016_flickr.en ]] || { echo "skipped: no Multi30k under $data"; exit 77; }
source "$root/tests/equivalence/reference_python.sh"
require_python_modules "torch ctranslate2 sentencepiece"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -n 2000 "$data/train.en" > "$work/train.en"
head -n 2000 "$data/train.fr" > "$work/train.fr"
head -n 100 "$data/test_2016_flickr.en" > "$work/test.en"
head -n 100 "$data/test_2016_flickr.fr" > "$work/test.fr"
for variant in "post --pre-norm false" "pre --pre-norm true --encoder-layers 2 --decoder-layers 2"; do
  read -r name options <<< "$variant"
  # shellcheck disable=SC2086
  "$nmt" train -q --preset transformer-tiny $options --train "$work/train" --vocab-size 1000 --max-steps 30 \
    --valid-bleu false --threads 1 -o "$work/$name"
  "$py" "$root/scripts/nmt_to_ctranslate2.py" "$work/$name" -o "$work/$name-ct2" 2>/dev/null
  # Every line equal (these models have no near-ties on 100 lines); the BLEU gap then is 0.
  "$py" "$root/scripts/ct2_check.py" --model "$work/$name" --ct2 "$work/$name-ct2" --src "$work/test.en" \
    --ref "$work/test.fr" --out "$work/$name-check" --nmt "$nmt" --threads 1 --min-equal 1 --max-bleu-gap 0
done
