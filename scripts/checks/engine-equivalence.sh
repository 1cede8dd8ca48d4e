#!/usr/bin/env bash
# The CPU engine against LibTorch's decoder on real models: `nmt translate --engine native` and
# `nmt-torch translate --engine torch`, greedy and beam 5, on the first N lines of a source file
# (Multi30k's val, 1,000 lines, by default), and one Markdown row per model and search: lines,
# the same tokens, different ones, how many of those are ties within 1e-5 of log-probability
# (scripts/checks/engine_equivalence.py says how each is checked), the largest per-token
# log-probability difference where the tokens agree, and the largest gap where they part.
#
#   scripts/checks/engine-equivalence.sh SPEC...
#
# A SPEC is a model directory (an int8 one from `nmt quantize` too) or several joined by + (an
# ensemble: A+B). Knobs: NMT_EQUIV_LINES (1000), NMT_EQUIV_SRC (val.en), NMT_BINARY (build/nmt;
# nmt-torch beside it), NMT_DATA, NMT_EQUIV_THREADS (2).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
nmt=${NMT_BINARY:-$root/build/nmt}
torch="$(dirname "$nmt")/nmt-torch"
src=${NMT_EQUIV_SRC:-${NMT_DATA:-$root/../shared/data}/multi30k/val.en}
lines=${NMT_EQUIV_LINES:-1000}
threads=${NMT_EQUIV_THREADS:-2}
die() { echo "engine-equivalence: $*" >&2; exit 2; }
[[ $# -ge 1 ]] || die "usage: $0 SPEC... (a model directory, or A+B for an ensemble)"
[[ -x $nmt && -x $torch ]] || die "$nmt and nmt-torch beside it are needed (a LibTorch build)"
[[ -r $src ]] || die "$src not found (set NMT_EQUIV_SRC or NMT_DATA)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -n "$lines" "$src" > "$work/src"
# The -m flags of a SPEC.
model_flags() {
  local spec=$1 part flags=()
  IFS=+ read -r -a parts <<< "$spec"
  for part in "${parts[@]}"; do
    [[ -f $part/config.json ]] || die "$part: not a model directory"
    flags+=(-m "$part")
  done
  echo "${flags[@]}"
}
echo "Engine equivalence, $(date -u +%F), commit $(git -C "$root" rev-parse --short HEAD), $lines lines of $(basename "$src")"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'); $("$nmt" --version)"
echo "Command: scripts/checks/engine-equivalence.sh $*"
echo
echo "| model | search | lines | same tokens | different | ties ≤ 1e-5 | not ties | unverified | max Δ log-prob (same tokens) | max gap (different) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
status=0
for spec in "$@"; do
  read -r -a m <<< "$(model_flags "$spec")"
  for search in greedy "beam 5"; do
    s=(); [[ $search == greedy ]] || s=(--beam 5)
    out="$work/run"
    common=(-q --threads "$threads" "${m[@]}" "${s[@]}")
    "$nmt" translate "${common[@]}" --engine native --json -i "$work/src" -o "$out.native.json"
    "$torch" translate "${common[@]}" --engine torch --json -i "$work/src" -o "$out.torch.json"
    python3 "$root/scripts/checks/engine_equivalence.py" differences "$out.native.json" "$out.torch.json" "$work/src" "$out"
    # Each hypothesis scored on the other engine (forced decoding, per token).
    "$nmt" score -q --threads "$threads" "${m[@]}" --engine native --per-token --src "$out.src" --tgt "$out.torch" \
      -o "$out.torch_on_native"
    "$torch" score -q --threads "$threads" "${m[@]}" --engine torch --per-token --src "$out.src" --tgt "$out.native" \
      -o "$out.native_on_torch"
    python3 "$root/scripts/checks/engine_equivalence.py" table "$spec" "$search" "$out.native.json" "$out.torch.json" \
      "$out" 0.6 || status=1
  done
done
exit $status
