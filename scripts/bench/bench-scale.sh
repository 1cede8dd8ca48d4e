#!/usr/bin/env bash
# Corpora larger than memory, measured: for synthetic corpora of 30 k, 1 M, 10 M and 40 M pairs
# (scripts/gen/synth_corpus.py: Multi30k's and Tatoeba's pairs recombined, seeded, written to a
# scratch file that is deleted after use), prints per size: `nmt prepare`'s time and peak RSS,
# the dataset's size on disk, and for `nmt train --data` (transformer-small, 2 threads) its
# start-up (process start to the first update done), peak RSS and tokens/s; at 30 k also the
# in-memory text path's tokens/s on the same corpus.
#
#   bash scripts/bench/bench-scale.sh [NMT]        (default build/nmt)
# Knobs: NMT_SCALE_SIZES ("30000 1000000 10000000 40000000"), NMT_SCALE_STEPS (60 updates per
# training), NMT_SCALE_WORK (scratch directory, default /tmp/nmt-bench-scale: needs ~10 GB for
# 40 M pairs), NMT_DATA (../shared/data).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
nmt="$(realpath "${1:-$root/build/nmt}")"
data="$(realpath "${NMT_DATA:-$root/../shared/data}")"
work="${NMT_SCALE_WORK:-/tmp/nmt-bench-scale}"
sizes="${NMT_SCALE_SIZES:-30000 1000000 10000000 40000000}"
steps="${NMT_SCALE_STEPS:-60}"
[[ -x "$nmt" ]] || { echo "bench-scale: $nmt: not an executable (build first)" >&2; exit 2; }
[[ -f "$data/multi30k/val.en" ]] || { echo "bench-scale: $data/multi30k: missing (scripts/get-data.sh)" >&2; exit 2; }
[[ "$steps" =~ ^[0-9]+$ && "$steps" -ge 10 ]] || { echo "bench-scale: NMT_SCALE_STEPS must be a number >= 10" >&2; exit 2; }
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1
flags="$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|avx512f|avx512_vnni|fma' | tr '\n' ' ')"
echo "# bench-scale $(date -u +%Y-%m-%d), nmt $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores; ${flags:-no AVX2}), $(free -g | awk '/^Mem/ {print $2}') GiB;" \
     "$("$nmt" --version); OpenBLAS kernels: ${OPENBLAS_CORETYPE:-library default}; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "training: transformer-small, --max-tokens 4096, --threads 2, $steps updates; tokens/s = median of the logged windows after the first 10 updates"
echo
echo "| pairs | prepare | prepare peak RSS | dataset on disk | train start-up | train peak RSS | tokens/s |"
echo "|---:|---:|---:|---:|---:|---:|---:|"

# "SECONDS MAX_RSS_KB" of a command (stdout and stderr to $2).
timed() {
  local log="$1"; shift
  /usr/bin/time -f '%e %M' -o "$log.time" "$@" > "$log" 2>&1 || { echo "bench-scale: failed: $* (see below)" >&2; tail -5 "$log" >&2; exit 1; }
  cat "$log.time"
}

train_row() {  # DATA_ARGS... ; prints "STARTUP RSS_MB TOKENS_PER_S"
  local out="$work/run"
  rm -rf "$out"
  read -r _ rss < <(timed "$work/train.log" "$nmt" train --preset transformer-small "$@" --valid "$data/multi30k/val" \
    --max-steps "$steps" --log-every 5 --valid-every 100000 --valid-bleu false --threads 2 --seed 1 --out "$out")
  python3 - "$work/train.log" "$out/metrics.jsonl" "$rss" <<'PY'
import json, re, statistics, sys
log, metrics, rss = sys.argv[1], sys.argv[2], int(sys.argv[3])
startup = re.search(r"first update done ([0-9.]+) s after the process started", open(log).read())
tps = [e["tokens_per_s"] for e in map(json.loads, open(metrics)) if e.get("event") == "train" and e["step"] > 10]
print(f"{float(startup.group(1)):.1f} {rss / 1024:.0f} {statistics.median(tps):.0f}")
PY
}

for n in $sizes; do
  python3 "$root/scripts/gen/synth_corpus.py" "$n" 1 "$data" > "$work/corpus.tsv"
  read -r p_secs p_rss < <(timed "$work/prepare.log" "$nmt" prepare --train-tsv "$work/corpus.tsv" -o "$work/d" \
    --vocab-size 8000 --sample-sentences 200000 --threads 2)
  disk=$(du -sb "$work/d" | cut -f1)
  read -r t_start t_rss t_tps < <(train_row --data "$work/d")
  printf '| %s | %.0f s | %.0f MB | %.0f MB | %s s | %s MB | %s |\n' "$n" "$p_secs" "$((p_rss / 1024))" \
    "$(python3 -c "print($disk / 1e6)")" "$t_start" "$t_rss" "$t_tps"
  if [[ "$n" -le 100000 ]]; then
    read -r m_start m_rss m_tps < <(train_row --train-tsv "$work/corpus.tsv" --vocab-size 8000)
    printf '| %s, text in memory | | | | %s s | %s MB | %s (%s of --data) |\n' "$n" "$m_start" "$m_rss" "$m_tps" \
      "$(python3 -c "print(f'{$m_tps / $t_tps:.3f}x')")"
  fi
  rm -rf "$work/d" "$work/corpus.tsv"
done
