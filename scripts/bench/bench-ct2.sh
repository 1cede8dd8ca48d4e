#!/usr/bin/env bash
# nmt against CTranslate2 on the same trained Transformer (issue #18): the model is converted by
# scripts/nmt_to_ctranslate2.py (same weights), both translate the same input with the same
# thread counts, measured alternately (each round runs every row once, nmt then CTranslate2),
# and the median of the rounds is printed as one table, with BLEU and line equality.
#
#   NMT_BENCH_CT2_MODEL=runs/tsmall scripts/bench/bench-ct2.sh
#
# Rows: float32 and int8 weights × threads (1 and 2) × greedy and beam 5 × batch 64 (the whole
# test_2016_flickr, 1,000 sentences) and batch 1 (its first 100), plus CTranslate2's token-budget
# batching at batch 64. Columns: sentences/s and target subwords/s (translation alone, model
# load excluded, after one untimed sentence: `nmt bench translate` and scripts/ct2_translate.py
# --bench), peak RSS of the process, and time to first translation (one line through `nmt
# translate` / scripts/ct2_translate.py, process start to output, model load included).
# nmt's int8 model is `nmt quantize`'s; where this nmt has no quantize, its int8 rows say n/a.
#
# Prerequisites: `NMT_LIBTORCH=wheel NMT_SETUP_BENCH=1 scripts/setup.sh` (CTranslate2, SentencePiece,
# and the wheel's Python PyTorch that the converter reads model.pt with) and a build.
# Knobs: NMT_BENCH_ROUNDS (3), NMT_BENCH_THREADS ("1 2"), NMT_BENCH_PRECISIONS ("float32 int8"),
# NMT_BENCH_SEARCHES ("greedy beam5"), NMT_BENCH_CT2_TOKENS (token budget, 2048), NMT_BENCH_ALPHA
# (0), NMT_BENCH_ENGINE (nmt's --engine: auto, native or torch; auto), NMT_BENCH_OUT (build/bench-ct2), NMT_BENCH_TABLE_ONLY (1: only the table of the results
# already in NMT_BENCH_OUT, e.g. of an interrupted run), NMT_BINARY (build/nmt), NMT_PYTHON
# (python3), NMT_DATA.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODEL=${NMT_BENCH_CT2_MODEL:-}
NMT=${NMT_BINARY:-$ROOT/build/nmt}
PY=$(bash "$ROOT/scripts/nmt-python.sh")
DATA=${NMT_DATA:-$ROOT/../shared/data}
ROUNDS=${NMT_BENCH_ROUNDS:-3}
read -r -a THREADS <<< "${NMT_BENCH_THREADS:-1 2}"
read -r -a PRECISIONS <<< "${NMT_BENCH_PRECISIONS:-float32 int8}"
read -r -a SEARCHES <<< "${NMT_BENCH_SEARCHES:-greedy beam5}"
TOKENS=${NMT_BENCH_CT2_TOKENS:-2048}
# Beam search ranks by log-probability alone on both sides (α = 0): nmt's GNMT penalty
# ((5 + len) / 6)^α and CTranslate2's len^α differ for any other α, and so would the searches.
ALPHA=${NMT_BENCH_ALPHA:-0}
ENGINE=${NMT_BENCH_ENGINE:-auto}
OUT=${NMT_BENCH_OUT:-$ROOT/build/bench-ct2}
# OpenMP workers (CTranslate2's; nmt's OpenBLAS uses pthreads and ignores it) sleep rather than
# spin while they wait: on this shared 2-core machine under load (average 4-6), CTranslate2 with 2
# threads did 13-50 sentences/s spinning and 207-214 passive (transformer-small, greedy, batch 64).
# Set OMP_WAIT_POLICY=active to measure spinning workers on an idle machine.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
SRC="$DATA/multi30k/test_2016_flickr.en"
REF="$DATA/multi30k/test_2016_flickr.fr"
CT2="$ROOT/scripts/ct2_translate.py"

