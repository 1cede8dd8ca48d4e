#!/usr/bin/env bash
# The main job, end to end on a fresh Debian 12 machine: install dependencies, build, get the
# data, train a Transformer on Multi30k en→fr, translate a few sentences, print sacreBLEU.
#   NMT_DEMO_TIME   training time (default 10m; the README's quality figures use 60m)
#   NMT_DEMO_PRESET model preset (default transformer-small; also gru-small)
#   NMT_THREADS     threads (default: all cores)
#   NMT_LIBTORCH    wheel (default: the README's recommended build, into build/) or debian
set -euo pipefail
cd "$(dirname "$0")/.."
time_budget=${NMT_DEMO_TIME:-10m}
preset=${NMT_DEMO_PRESET:-transformer-small}
threads=${NMT_THREADS:-$(nproc)}

step() { printf '\n==> %s\n' "$*"; }

step "1/6 dependencies"
bash scripts/setup.sh

step "2/6 build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$threads" --target nmt_cli

step "3/6 data"
if [[ -n "${NMT_DATA:-}" ]]; then
  data=$NMT_DATA
elif [[ -f ../shared/data/multi30k/train.en ]]; then
  bash scripts/get-data.sh
  data=../shared/data
else
  bash scripts/get-data.sh --dest data/downloaded
  data=data/downloaded
fi
echo "data: $data"

out=models/demo-$preset
step "4/6 train $preset for $time_budget on $threads threads → $out"
# Re-running the same command on the same --out resumes from its last checkpoint.
build/nmt train --preset "$preset" --train "$data/multi30k/train" --valid "$data/multi30k/val" \
  --out "$out" --threads "$threads" --max-time "$time_budget"

step "5/6 translate"
# Each source line, then its translation (no tee to /dev/stderr: reopening that truncates a log
# file that stdout and stderr are both redirected to).
sentences=("A man in a red shirt is riding a bike down the street." "Two dogs are playing in the snow."
  "A little girl is eating an ice cream on a bench.")
translations=$(printf '%s\n' "${sentences[@]}" | build/nmt translate -m "$out" --threads "$threads")
paste -d '\n' <(printf 'en: %s\n' "${sentences[@]}") <(sed 's/^/fr: /' <<< "$translations")

step "6/6 BLEU on test_2016_flickr and test_2017_flickr (sacreBLEU 13a, cased)"
for t in test_2016_flickr test_2017_flickr; do
  echo "$t:"
  build/nmt eval -m "$out" --src "$data/multi30k/$t.en" --ref "$data/multi30k/$t.fr" --threads "$threads"
done
