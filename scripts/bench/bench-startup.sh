#!/usr/bin/env bash
# Time to first translation and peak memory: one sentence through each way of translating it,
# from process start to its output line, model load included (what every `echo ... | nmt
# translate` in a script pays), and the process's peak RSS (GNU time's %M). Rows:
#   nmt --engine native     `nmt` itself on the CPU engine: no LibTorch loaded (app/launcher/main.cc)
#   nmt-torch --engine native   the same engine inside the LibTorch binary (LibTorch loaded)
#   nmt --engine torch      LibTorch's decoder (handed to nmt-torch)
#   CTranslate2             scripts/ct2_translate.py on the converted weights, from Python
# for float32 and int8 (nmt quantize's copy; CTranslate2's int8 conversion), median of alternating rounds,
# with the ratio to CTranslate2 measured in the same rounds.
#
#   NMT_BENCH_MODEL=runs/tsmall scripts/bench/bench-startup.sh
#
# Prerequisites: NMT_LIBTORCH=wheel NMT_SETUP_BENCH=1 scripts/setup.sh and a build. Knobs:
# NMT_BENCH_ROUNDS (5), NMT_BENCH_THREADS (1), NMT_BENCH_OUT (build/bench-startup), NMT_BINARY
# (build/nmt).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODEL=${NMT_BENCH_MODEL:-}
NMT=${NMT_BINARY:-$ROOT/build/nmt}
FULL="$(dirname "$NMT")/nmt-torch"
PY=$(bash "$ROOT/scripts/nmt-python.sh")
ROUNDS=${NMT_BENCH_ROUNDS:-5}
THREADS=${NMT_BENCH_THREADS:-1}
OUT=${NMT_BENCH_OUT:-$ROOT/build/bench-startup}
die() { echo "bench-startup: $*" >&2; exit 2; }
[[ -n "$MODEL" && -f "$MODEL/config.json" ]] || die "set NMT_BENCH_MODEL to a model directory (config.json not found)"
[[ -f "$MODEL/model.safetensors" ]] || die "$MODEL has no model.safetensors: run nmt upgrade $MODEL first"
[[ -x "$NMT" && -x "$FULL" ]] || die "$NMT or $FULL not found; build first"
[[ -x /usr/bin/time ]] || die "GNU time (/usr/bin/time) not found: apt-get install time"
if ! "$PY" -c 'import torch' 2>/dev/null; then
  home=$(bash "$ROOT/scripts/torch-home.sh")
  export PYTHONPATH="$home:$home-cuda-deps${PYTHONPATH:+:$PYTHONPATH}"
fi
mkdir -p "$OUT"
type=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["model"]["type"])' "$MODEL/config.json")
ct2=0
if [[ $type == transformer ]] && "$PY" -c 'import ctranslate2, sentencepiece' 2>/dev/null; then
  "$PY" "$ROOT/scripts/nmt_to_ctranslate2.py" "$MODEL" -o "$OUT/ct2-float32" --force 2>/dev/null
  "$PY" "$ROOT/scripts/nmt_to_ctranslate2.py" "$MODEL" -o "$OUT/ct2-int8" --quantization int8 --force 2>/dev/null
  ct2=1
fi
"$FULL" quantize "$MODEL" -o "$OUT/nmt-int8" --force 2> /dev/null
declare -A NMT_DIR=([float32]="$MODEL" [int8]="$OUT/nmt-int8")
RES="$OUT/results.jsonl"
: > "$RES"
sentence="A man is riding a bike down the street."
# run KEY COMMAND...: seconds and peak RSS (KiB) of one sentence through COMMAND.
run() {
  local key=$1
  shift
  echo "$sentence" | /usr/bin/time -f '%e %M' -o "$OUT/time" "$@" > "$OUT/line" 2> "$OUT/err" ||
    { cat "$OUT/err" >&2; die "$key failed"; }
  [[ -s "$OUT/line" ]] || die "$key printed nothing"
  read -r secs kib < "$OUT/time"
  printf '{"key": "%s", "seconds": %s, "rss_kib": %s}\n' "$key" "$secs" "$kib" >> "$RES"
}
for ((round = 1; round <= ROUNDS; round++)); do
  for p in float32 int8; do
    common=(translate -q -m "${NMT_DIR[$p]}" --threads "$THREADS")
    run "$p/nmt native" "$NMT" "${common[@]}" --engine native
    run "$p/nmt-torch native" "$FULL" "${common[@]}" --engine native
    run "$p/nmt torch" "$NMT" "${common[@]}" --engine torch
    ((ct2)) && run "$p/CTranslate2" "$PY" "$ROOT/scripts/ct2_translate.py" "$OUT/ct2-$p" --threads "$THREADS"
  done
done
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
isa=$(grep -o -w -E 'avx2|fma|avx512[a-z_0-9]*|avx_vnni|amx[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' ')
ct2_version=$("$PY" -c 'import ctranslate2; print(ctranslate2.__version__)' 2>/dev/null || echo "n/a")
"$PY" - "$RES" "$cpu" "$isa" "$("$FULL" --version)" "$ct2_version" "$(git -C "$ROOT" rev-parse --short HEAD)" "$ROUNDS" "$THREADS" "$MODEL" <<'PY' | tee "$OUT/table.md"
import json, statistics, sys
res_path, cpu, isa, nmt, ct2, commit, rounds, threads, model = sys.argv[1:]
rows = {}
for line in open(res_path):
    r = json.loads(line)
    rows.setdefault(r["key"], []).append(r)
print(f"CPU: {cpu} ({isa.strip()}); {nmt}; CTranslate2 {ct2}; commit {commit}; model {model}; "
      f"{threads} thread(s); median of {rounds} alternating rounds; one sentence, process start to output.\n")
print("| weights | how | seconds to first translation | / CTranslate2 | peak RSS MB | / CTranslate2 |")
print("|---|---|---:|---:|---:|---:|")
for key, runs in rows.items():
    p, how = key.split("/", 1)
    secs = statistics.median(r["seconds"] for r in runs)
    rss = statistics.median(r["rss_kib"] for r in runs) / 1024
    ref = rows.get(f"{p}/CTranslate2")
    if ref and how != "CTranslate2":
        # the ratio within each round, then the median: load drift moves both alike
        s_ratio = statistics.median(a["seconds"] / b["seconds"] for a, b in zip(runs, ref))
        m_ratio = statistics.median(a["rss_kib"] / b["rss_kib"] for a, b in zip(runs, ref))
        ratios = (f"{s_ratio:.2f}", f"{m_ratio:.2f}")
    else:
        ratios = ("", "")
    print(f"| {p} | {how} | {secs:.3f} | {ratios[0]} | {rss:.0f} | {ratios[1]} |")
PY