die() { echo "bench-ct2: $*" >&2; exit 2; }
log() { printf '[bench-ct2 %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
[[ -n "$MODEL" ]] || die "set NMT_BENCH_CT2_MODEL to a trained nmt Transformer directory"
[[ -f "$MODEL/model.pt" ]] || die "$MODEL/model.pt not found"
[[ -x "$NMT" ]] || die "$NMT not found; build first"
[[ -f "$SRC" && -f "$REF" ]] || die "test_2016_flickr not found under $DATA/multi30k (set NMT_DATA)"
# The converter reads model.pt with PyTorch: the wheel's Python side unless $PY has its own.
if ! "$PY" -c 'import torch' 2>/dev/null; then
  home=$(bash "$ROOT/scripts/torch-home.sh")
  export PYTHONPATH="$home:$home-cuda-deps${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" -c 'import torch, ctranslate2, sentencepiece' 2>/dev/null ||
  die "$PY cannot import torch, ctranslate2 and sentencepiece; run NMT_LIBTORCH=wheel NMT_SETUP_BENCH=1 scripts/setup.sh"
mkdir -p "$OUT"
RES="$OUT/results.jsonl"
record() { printf '{"key": "%s", "result": %s}\n' "$1" "$2" >> "$RES"; }

measure() {
  : > "$RES"
  # Models: CTranslate2's int8 is its own quantisation at conversion (int8 weights, float32
  # activations elsewhere: "int8_float32", what it selects on a CPU); nmt's is `nmt quantize`'s.
  log "converting $MODEL (float32 and int8)"
  "$PY" "$ROOT/scripts/nmt_to_ctranslate2.py" "$MODEL" -o "$OUT/ct2-float32" --force 2>/dev/null
  "$PY" "$ROOT/scripts/nmt_to_ctranslate2.py" "$MODEL" -o "$OUT/ct2-int8" --quantization int8 --force 2>/dev/null
  declare -A NMT_DIR=([float32]="$MODEL")
  if "$NMT" --help | grep -q -E "^ +quantize "; then
    "$NMT" quantize "$MODEL" -o "$OUT/nmt-int8" --force 2> "$OUT/nmt-quantize.log"
    NMT_DIR[int8]="$OUT/nmt-int8"
  else
    log "this nmt has no 'quantize': its int8 rows are n/a"
  fi

  # The machine: CPU, ISA, nmt's OpenBLAS kernels, CTranslate2's ISA and GEMM backends.
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
  isa=$(grep -o -w -E 'avx2|fma|avx512[a-z_0-9]*|avx_vnni|amx[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' ')
  # Each thread count's float32 and int8 matrix-product peaks: the decoding rows' share of theirs is a
  # column; the last thread count's measurement also names the BLAS kernels for the table's header.
  for t in "${THREADS[@]}"; do
    blas=$("$NMT" bench matmul --threads "$t")
    record "peak/t$t" "$blas"
  done
  ct2_info=$(CT2_VERBOSE=1 "$PY" -c "import ctranslate2; ctranslate2.Translator('$OUT/ct2-int8', compute_type='int8')" 2>&1 |
    sed -n 's/.*\[info\] *-* *//p' | grep -E 'Selected ISA|SGEMM|GEMM_S8|Intel MKL' | tr '\n' ';')
  # nmt quantize names its int8 kernel on stderr ("... int8 kernel on this CPU: NAME").
  nmt_int8=""
  [[ -f "$OUT/nmt-quantize.log" ]] && nmt_int8=$(sed -n 's/.*int8 kernel on this CPU: *//p' "$OUT/nmt-quantize.log" | tail -n 1)
  record machine "$("$PY" -c 'import json, os, sys; print(json.dumps({"cpu": sys.argv[1], "isa": sys.argv[2], "blas": json.loads(sys.argv[3]), "ct2": sys.argv[4], "nmt": sys.argv[5], "ct2_version": sys.argv[6], "nmt_int8": sys.argv[7], "load": open("/proc/loadavg").read().split()[0], "omp_wait": os.environ.get("OMP_WAIT_POLICY"), "engine": sys.argv[8]}))' \
    "$cpu" "$isa" "$blas" "$ct2_info" "$("$NMT" --version)" "$("$PY" -c 'import ctranslate2; print(ctranslate2.__version__)')" "${nmt_int8:-n/a}" "$ENGINE")"

  nmt_row() { # nmt_row PRECISION THREADS SEARCH BATCH
    local beam=1 limit=0
    [[ $3 == beam5 ]] && beam=5
    [[ $4 == 1 ]] && limit=100
    "$NMT" bench translate -m "${NMT_DIR[$1]}" --src "$SRC" --threads "$2" --batch-size "$4" --limit "$limit" \
      --beam "$beam" --alpha "$ALPHA" --engine "$ENGINE"
  }
  ct2_row() { # ct2_row PRECISION THREADS SEARCH BATCH [tokens]
    local beam=1 limit=0 batch=(--batch-size "$4")
    [[ $3 == beam5 ]] && beam=5
    [[ $4 == 1 ]] && limit=100
    [[ ${5:-} == tokens ]] && batch=(--batch-size "$TOKENS" --batch-type tokens)
    "$PY" "$CT2" "$OUT/ct2-$1" --bench -i "$SRC" --threads "$2" "${batch[@]}" --limit "$limit" --beam "$beam" \
      --alpha "$ALPHA"
  }
  seconds_to_first_line() { # seconds_to_first_line COMMAND...
    local start end
    start=$(date +%s.%N)
    echo "A man is riding a bike." | "$@" > /dev/null
    end=$(date +%s.%N)
    "$PY" -c "print(round($end - $start, 3))"
  }

  for ((round = 1; round <= ROUNDS; round++)); do
    for p in "${PRECISIONS[@]}"; do
      for t in "${THREADS[@]}"; do
        for s in "${SEARCHES[@]}"; do
          for b in 64 1; do
            log "round $round/$ROUNDS: $p, $t threads, $s, batch $b"
            if [[ -n "${NMT_DIR[$p]:-}" ]]; then record "$p/t$t/$s/b$b/nmt" "$(nmt_row "$p" "$t" "$s" "$b")"; fi
            record "$p/t$t/$s/b$b/ct2" "$(ct2_row "$p" "$t" "$s" "$b")"
          done
          if [[ $t == "${THREADS[-1]}" ]]; then record "$p/t$t/$s/tokens/ct2" "$(ct2_row "$p" "$t" "$s" 64 tokens)"; fi
        done
        if [[ -n "${NMT_DIR[$p]:-}" ]]; then
          record "$p/t$t/first/nmt" "$(seconds_to_first_line "$NMT" translate -q -m "${NMT_DIR[$p]}" --threads "$t" --engine "$ENGINE")"
        fi
        record "$p/t$t/first/ct2" "$(seconds_to_first_line "$PY" "$CT2" "$OUT/ct2-$p" --threads "$t")"
      done
    done
  done

  # Quality: greedy BLEU of each engine and precision, and line equality at float32.
  log "quality: greedy translations of test_2016_flickr"
  "$PY" "$ROOT/scripts/ct2_check.py" --model "$MODEL" --ct2 "$OUT/ct2-float32" --src "$SRC" --ref "$REF" \
    --out "$OUT/check-float32" --nmt "$NMT" --threads "${THREADS[-1]}" > /dev/null || true
  record "float32/quality" "$(cat "$OUT/check-float32/summary.json")"
  if [[ " ${PRECISIONS[*]} " == *" int8 "* ]]; then
    "$PY" "$ROOT/scripts/ct2_check.py" --model "${NMT_DIR[int8]:-$MODEL}" --ct2 "$OUT/ct2-int8" --src "$SRC" --ref "$REF" \
      --out "$OUT/check-int8" --nmt "$NMT" --threads "${THREADS[-1]}" > /dev/null || true
    record "int8/quality" "$(cat "$OUT/check-int8/summary.json")"
    if [[ -z "${NMT_DIR[int8]:-}" ]]; then record "int8/quality_nmt_missing" true; fi
  fi
}
# NMT_BENCH_TABLE_ONLY=1: only the table, from the results an earlier (or interrupted) run left.
[[ "${NMT_BENCH_TABLE_ONLY:-0}" == 1 ]] || measure

"$PY" - "$RES" "$ROUNDS" "$TOKENS" <<'PYEOF' | tee "$OUT/table.md"
import json, statistics, sys
res = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    res.setdefault(j["key"], []).append(j["result"])
rounds, tokens = sys.argv[2], sys.argv[3]
m = res["machine"][0]
b = m["blas"]
print(f"CPU: {m['cpu']} ({m['isa'].strip()}). {m['nmt']} (--engine {m.get('engine', 'torch')}), OpenBLAS kernels {b.get('blas_core') or 'library default'} "
      f"(matmul peak {b['peak_gflops']:.1f} GFLOP/s), int8 kernel {m.get('nmt_int8', 'n/a')}; "
      f"CTranslate2 {m['ct2_version']}: {m['ct2'].rstrip(';')}.")
print(f"Median of {rounds} alternating rounds; sentences/s and target subwords/s exclude model load; "
      f"OMP_WAIT_POLICY={m.get('omp_wait') or 'unset (spinning)'}; load average before/after: {m.get('load', '?')} / {open('/proc/loadavg').read().split()[0]}.\n")
# Each thread count's peaks: float32 (LibTorch's BLAS) and, from runs that measured it, nmt's int8
# product; a row's share is of its own weights' peak.
peaks = {(p, k.split("/")[1]): v[0][field] for k, v in res.items() if k.startswith("peak/t")
         for p, field in (("float32", "peak_gflops"), ("int8", "int8_peak_gflops")) if field in v[0]}
if peaks:
    print("Matrix-product peaks (nmt bench matmul): " +
          ", ".join(f"{p} {t[1:]} thread(s) {g:.1f} GFLOP/s" for (p, t), g in sorted(peaks.items())) +
          ". \"nmt output GFLOP/s\": the matrix products of one teacher-forced forward pass over each "
          "source and its translation, per second of decoding (beam search computes about 5x the decoder's "
          "share of it), and its share of that thread count's peak for the row's weights.\n")
print("| weights | threads | search | batch | nmt sent/s | CT2 sent/s | nmt / CT2 (median of rounds) | nmt tok/s | CT2 tok/s | nmt output GFLOP/s (% of peak) | nmt RSS MB | CT2 RSS MB |")
print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")

def med(key, field):
    values = [r[field] for r in res.get(key, []) if r.get(field) is not None]  # older results lack new fields
    return statistics.median(values) if values else None

def fmt(x, digits=1):
    return "n/a" if x is None else f"{x:.{digits}f}"

keys = sorted({k.rsplit("/", 1)[0] for k in res if k.count("/") == 4}, key=lambda k: (
    k.split("/")[0] != "float32", int(k.split("/")[1][1:]), k.split("/")[2] != "greedy", k.split("/")[3] != "b64",
    k.split("/")[3]))
def share_of_peak(gflops, peak):
    if gflops is None:
        return "n/a"
    return f"{gflops:.1f}" + (f" ({100 * gflops / peak:.0f} %)" if peak else "")

def paired_ratio(nmt_key, ct2_key):
    """Median over rounds of nmt / CTranslate2 within a round: robust to the machine's load drifting
    between rounds, which moves both engines of a round alike."""
    n, c = res.get(nmt_key), res.get(ct2_key)
    if not n or not c or len(n) != len(c):
        return "n/a"
    return f"{statistics.median(a['sentences_per_s'] / b['sentences_per_s'] for a, b in zip(n, c)):.2f}x"

for k in keys:
    p, t, s, batch = k.split("/")
    # CTranslate2's token-budget rows are compared with nmt's batches of 64 (nmt bench translate
    # batches by sentences).
    nmt_key = f"{k}/nmt" if batch.startswith("b") else f"{p}/{t}/{s}/b64/nmt"
    n_sps, c_sps = med(nmt_key, "sentences_per_s"), med(f"{k}/ct2", "sentences_per_s")
    sents = (res.get(f"{k}/ct2") or [{}])[0].get("sentences", "")
    label = f"{batch[1:]} ({sents} sent.)" if batch.startswith("b") else f"nmt 64 / CT2 {tokens} tokens"
    print(f"| {p} | {t[1:]} | {'greedy' if s == 'greedy' else 'beam 5'} | {label} | {fmt(n_sps)} | {fmt(c_sps)} | "
          f"{paired_ratio(nmt_key, f'{k}/ct2')} | "
          f"{fmt(med(nmt_key, 'target_tokens_per_s'), 0)} | {fmt(med(f'{k}/ct2', 'target_tokens_per_s'), 0)} | "
          f"{share_of_peak(med(nmt_key, 'output_matmul_gflops'), peaks.get((p, t)))} | "
          f"{fmt(med(nmt_key, 'peak_rss_mb'), 0)} | {fmt(med(f'{k}/ct2', 'peak_rss_mb'), 0)} |")
print()
for p in ["float32", "int8"]:
    for t in sorted({k.split("/")[1] for k in res if k.startswith(f"{p}/t") and k.endswith("/first/ct2")}):
        n = res.get(f"{p}/{t}/first/nmt")
        c = res.get(f"{p}/{t}/first/ct2")
        print(f"Time to first translation, {p}, {t[1:]} thread(s) (process start to first line, load included): "
              f"nmt {fmt(statistics.median(n) if n else None, 2)} s, CTranslate2 (Python) {fmt(statistics.median(c), 2)} s.")
for p in ["float32", "int8"]:
    q = res.get(f"{p}/quality")
    if q:
        q = q[0]
        nmt_bleu = "n/a (no nmt quantize; nmt float32 shown)" if res.get(f"{p}/quality_nmt_missing") else f"{q['bleu_nmt']:.2f}"
        print(f"Greedy BLEU on test_2016_flickr, {p}: nmt {nmt_bleu}, CTranslate2 {q['bleu_ct2']:.2f}; "
              f"identical lines {q['equal']} / {q['lines']}.")
PYEOF
log "results in $OUT (results.jsonl, table.md, check-*/report.txt)"
