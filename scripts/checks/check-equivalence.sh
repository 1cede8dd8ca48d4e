#!/usr/bin/env bash
# Training equivalence across a refactor: for a fixed seed, two short runs (transformer-tiny and
# gru-tiny, 50 updates each on 3000 Multi30k pairs, 2 threads) must give the same per-update
# losses, the same validation figures and bit-identical weights as a recorded reference.
#   scripts/checks/check-equivalence.sh record DIR   # with the old binary: writes the reference in DIR
#   scripts/checks/check-equivalence.sh check DIR    # with the new binary: reruns and compares
# Losses and learning rates come from OUT/metrics.jsonl (--log-every 1; wall-clock fields
# dropped); weights are compared by the sha256 of the best weights and of every checkpoint's
# model.pt and rng.pt (not optimizer.pt: LibTorch's archive of the Adam state differs in bytes
# from one run of the same binary to the next; the losses after each checkpoint depend on it). About 1 minute of 2-core time. Needs build/nmt, jq and the Multi30k
# mirror ($NMT_DATA or ../shared/data). Exit 0 when everything matches, 1 otherwise.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NMT=${NMT_BINARY:-$ROOT/build/nmt}
DATA=${NMT_DATA:-$ROOT/../shared/data}
MODE=${1:?usage: check-equivalence.sh record|check DIR}
REF=${2:?usage: check-equivalence.sh record|check DIR}
case "$MODE" in record|check) ;; *) echo "check-equivalence.sh: mode must be record or check" >&2; exit 2 ;; esac

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/data"
for lang in en fr; do
  head -n 3000 "$DATA/multi30k/train.$lang" > "$WORK/data/train.$lang"
  head -n 300 "$DATA/multi30k/val.$lang" > "$WORK/data/val.$lang"
done

# One run → NAME.log (stderr), NAME.metrics (deterministic fields of metrics.jsonl), NAME.sha256.
run() {
  local name=$1 preset=$2 dest=$3 out="$WORK/$1"
  "$NMT" train --preset "$preset" --train "$WORK/data/train" --valid "$WORK/data/val" --seed 7 --threads 2 \
    --max-steps 50 --valid-every 25 --save-every 10 --log-every 1 --out "$out" 2> "$dest/$name.log"
  jq -c 'del(.wall_time, .tokens_per_s, .updates_per_s, .all_reduce_s_per_update)' "$out/metrics.jsonl" > "$dest/$name.metrics"
  (cd "$out" && sha256sum model.pt spm.model checkpoints/*/model.pt checkpoints/*/rng.pt) \
    > "$dest/$name.sha256"
}

if [[ $MODE == record ]]; then
  mkdir -p "$REF"
  for spec in transformer:transformer-tiny gru:gru-tiny; do run "${spec%%:*}" "${spec#*:}" "$REF"; done
  echo "recorded in $REF: $(wc -l < "$REF/transformer.metrics") + $(wc -l < "$REF/gru.metrics") metric lines"
  exit 0
fi

mkdir -p "$WORK/now"
status=0
for spec in transformer:transformer-tiny gru:gru-tiny; do
  name=${spec%%:*}
  run "$name" "${spec#*:}" "$WORK/now"
  for kind in metrics sha256; do
    if cmp -s "$REF/$name.$kind" "$WORK/now/$name.$kind"; then
      echo "$name: $kind identical ($(wc -l < "$REF/$name.$kind") lines)"
    else
      echo "$name: $kind DIFFER"
      diff "$REF/$name.$kind" "$WORK/now/$name.$kind" | head -n 10 || true
      status=1
    fi
  done
done
exit $status
