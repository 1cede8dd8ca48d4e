#!/usr/bin/env bash
# nmt's two CPU decoders against each other on the same model directories: the CPU engine
# (--engine native) and LibTorch's (--engine torch), measured alternately in one run (each round
# runs every row on both), median of the rounds, printed as one table with the machine's CPU,
# its vector extensions and each side's kernels. Any model nmt decodes: Transformers, GRUs
# (which CTranslate2 cannot run, so bench-ct2.sh has no row for them), int8 copies.
#
#   scripts/bench/bench-engines.sh MODEL_DIR...   (A+B: the ensemble of A and B)
#
# Rows: model × weights (the directory's own; with NMT_BENCH_INT8=1 also --int8 on fp32 ones) ×
# threads × greedy and beam 5 × batch 64 (the whole source file) and batch 1 (its first 100
# lines). sentences/s exclude model load (`nmt bench translate`); peak RSS is the process's.
# Knobs: NMT_BENCH_ROUNDS (3), NMT_BENCH_THREADS ("1 2"), NMT_BENCH_SRC (test_2016_flickr.en),
# NMT_BENCH_INT8 (0), NMT_BINARY (build/nmt), NMT_DATA.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NMT=${NMT_BINARY:-$ROOT/build/nmt}
DATA=${NMT_DATA:-$ROOT/../shared/data}
SRC=${NMT_BENCH_SRC:-$DATA/multi30k/test_2016_flickr.en}
ROUNDS=${NMT_BENCH_ROUNDS:-3}
read -r -a THREADS <<< "${NMT_BENCH_THREADS:-1 2}"
die() { echo "bench-engines: $*" >&2; exit 2; }
[[ $# -ge 1 ]] || die "usage: $0 MODEL_DIR..."
[[ -x "$NMT" ]] || die "$NMT not found; build first (or set NMT_BINARY)"
[[ -r "$SRC" ]] || die "$SRC not found (set NMT_BENCH_SRC or NMT_DATA)"
for m in "$@"; do
  IFS=+ read -r -a dirs <<< "$m"
  for d in "${dirs[@]}"; do [[ -f "$d/config.json" ]] || die "$d: not a model directory (no config.json)"; done
done
# OpenMP workers (the engine's, and LibTorch's) sleep while they wait, as bench-ct2.sh says why.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
results=$(mktemp)
trap 'rm -f "$results"' EXIT

row() { # row MODEL INT8 THREADS BEAM BATCH ENGINE (MODEL: a directory, or A+B for an ensemble)
  local limit=0 int8=() models=() dir
  [[ $5 == 1 ]] && limit=100
  [[ $2 == 1 ]] && int8=(--int8)
  IFS=+ read -r -a dirs <<< "$1"
  for dir in "${dirs[@]}"; do models+=(-m "$dir"); done
  "$NMT" bench translate "${models[@]}" --src "$SRC" --threads "$3" --beam "$4" --batch-size "$5" --limit "$limit" \
    --engine "$6" "${int8[@]}" 2>/dev/null
}

load_before=$(cut -d' ' -f1 /proc/loadavg)
for ((round = 1; round <= ROUNDS; round++)); do
  for m in "$@"; do
    int8s=(0)
    [[ "${NMT_BENCH_INT8:-0}" == 1 ]] && ! grep -q '"quantization"' "${m%%+*}/config.json" && int8s=(0 1)
    for q in "${int8s[@]}"; do
      for t in "${THREADS[@]}"; do
        for beam in 1 5; do
          for batch in 64 1; do
            printf '[bench-engines %s] round %d/%d: %s%s, %s threads, beam %s, batch %s\n' "$(date +%H:%M:%S)" \
              "$round" "$ROUNDS" "$m" "$([[ $q == 1 ]] && echo ' --int8')" "$t" "$beam" "$batch" >&2
            for engine in torch native; do
              printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$q" "$t" "$beam" "$batch" "$engine" \
                "$(row "$m" "$q" "$t" "$beam" "$batch" "$engine")" >> "$results"
            done
          done
        done
      done
    done
  done
done

python3 - "$results" "$ROUNDS" "$load_before" "$NMT" <<'PYEOF'
import json, statistics, subprocess, sys, os
rows = {}
for line in open(sys.argv[1]):
    m, q, t, beam, batch, engine, js = line.rstrip("\n").split("\t", 6)
    rows.setdefault((m, q, int(t), int(beam), int(batch)), {}).setdefault(engine, []).append(json.loads(js))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
flags = next((l.split(":", 1)[1].split() for l in open("/proc/cpuinfo") if l.startswith("flags")), [])
isa = " ".join(sorted(f for f in flags if f.startswith(("avx", "amx", "fma"))))
first = next(iter(rows.values()))
native = first["native"][0]
version = subprocess.run([sys.argv[4], "--version"], capture_output=True, text=True).stdout.strip()
int8_kernels = sorted({r["int8_kernel"] for v in rows.values() for e in v.values() for r in e if r.get("int8_kernel")})
print(f"CPU: {cpu} ({isa}). {version}; the engine's float32 products: {native.get('gemm_library') or 'n/a'}; "
      f"int8 kernel: {', '.join(int8_kernels) or 'n/a'}; LibTorch's products: its BLAS (nmt bench matmul names it).")
print(f"Median of {sys.argv[2]} alternating rounds; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}; "
      f"load average before/after: {sys.argv[3]} / {open('/proc/loadavg').read().split()[0]}.\n")
print("| model | weights | threads | search | batch | torch sent/s | native sent/s | native / torch | torch RSS MB | native RSS MB |")
print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
for (m, q, t, beam, batch), v in rows.items():
    tr, nr = v.get("torch", []), v.get("native", [])
    if not tr or not nr:
        continue
    ratio = statistics.median(n["sentences_per_s"] / o["sentences_per_s"] for n, o in zip(nr, tr))
    med = lambda rs, f: statistics.median(r[f] for r in rs)
    weights = nr[0]["weights"] + (" (--int8)" if q == "1" else "")
    engines = {r["engine"] for r in nr}
    note = "" if engines == {"native"} else " (fell back to torch)"
    name = "+".join(os.path.basename(d.rstrip("/")) for d in m.split("+"))
    print(f"| {name} ({nr[0]['model']}) | {weights} | {t} | {'greedy' if beam == 1 else f'beam {beam}'} | "
          f"{batch} | {med(tr, 'sentences_per_s'):.1f} | {med(nr, 'sentences_per_s'):.1f}{note} | {ratio:.2f}x | "
          f"{med(tr, 'peak_rss_mb'):.0f} | {med(nr, 'peak_rss_mb'):.0f} |")
PYEOF
