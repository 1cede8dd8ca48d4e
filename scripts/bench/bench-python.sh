#!/usr/bin/env bash
# nmt from Python against nmt itself and CTranslate2 (issue 70): sentences/s of
# nmt.Translator.translate_batch (scripts/bench/bench_python.py), of `nmt bench translate
# --engine native` (the same engine from C++) and of ctranslate2.Translator (scripts/ct2_translate.py
# --bench, on the same weights converted by scripts/nmt_to_ctranslate2.py), on the same sentences,
# each after loading the model and one untimed sentence; `import nmt` alone; median of alternating
# rounds, ratios within each round.
#
#   NMT_BENCH_MODEL=runs/tsmall NMT_BENCH_PYTHON_PKG=~/venv/bin/python3 scripts/bench/bench-python.sh
#
# NMT_BENCH_PYTHON_PKG: a Python where `pip install .` installed nmt. Knobs: NMT_BENCH_ROUNDS (3),
# NMT_BENCH_THREADS ("1 2"), NMT_BENCH_BATCHES ("64 1": batch 1 on the first 100 sentences),
# NMT_BENCH_SRC (Multi30k test_2016_flickr.en), NMT_BINARY (build/nmt), NMT_BENCH_OUT
# (build/bench-python).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODEL=${NMT_BENCH_MODEL:-}
PKG_PY=${NMT_BENCH_PYTHON_PKG:-}
NMT=${NMT_BINARY:-$ROOT/build/nmt}
PY=$(bash "$ROOT/scripts/nmt-python.sh")
DATA=${NMT_DATA:-$ROOT/../shared/data}
SRC=${NMT_BENCH_SRC:-$DATA/multi30k/test_2016_flickr.en}
ROUNDS=${NMT_BENCH_ROUNDS:-3}
read -r -a THREADS <<< "${NMT_BENCH_THREADS:-1 2}"
read -r -a BATCHES <<< "${NMT_BENCH_BATCHES:-64 1}"
OUT=${NMT_BENCH_OUT:-$ROOT/build/bench-python}
die() { echo "bench-python: $*" >&2; exit 2; }
log() { printf '[bench-python %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
[[ -n "$MODEL" && -f "$MODEL/model.safetensors" ]] || die "set NMT_BENCH_MODEL to a model directory with model.safetensors"
[[ -n "$PKG_PY" ]] && "$PKG_PY" -c 'import nmt._translate' 2>/dev/null ||
  die "set NMT_BENCH_PYTHON_PKG to a Python where pip install . installed nmt (with the translator)"
[[ -x "$NMT" ]] || die "$NMT not found; build first"
[[ -f "$SRC" ]] || die "$SRC not found (set NMT_DATA or NMT_BENCH_SRC)"
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}  # as bench-ct2.sh, for both engines
mkdir -p "$OUT"
ct2=0
if "$PY" -c 'import ctranslate2, sentencepiece' 2>/dev/null; then
  if ! "$PY" -c 'import torch' 2>/dev/null; then
    home=$(bash "$ROOT/scripts/torch-home.sh")
    export PYTHONPATH="$home:$home-cuda-deps${PYTHONPATH:+:$PYTHONPATH}"
  fi
  "$PY" "$ROOT/scripts/nmt_to_ctranslate2.py" "$MODEL" -o "$OUT/ct2" --force 2>/dev/null && ct2=1
fi
RES="$OUT/results.jsonl"
: > "$RES"
record() { printf '{"key": "%s", "result": %s}\n' "$1" "$2" >> "$RES"; }
for ((round = 1; round <= ROUNDS; round++)); do
  for t in "${THREADS[@]}"; do
    for b in "${BATCHES[@]}"; do
      limit=0
      [[ $b == 1 ]] && limit=100
      log "round $round/$ROUNDS: $t thread(s), batch $b"
      record "t$t/b$b/python" "$(PYTHONPATH= "$PKG_PY" "$ROOT/scripts/bench/bench_python.py" "$MODEL" "$SRC" --threads "$t" \
        --batch-size "$b" --limit "$limit")"
      record "t$t/b$b/nmt" "$("$NMT" bench translate -m "$MODEL" --src "$SRC" --threads "$t" --batch-size "$b" \
        --limit "$limit" --engine native)"
      if ((ct2)); then
        record "t$t/b$b/ct2" "$("$PY" "$ROOT/scripts/ct2_translate.py" "$OUT/ct2" --bench -i "$SRC" --threads "$t" \
          --batch-size "$b" --limit "$limit")"
      fi
    done
  done
  record "import" "$(PYTHONPATH= "$PKG_PY" "$ROOT/scripts/bench/bench_python.py" --import-time)"
done
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
isa=$(grep -o -w -E 'avx2|fma|avx512[a-z_0-9]*|avx_vnni|amx[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' ')
"$PY" - "$RES" "$cpu" "$isa" "$("$NMT" --version)" "$("$PY" -c 'import ctranslate2; print(ctranslate2.__version__)' 2>/dev/null || echo n/a)" \
  "$(git -C "$ROOT" rev-parse --short HEAD)" "$ROUNDS" "$MODEL" <<'PY' | tee "$OUT/table.md"
import json, statistics, sys
path, cpu, isa, nmt, ct2, commit, rounds, model = sys.argv[1:]
res = {}
for line in open(path):
    j = json.loads(line)
    res.setdefault(j["key"], []).append(j["result"])
print(f"CPU: {cpu} ({isa.strip()}); {nmt}; CTranslate2 {ct2}; commit {commit}; model {model}; greedy; "
      f"median of {rounds} alternating rounds; sentences/s exclude model load.\n")
print("| threads | batch | Python sent/s | nmt sent/s | Python / nmt | CT2 sent/s | Python / CT2 |")
print("|---:|---:|---:|---:|---:|---:|---:|")
keys = sorted({k.rsplit("/", 1)[0] for k in res if k.startswith("t")}, key=lambda k: (int(k.split("/")[0][1:]), -int(k.split("/")[1][1:])))
def ratio(a, b):
    if a not in res or b not in res:
        return "n/a"
    return f"{statistics.median(x['sentences_per_s'] / y['sentences_per_s'] for x, y in zip(res[a], res[b])):.2f}"
for k in keys:
    t, b = k.split("/")
    sps = lambda impl: (f"{statistics.median(r['sentences_per_s'] for r in res[f'{k}/{impl}']):.1f}"
                        if f"{k}/{impl}" in res else "n/a")
    print(f"| {t[1:]} | {b[1:]} | {sps('python')} | {sps('nmt')} | {ratio(k + '/python', k + '/nmt')} | {sps('ct2')} | "
          f"{ratio(k + '/python', k + '/ct2')} |")
imports = [r["import_seconds"] for r in res.get("import", [])]
if imports:
    print(f"\n`import nmt`: {statistics.median(imports) * 1000:.0f} ms (median of {len(imports)}).")
PY
