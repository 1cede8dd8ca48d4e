#!/usr/bin/env bash
# The data-parallel speed target: training tokens/s of 2 ranks × --threads 1 against 1 rank ×
# --threads 1 on transformer-small (Multi30k), same seed and data, no validation BLEU. Prints
# both rates (source + target tokens per second over all ranks, mean of the log windows after
# the first, which holds the warm-up) and their ratio; the issue's target is ≥ 1.6.
#
#   bash scripts/dist-speed.sh [STEPS]        (default 60 updates each; run on a quiet machine)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-60}
data=${NMT_DATA:-../shared/data}/multi30k
work=$(mktemp -d /tmp/nmt-dist-speed-XXXXXX)
trap 'rm -rf "$work"' EXIT
common=(--preset transformer-small --train "$data/train" --valid "$data/val" --threads 1 --max-steps "$steps"
        --log-every 10 --valid-bleu false --valid-every 100000 --seed 1)

rate() {  # mean tokens_per_s of the train windows after the first
  python3 - "$1/metrics.jsonl" <<'PY'
import json, sys
rates = [j["tokens_per_s"] for j in map(json.loads, open(sys.argv[1])) if j["event"] == "train"][1:]
print(f"{sum(rates) / len(rates):.0f}")
PY
}

build/nmt train "${common[@]}" --out "$work/one" -q
one=$(rate "$work/one")
bash scripts/launch-local.sh 2 "${common[@]}" --out "$work/two" -q
two=$(rate "$work/two")
python3 -c "print(f'1 rank: {$one} tok/s   2 ranks: {$two} tok/s   ratio {$two / $one:.2f}')"
