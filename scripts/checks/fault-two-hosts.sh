#!/usr/bin/env bash
# Faults of a two-host `nmt train --data` job, on one machine (two network namespaces joined by a
# veth pair, scripts/checks/two-hosts-lib.bash): for each case, prints how each rank ended (exit status),
# how long after the fault both had ended, and their one-line errors. Cases: a truncated shard,
# a missing shard and a dataset of another corpus on host 1 only; a rank whose rendezvous
# address is unreachable; the link dropped mid-step, then the same command run again after the
# link is back (it must resume from the last checkpoint). Needs root. --dist-timeout is 20 s
# here (default 1800 s, PyTorch's): it bounds how long a rank waits for a silent peer.
#
#   sudo bash scripts/checks/fault-two-hosts.sh [NMT]       (default build/nmt)
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
nmt="$(realpath "${1:-$root/build/nmt}")"
data="$(realpath "${NMT_DATA:-$root/../shared/data}")/multi30k"
[[ -x "$nmt" ]] || { echo "fault-two-hosts: $nmt: not an executable" >&2; exit 2; }
source "$root/scripts/checks/two-hosts-lib.bash"

"$nmt" prepare --train "$data/train" -o "$work/data-h0" --vocab-size 8000 -q || exit 1
head -n 5000 "$data/train.en" > "$work/other.en" && head -n 5000 "$data/train.fr" > "$work/other.fr"
"$nmt" prepare --train "$work/other" --subword-model "$work/data-h0/spm.model" -o "$work/data-other" -q || exit 1
common=(--preset transformer-tiny --valid "$data/val" --threads 1 --valid-bleu false --valid-every 100000
        --save-every 20 --dist-timeout 20 --seed 1)
copy() { rm -rf "$work/data-h1" && cp -r "$work/data-h0" "$work/data-h1"; }
now() { date +%s.%N; }
error_of() { grep -m1 -h 'error:' "$1" | cut -c1-200; }

# start OUT DATA1 ADDR1 ARGS...: rank 0 on host 0, rank 1 on host 1 (its data and rendezvous address)
start() {
  local out=$1 data1=$2 addr1=$3
  shift 3
  rank_on "$h1" 1 "$addr1" "$nmt" train "${common[@]}" --data "$data1" --out "$out" "$@" > "$work/r1.log" 2>&1 &
  p1=$!
  rank_on "$h0" 0 10.77.0.1 "$nmt" train "${common[@]}" --data "$work/data-h0" --out "$out" "$@" > "$work/r0.log" 2>&1 &
  p0=$!
}
finish() {  # CASE T_FAULT: wait for both ranks, print the row
  wait "$p0"; local s0=$?
  wait "$p1"; local s1=$?
  local secs
  secs=$(python3 -c "print(f'{$(now) - $2:.1f}')")
  echo "| $1 | $s0 / $s1 | $secs s | rank 0: $(error_of "$work/r0.log") <br> rank 1: $(error_of "$work/r1.log") |"
}

echo "# fault-two-hosts $(date -u +%Y-%m-%d), nmt $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $("$nmt" --version)"
echo
echo "| case | exit rank 0 / rank 1 | both ended after | errors |"
echo "|---|---|---|---|"

copy
f=$(ls "$work/data-h1"/shard-*.nmtds | head -1)
truncate -s -100 "$f"
t=$(now); start "$work/run-trunc" "$work/data-h1" 10.77.0.1 --max-steps 50; finish "host 1's first shard truncated" "$t"

copy
rm "$f"
t=$(now); start "$work/run-missing" "$work/data-h1" 10.77.0.1 --max-steps 50; finish "host 1's first shard missing" "$t"

t=$(now); start "$work/run-other" "$work/data-other" 10.77.0.1 --max-steps 50; finish "host 1 holds another dataset" "$t"

copy
t=$(now); start "$work/run-unreach" "$work/data-h1" 10.77.0.9 --max-steps 50; finish "rank 1's rendezvous address unreachable" "$t"

out="$work/run-drop"
start "$out" "$work/data-h1" 10.77.0.1 --max-steps 100000
for _ in $(seq 600); do compgen -G "$out/checkpoints/step-*/manifest.json" > /dev/null && break; sleep 0.2; done
sleep 1
ip -n "$h0" link set veth0 down
t=$(now); finish "link dropped mid-step (after the first checkpoint)" "$t"
ip -n "$h0" link set veth0 up
last=$(ls -d "$out"/checkpoints/step-* | grep -v '\.' | sort | tail -1)
steps=$((10#${last##*step-} + 10))
t=$(now); start "$out" "$work/data-h1" 10.77.0.1 --max-steps "$steps"
wait "$p0"; s0=$?; wait "$p1"; s1=$?
echo "| the same command again, link back | $s0 / $s1 | $(python3 -c "print(f'{$(now) - $t:.1f}')") s |" \
     "$(grep -q "resumed from" "$work/r0.log" && echo "resumed from $(basename "$last")" || echo "did NOT resume"), " \
     "$([[ -d "$out/checkpoints/step-$(printf %08d "$steps")" ]] && echo "ended at step $steps" || echo "did NOT reach step $steps") |"
