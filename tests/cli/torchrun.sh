#!/usr/bin/env bash
# ctest: PyTorch's own launcher (scripts/torchrun.sh) runs nmt's data-parallel training. `torchrun --no-python
# --nproc-per-node 2 nmt train ...` trains (the launcher serves the rendezvous store; every rank is
# its client), and with --max-restarts 1 a rank killed (SIGKILL) mid-run makes torchrun restart
# the group, which resumes from the last checkpoint: the run ends with the validation loss of an
# uninterrupted one, to the last digit; two torchrun agents with --nnodes 2 at a c10d rendezvous
# (two nodes, here on one machine) end there too. A LibTorch 1.13 build refuses torchrun's store in one line
# instead (its client waited without end). Skipped (77) without Python torch (the wheel's, as
# NMT_SETUP_REFERENCE=1 scripts/setup.sh installs).
#   tests/cli/torchrun.sh NMT_BINARY SOURCE_DIR
set -euo pipefail
nmt=$1 root=$2
source "$root/tests/equivalence/reference_python.sh"
require_python_modules "torch"
work=$(mktemp -d)
trap 'pkill -9 -f -- "--out $work/" 2>/dev/null || true; rm -rf "$work"' EXIT
tiny=$root/data/fixtures/tiny
torchrun=(timeout 300 bash "$root/scripts/torchrun.sh" --no-python --nproc-per-node 2 --monitor-interval 0.5)
train() { # train OUT MAX-RESTARTS
  "${torchrun[@]}" --max-restarts "$2" "$nmt" train --preset transformer-tiny --train "$tiny" --valid "$tiny" --out "$1" \
    --max-steps 2000 --save-every 100 --keep-last 2 --valid-every 2000 --valid-bleu false --threads 1 --device cpu
}
last_val_loss() { grep '"val_loss"' "$1/metrics.jsonl" | tail -n 1 | grep -o '"val_loss":[^,}]*'; }

if [[ "$("$nmt" --version)" =~ LibTorch\ 1\. ]]; then
  if "${torchrun[@]}" --max-restarts 0 "$nmt" train --preset transformer-tiny --train "$tiny" --valid "$tiny" \
      --out "$work/old" --max-steps 5 --device cpu >"$work/log" 2>&1; then
    echo "FAIL: a LibTorch 1.13 build trained under torchrun's store"; exit 1
  fi
  grep -q "needs nmt built against LibTorch 2.x" "$work/log" || { cat "$work/log"; echo "FAIL: no one-line refusal"; exit 1; }
  echo "ok: LibTorch 1.13 refuses torchrun's store in one line"
  exit 0
fi

train "$work/straight" 0 >"$work/straight.log" 2>&1 || { tail -20 "$work/straight.log"; echo "FAIL: torchrun run"; exit 1; }
expected=$(last_val_loss "$work/straight")
[[ -n "$expected" ]] || { echo "FAIL: no validation in the uninterrupted run"; exit 1; }

train "$work/killed" 1 >"$work/killed.log" 2>&1 &
launcher=$!
for _ in $(seq 600); do  # until the first checkpoint is there, at most 60 s
  compgen -G "$work/killed/checkpoints/*" >/dev/null && break
  sleep 0.1
done
victim=$(pgrep -f -- "--out $work/killed" | grep -v "^$launcher\$" | tail -n 1)
[[ -n "$victim" ]] || { echo "FAIL: no rank to kill (the run ended before its first checkpoint?)"; exit 1; }
kill -9 "$victim"
wait "$launcher" || { tail -30 "$work/killed.log"; echo "FAIL: the restarted group did not finish"; exit 1; }
grep -q "resumed from" "$work/killed.log" || { tail -30 "$work/killed.log"; echo "FAIL: the restart did not resume"; exit 1; }
got=$(last_val_loss "$work/killed")
[[ "$got" == "$expected" ]] || { echo "FAIL: killed and restarted: $got, uninterrupted: $expected"; exit 1; }
echo "ok: restarted after a SIGKILL, resumed, and ended at $got as the uninterrupted run"

# Two nodes: two torchrun agents (one rank each, here on one machine) meet at a c10d rendezvous
# (--nnodes 2 --rdzv-backend c10d), as on two hosts: the same job as the first, so the same loss.
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
node() {
  timeout 300 "$py" -m torch.distributed.run --no-python --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d \
    --rdzv-endpoint "127.0.0.1:$port" --rdzv-id "nmt-test-$$" --monitor-interval 0.5 --max-restarts 0 \
    "$nmt" train --preset transformer-tiny --train "$tiny" --valid "$tiny" --out "$work/nodes" \
    --max-steps 2000 --save-every 100 --keep-last 2 --valid-every 2000 --valid-bleu false --threads 1 --device cpu
}
node >"$work/node0.log" 2>&1 &
first=$!
node >"$work/node1.log" 2>&1 || { tail -20 "$work/node1.log"; echo "FAIL: the second node"; exit 1; }
wait "$first" || { tail -20 "$work/node0.log"; echo "FAIL: the first node"; exit 1; }
got=$(last_val_loss "$work/nodes")
[[ "$got" == "$expected" ]] || { echo "FAIL: two nodes: $got, one node: $expected"; exit 1; }
echo "ok: two nodes at a c10d rendezvous ended at $got as one node with two ranks"

