#!/usr/bin/env bash
# How to spend N cores on one training: one process on N threads, or N data-parallel ranks of one
# thread each (scripts/launch-local.sh). Trains each preset on Multi30k from the same seed four
# ways, alternating within each round, and prints one table of medians with the CPU, its flags,
# the BLAS kernels, the LibTorch and the commit:
#   1 process × N threads, B-token batches                          (the plain `nmt train`)
#   N ranks × 1 thread, B/N tokens each: the same B tokens per update (the same recipe, faster?)
#   N ranks × 1 thread, B tokens each: N·B tokens per update
#   N separate trainings × 1 thread, B tokens each, no synchronisation (N models; the ceiling)
# Rates come from metrics.jsonl (rank 0's log: updates/s and source + target tokens/s of all
# ranks), the mean of the log windows after the first, which holds the warm-up.
#
#   bash scripts/bench/bench-train-ranks.sh                          # Debian's LibTorch (build/nmt)
#   NMT_LIBTORCH=wheel bash scripts/bench/bench-train-ranks.sh       # the wheel's LibTorch (build-wheel/nmt)
#
# Knobs: NMT_BENCH_PRESETS ("gru-small-1h transformer-small"), NMT_BENCH_THREADS (N, 2),
# NMT_BENCH_TOKENS (B, 2500), NMT_BENCH_STEPS (updates per training, 100, logged every 20),
# NMT_BENCH_ROUNDS (2), NMT_BENCH_OUT (BUILD/bench-train-ranks), NMT_DATA, NMT_BINARY.
# Run it on an otherwise idle machine (docs/performance.md, "Measuring"): ~25 minutes on 2 cores.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/scripts/bench/bench-libtorch.bash"  # NMT, BUILD
DATA=${NMT_DATA:-$ROOT/../shared/data}
N=${NMT_BENCH_THREADS:-2}
B=${NMT_BENCH_TOKENS:-2500}
STEPS=${NMT_BENCH_STEPS:-100}
ROUNDS=${NMT_BENCH_ROUNDS:-2}
read -r -a PRESETS <<<"${NMT_BENCH_PRESETS:-gru-small-1h transformer-small}"
OUT=${NMT_BENCH_OUT:-$BUILD/bench-train-ranks}
TRAIN=$DATA/multi30k/train

