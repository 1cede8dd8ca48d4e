#!/usr/bin/env bash
# Starts N ranks of `nmt train` on this machine, as torchrun would: each gets RANK, LOCAL_RANK,
# WORLD_SIZE, MASTER_ADDR and MASTER_PORT, and all meet at 127.0.0.1 (c10d TCPStore + Gloo).
#
#   scripts/launch-local.sh N [train] NMT-TRAIN-OPTIONS...
#   e.g. scripts/launch-local.sh 2 --preset transformer-small --train ../shared/data/multi30k/train \
#            --valid ../shared/data/multi30k/val --out models/t-small-2r --threads 1 --max-time 60m
#
# Rank 0 logs, validates and writes --out; the others stay quiet. $NMT_BIN picks the binary
# (default build/nmt), $MASTER_PORT the port (default: a free one). Ctrl-C reaches every rank
# (rank 0 saves a checkpoint). The exit status is the first failing rank's, else 0.
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# < 1)) || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/launch-local.sh N [train] NMT-TRAIN-OPTIONS..." >&2
  exit 2
fi
world=$1
shift
[[ ${1:-} == train ]] && shift
bin=${NMT_BIN:-build/nmt}
[[ -x $bin ]] || { echo "launch-local: $bin not found; build first (cmake --build build)" >&2; exit 1; }
free_port() {  # the kernel's pick for port 0, else a random high port
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((20000 + RANDOM % 20000))
}
port=${MASTER_PORT:-$(free_port)}

pids=()
for ((rank = 0; rank < world; rank++)); do
  RANK=$rank LOCAL_RANK=$rank WORLD_SIZE=$world MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$bin" train "$@" &
  pids+=($!)
done
forward() { kill -s "$1" "${pids[@]}" 2>/dev/null || true; }
trap 'forward INT' INT
trap 'forward TERM' TERM

status=0
for ((rank = 0; rank < world; rank++)); do
  # `wait` returns early when a trapped signal arrives; wait again for the same rank.
  while true; do
    set +e
    wait "${pids[$rank]}"
    rc=$?
    set -e
    kill -0 "${pids[$rank]}" 2>/dev/null || break
  done
  if ((rc != 0)); then
    echo "launch-local: rank $rank exited with status $rc" >&2
    ((status == 0)) && status=$rc
  fi
done
exit "$status"
