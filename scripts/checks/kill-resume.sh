#!/usr/bin/env bash
# Crash-safety check at full scale: trains transformer-small for STEPS updates once without
# interruption and, at the same time, once SIGKILLed KILLS times at random moments (each time
# resumed by re-running the same command), then compares the final weights and checkpoints bit
# for bit. The two runs use one thread each, side by side on the two cores.
#   scripts/checks/kill-resume.sh [STEPS=250] [KILLS=5] [WORKDIR=runs/kill-resume]
# 250 updates of transformer-small take about 20 minutes on one thread. Needs build/nmt and the
# Multi30k mirror ($NMT_DATA or ../shared/data); compares tensors with /usr/bin/python3 + torch
# when the files differ as bytes.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NMT=${NMT_BINARY:-$ROOT/build/nmt}
DATA=${NMT_DATA:-$ROOT/../shared/data}
STEPS=${1:-250}
KILLS=${2:-5}
WORK=${3:-$ROOT/runs/kill-resume}
rm -rf "$WORK"
mkdir -p "$WORK"
cmd=("$NMT" train --preset transformer-small --train "$DATA/multi30k/train" --valid "$DATA/multi30k/val"
     --threads 1 --max-steps "$STEPS" --valid-every 100 --save-every 10 --log-every 10 --seed 7)
log() { printf '[kill-resume %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

log "uninterrupted run: $STEPS updates (in the background)"
"${cmd[@]}" --out "$WORK/straight" > "$WORK/straight.log" 2>&1 &
straight_pid=$!

# Kill moments: a random 20-100 s after each (re)start (a start loads data and subwords for
# a few seconds), until KILLS kills have landed; then the run is let finish.
log "interrupted run: $KILLS SIGKILLs at random moments"
kills_done=0
attempt=0
while true; do
  attempt=$((attempt + 1))
  "${cmd[@]}" --out "$WORK/killed" >> "$WORK/killed.log" 2>&1 &
  pid=$!
  if (( kills_done < KILLS )); then
    delay=$(( 20 + RANDOM % 81 ))
    for ((s = 0; s < delay; s++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid"
      wait "$pid" 2>/dev/null || true
      kills_done=$((kills_done + 1))
      last=$(ls "$WORK/killed/checkpoints" 2>/dev/null | tail -n 1)
      log "kill $kills_done after ${delay}s (newest checkpoint: ${last:-none})"
      continue
    fi
  fi
  wait "$pid"
  log "interrupted run finished after $kills_done kills ($attempt starts)"
  break
done
wait "$straight_pid"
log "uninterrupted run finished"

status=0
last_ckpt=checkpoints/$(cd "$WORK/straight/checkpoints" && ls -d step-* | tail -n 1)
for f in model.pt "$last_ckpt/model.pt" "$last_ckpt/optimizer.pt" "$last_ckpt/state.json"; do
  if [[ $f == *state.json ]]; then
    # Everything but the wall-clock fields (elapsed, wall_time) must agree.
    strip() { python3 -c 'import json,sys
def clean(x):
    if isinstance(x, dict): return {k: clean(v) for k, v in x.items() if k not in ("elapsed", "wall_time")}
    if isinstance(x, list): return [clean(v) for v in x]
    return x
print(json.dumps(clean(json.load(open(sys.argv[1]))), sort_keys=True))' "$1"; }
    if [[ "$(strip "$WORK/straight/$f")" == "$(strip "$WORK/killed/$f")" ]]; then
      log "identical apart from wall-clock times: $f"
    else
      log "DIFFERENT: $f"
      status=1
    fi
  elif cmp -s "$WORK/straight/$f" "$WORK/killed/$f"; then
    log "identical bytes: $f"
  elif [[ $f == *.pt ]] && /usr/bin/python3 - "$WORK/straight/$f" "$WORK/killed/$f" <<'PY'
import sys, torch
a, b = torch.jit.load(sys.argv[1]), torch.jit.load(sys.argv[2])
sa = {**dict(a.named_parameters()), **dict(a.named_buffers())}
sb = {**dict(b.named_parameters()), **dict(b.named_buffers())}
ok = sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
print(f"{len(sa)} tensors, bit-identical: {ok}")
sys.exit(0 if ok else 1)
PY
  then
    log "identical tensors: $f"
  else
    log "DIFFERENT: $f"
    status=1
  fi
done
grep -h "stopped\|validation" "$WORK/straight.log" | tail -n 2
grep -h "stopped\|validation" "$WORK/killed.log" | tail -n 2
exit $status