die() { echo "bench-train-ranks: $*" >&2; exit 2; }   # a bad setting
fail() { echo "bench-train-ranks: $*" >&2; exit 1; }  # a failure while measuring
log() { printf '[bench-train-ranks %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
{ [[ $N =~ ^[1-9][0-9]*$ ]] && ((N >= 2)); } || die "NMT_BENCH_THREADS must be a number of at least 2, not '$N'"
{ [[ $B =~ ^[1-9][0-9]*$ ]] && ((B >= 2 * N)); } || die "NMT_BENCH_TOKENS must be a number of at least $((2 * N)), not '$B'"
{ [[ $STEPS =~ ^[1-9][0-9]*$ ]] && ((STEPS >= 40)); } || die "NMT_BENCH_STEPS must be a number of at least 40, not '$STEPS'"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "NMT_BENCH_ROUNDS must be a positive number, not '$ROUNDS'"
((${#PRESETS[@]} > 0)) || die "NMT_BENCH_PRESETS names no preset"
[[ -x $NMT ]] || die "$NMT not found; build first"
[[ -f $TRAIN.en && -f $DATA/multi30k/val.en ]] || die "Multi30k not found under $DATA (set NMT_DATA)"
known=$("$NMT" train --help | sed -n 's/.*--preset TEXT *Recipe: //p')
for p in "${PRESETS[@]}"; do
  [[ " $known" == *" $p ("* ]] || die "unknown preset '$p' in NMT_BENCH_PRESETS"
done
RES=$OUT/results.jsonl
{ mkdir -p "$OUT" && : >"$RES"; } 2>/dev/null || fail "cannot write $RES (NMT_BENCH_OUT)"
load=$(cut -d ' ' -f 1-3 /proc/loadavg)
peak=$("$NMT" bench matmul --threads 1) || fail "nmt bench matmul failed"

rate() {  # DIR → {"updates_per_s": mean, "tokens_per_s": mean} over the log windows after the first; fails without one
  python3 - "$1/metrics.jsonl" 2>/dev/null <<'PY'
import json, sys
train = [e for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "train"][1:]
if not train:
    sys.exit(1)
mean = lambda k: sum(e[k] for e in train) / len(train)
print(json.dumps({"updates_per_s": mean("updates_per_s"), "tokens_per_s": mean("tokens_per_s")}))
PY
}
record() {  # KEY ROUND JSON
  printf '{"key": "%s", "round": %s, "result": %s}\n' "$1" "$2" "$3" 2>/dev/null >>"$RES" || fail "cannot write $RES (full disk?)"
}
measure() {  # KEY ROUND DIR: records the rates of the training in DIR
  local rates
  rates=$(rate "$3") || fail "$1: no rate in $3/metrics.jsonl"
  record "$1" "$2" "$rates"
}
train_args() {  # PRESET THREADS TOKENS SEED DIR
  echo --preset "$1" --train "$TRAIN" --valid "$DATA/multi30k/val" --threads "$2" --max-tokens "$3" --seed "$4" \
    --out "$5" --max-steps "$STEPS" --log-every 20 --valid-bleu false --save-every 0 -q
}

for round in $(seq 1 "$ROUNDS"); do
  for p in "${PRESETS[@]}"; do
    w=$OUT/$p
    rm -rf "$w" && mkdir -p "$w"
    log "round $round/$ROUNDS: $p, 1 process × $N threads"
    # shellcheck disable=SC2046  # train_args' words are paths without spaces under OUT and DATA
    "$NMT" train $(train_args "$p" "$N" "$B" 1 "$w/one") 2>"$w/one.log" || fail "$p: nmt train failed: $(tail -n 1 "$w/one.log")"
    measure "$p/one" "$round" "$w/one"
    log "round $round/$ROUNDS: $p, $N ranks × 1 thread, $((B / N)) tokens each"
    # shellcheck disable=SC2046
    NMT_BIN=$NMT bash "$ROOT/scripts/launch-local.sh" "$N" $(train_args "$p" 1 $((B / N)) 1 "$w/ranks-split") \
      2>"$w/ranks-split.log" || fail "$p: $N ranks failed: $(tail -n 1 "$w/ranks-split.log")"
    measure "$p/ranks-split" "$round" "$w/ranks-split"
    log "round $round/$ROUNDS: $p, $N ranks × 1 thread, $B tokens each"
    # shellcheck disable=SC2046
    NMT_BIN=$NMT bash "$ROOT/scripts/launch-local.sh" "$N" $(train_args "$p" 1 "$B" 1 "$w/ranks-full") \
      2>"$w/ranks-full.log" || fail "$p: $N ranks failed: $(tail -n 1 "$w/ranks-full.log")"
    measure "$p/ranks-full" "$round" "$w/ranks-full"
    log "round $round/$ROUNDS: $p, $N separate trainings × 1 thread"
    pids=()
    for ((k = 1; k <= N; k++)); do
      # shellcheck disable=SC2046
      "$NMT" train $(train_args "$p" 1 "$B" "$k" "$w/separate-$k") 2>"$w/separate-$k.log" &
      pids+=($!)
    done
    for ((k = 1; k <= N; k++)); do
      wait "${pids[k - 1]}" || fail "$p: separate training $k failed: $(tail -n 1 "$w/separate-$k.log")"
    done
    sep=$(for ((k = 1; k <= N; k++)); do rate "$w/separate-$k" || exit 1; done | python3 -c '
import json, sys
runs = [json.loads(line) for line in sys.stdin]
print(json.dumps({"updates_per_s": min(r["updates_per_s"] for r in runs), "tokens_per_s": sum(r["tokens_per_s"] for r in runs)}))') ||
      fail "$p: no rate in the separate trainings' metrics.jsonl"
    record "$p/separate" "$round" "$sep"
  done
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
isa=$(grep -o -w -E 'avx2|fma|avx512f|avx512_vnni|avx_vnni|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')
python3 - "$RES" "$N" "$B" "$STEPS" "$cpu" "$isa" "$("$NMT" --version)" "$(git -C "$ROOT" rev-parse --short HEAD)" \
  "$load" "$peak" >"$OUT/table.md" <<'PY' || fail "cannot write $OUT/table.md (full disk?)"
import json, statistics, sys
res = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    res.setdefault(j["key"], []).append(j["result"])
n, b, steps, cpu, isa, version, commit, load, peak = sys.argv[2:11]
n, b = int(n), int(b)
peak = json.loads(peak)
blas = peak.get("blas_core") or "LibTorch's own BLAS (MKL in the PyTorch wheel)"
rounds = len(next(iter(res.values())))
print(f"CPU: {cpu} ({isa.strip()}); {version}; commit {commit}; load average before: {load}.")
print(f"BLAS kernels: {blas}; one thread's float32 matrix-product peak {peak['peak_gflops']:.1f} GFLOP/s. "
      f"{steps} updates per training, the first 20 left out; medians of {rounds} alternating rounds.\n")
rows = [("one", f"1 process × {n} threads", b), ("ranks-split", f"{n} ranks × 1 thread, {b // n} tokens each", b // n * n),
        ("ranks-full", f"{n} ranks × 1 thread, {b} tokens each", n * b),
        ("separate", f"{n} separate trainings × 1 thread (no synchronisation; {n} models)", b)]
print("| preset | arrangement | tokens per update | updates/s | tokens/s (all processes) | updates/s against 1 process | tokens/s against 1 process |")
print("|---|---|---:|---:|---:|---:|---:|")
presets = list(dict.fromkeys(k.split("/")[0] for k in res))
med = lambda key, field: statistics.median(r[field] for r in res[key])
for p in presets:
    u1, t1 = med(f"{p}/one", "updates_per_s"), med(f"{p}/one", "tokens_per_s")
    for key, what, tokens in rows:
        u, t = med(f"{p}/{key}", "updates_per_s"), med(f"{p}/{key}", "tokens_per_s")
        each = " (the slower model)" if key == "separate" else ""
        print(f"| {p} | {what} | {tokens:,} | {u:.3f}{each} | {t:,.0f} | {u / u1:.2f}× | {t / t1:.2f}× |")
print()
print("Per round, updates/s of " + f"{n} ranks with {b // n} tokens each against 1 process: " + "; ".join(
    f"{p} " + ", ".join(f"{s['updates_per_s'] / o['updates_per_s']:.2f}" for s, o in zip(res[f'{p}/ranks-split'], res[f'{p}/one']))
    for p in presets) + ".")
PY
cat "$OUT/table.md"
log "results in $OUT (results.jsonl, table.md)"
