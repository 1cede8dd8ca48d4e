#!/usr/bin/env bash
# The data-parallel loss-curve check: the validation loss (per target token) of 2 ranks ×
# --threads 1 against 1 process that sees both ranks' batches each update (--accum-steps 2),
# on transformer-small (Multi30k), same seed, validation every 25 updates. Data parallelism
# must not change what is learned: prints both curves side by side and the largest gap.
#
#   bash scripts/checks/dist-curve.sh [STEPS]        (default 200 updates; timing plays no part)
set -euo pipefail
cd "$(dirname "$0")/../.."
steps=${1:-200}
data=${NMT_DATA:-../shared/data}/multi30k
work=$(mktemp -d /tmp/nmt-dist-curve-XXXXXX)
trap 'rm -rf "$work"' EXIT
common=(--preset transformer-small --train "$data/train" --valid "$data/val" --threads 1 --max-steps "$steps"
        --log-every 25 --valid-bleu false --valid-every 25 --seed 1)

build/nmt train "${common[@]}" --accum-steps 2 --out "$work/one" -q
bash scripts/launch-local.sh 2 "${common[@]}" --out "$work/two" -q
python3 - "$work/one/metrics.jsonl" "$work/two/metrics.jsonl" <<'PY'
import json, sys
def curve(path):
    return {j["step"]: j["val_loss"] for j in map(json.loads, open(path)) if j["event"] == "valid"}
one, two = curve(sys.argv[1]), curve(sys.argv[2])
print("| update | 1 process, --accum-steps 2 | 2 ranks | difference |")
print("|---|---|---|---|")
gap = 0.0
for step in sorted(set(one) & set(two)):
    d = two[step] - one[step]
    gap = max(gap, abs(d))
    print(f"| {step} | {one[step]:.4f} | {two[step]:.4f} | {d:+.4f} |")
print(f"largest |difference|: {gap:.4f} nats per token")
PY
