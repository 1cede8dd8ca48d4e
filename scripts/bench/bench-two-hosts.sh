#!/usr/bin/env bash
# Two hosts, measured on one machine: two network namespaces joined by a veth pair, each running
# one rank of `nmt train` (transformer-small, --threads 1, a prepared Multi30k dataset that each
# "host" reads from its own copy at its own path), with the link limited to 10 and 1 Gbit/s by
# `tc` (tbf; plus 0.2 ms each way with netem where the kernel has it). Prints, per set-up and
# --accum-steps: updates/s, tokens/s (source + target over all ranks), seconds per update in the
# all-reduce (waiting for the slower rank included), and the final validation loss; the 1-host
# rows are one rank on one core. Needs root (ip netns, tc). Run it on an otherwise idle machine.
#
#   sudo bash scripts/bench/bench-two-hosts.sh [NMT]       (default build/nmt)
# Knobs: NMT_TWO_HOSTS_STEPS (30 updates; a quarter of that with --accum-steps 4), NMT_DATA.
# The same effective batch: '1 host, --accum-steps 2' and '2 hosts, --accum-steps 1' make the
# same updates (two batches each, dropout off), so their validation losses must agree.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
nmt="$(realpath "${1:-$root/build/nmt}")"
data="$(realpath "${NMT_DATA:-$root/../shared/data}")/multi30k"
steps="${NMT_TWO_HOSTS_STEPS:-30}"
[[ -x "$nmt" ]] || { echo "bench-two-hosts: $nmt: not an executable" >&2; exit 2; }
source "$root/scripts/checks/two-hosts-lib.bash"

"$nmt" prepare --train "$data/train" -o "$work/data-h0" --vocab-size 8000 -q
cp -r "$work/data-h0" "$work/data-h1"  # the second host's own copy, at another path
common=(--preset transformer-small --valid "$data/val" --threads 1 --log-every 2 --valid-bleu false
        --valid-every 100000 --seed 1 --dropout 0)

summary() {  # OUT: "updates/s tokens/s all-reduce-s val_loss" (median of the windows after the first)
  python3 - "$1/metrics.jsonl" <<'PY'
import json, statistics, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
tr = [e for e in ev if e["event"] == "train"][1:]
val = [e for e in ev if "val_loss" in e]
ar = [e.get("all_reduce_s_per_update", 0.0) for e in tr]
print(f'{statistics.median(e["updates_per_s"] for e in tr):.3f} {statistics.median(e["tokens_per_s"] for e in tr):.0f} '
      f'{statistics.median(ar):.3f} {val[-1]["val_loss"]:.4f}')
PY
}

updates() { if (($1 >= 4)); then echo $((steps / $1)); else echo "$steps"; fi; }

one_host() {  # ACCUM
  local n=$(updates "$1") out="$work/one-$1"
  ip netns exec "$h0" "$nmt" train "${common[@]}" --data "$work/data-h0" --accum-steps "$1" --max-steps "$n" \
    --out "$out" -q
  echo "$(summary "$out")"
}

two_hosts() {  # ACCUM
  local n=$(updates "$1") out="$work/two-$1-$RANDOM"
  rank_on "$h1" 1 10.77.0.1 "$nmt" train "${common[@]}" --data "$work/data-h1" --accum-steps "$1" \
    --max-steps "$n" --out "$out" -q &
  local other=$!
  rank_on "$h0" 0 10.77.0.1 "$nmt" train "${common[@]}" --data "$work/data-h0" --accum-steps "$1" \
    --max-steps "$n" --out "$out" -q
  wait "$other"
  echo "$(summary "$out")"
}

flags="$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|avx512f' | tr '\n' ' ')"
echo "# bench-two-hosts $(date -u +%Y-%m-%d), nmt $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores; $flags); $("$nmt" --version);" \
     "link: veth, limited by tc $([[ $netem == yes ]] && echo 'netem (0.2 ms each way + rate)' || echo 'tbf (rate only: this kernel has no netem, so no added delay)')"
echo "transformer-small, --max-tokens 4096, --threads 1 per rank, dropout 0, $steps updates (--accum-steps 4: $((steps / 4)))"
echo
echo "| set-up | --accum-steps | updates/s | tokens/s | all-reduce s/update | val loss after the run |"
echo "|---|---:|---:|---:|---:|---:|"
row() { read -r u t a v <<< "$3"; echo "| $1 | $2 | $u | $t | $a | $v |"; }
row "1 host, 1 rank" 1 "$(one_host 1)"
row "1 host, 1 rank" 2 "$(one_host 2)"
for rate in "" 10gbit 1gbit; do
  link_limit "$rate"
  for accum in 1 4; do row "2 hosts, ${rate:-unlimited} veth" "$accum" "$(two_hosts "$accum")"; done
done
echo
echo "Same effective batch: '1 host, --accum-steps 2' and '2 hosts, --accum-steps 1' make the same updates"
echo "(two batches each), so their validation losses should agree within noise."
