#!/usr/bin/env bash
# HTTP load on `nmt serve`, against `nmt translate` offline, in one run on one machine:
#   * offline: `nmt bench translate` (model loading not timed) over the source file at batch 64,
#     and one sentence at a time with each sentence timed (--per-sentence), giving batch-64
#     sentences/s and the single-sentence times (mean, p50, p99), measured before and again
#     after the online loads; the ratios use the faster of the two (the load of a shared
#     machine changes within a run, and this way it cannot flatter the server);
#   * online: `nmt serve` on loopback, loaded by wrk with 1, 8 and 64 connections, one sentence
#     per request (the source file's lines in turn, as JSON): requests/s and p50/p95/p99 latency.
# Both use --threads (default 2) and the same greedy decoding. The load average is printed
# before and after: on a shared machine the figures are only comparable within one run.
#
#   bash scripts/bench/bench-serve.sh MODEL_DIR [SOURCE_FILE]
#   (needs wrk: NMT_SETUP_BENCH=1 bash scripts/setup.sh; NMT=path/to/nmt, NMT_BENCH_SECONDS=20,
#    NMT_SERVE_THREADS=2, NMT_BENCH_CONNECTIONS="1 8 64" override the defaults; NMT_SERVE_WORKERS=W
#    splits the threads over W decoding workers (serve --workers W --threads THREADS/W), and
#    NMT_SERVE_ARGS (e.g. "--max-batch 32") goes to `serve` only; NMT_DECODE_ARGS,
#    e.g. "--max-len-a 1.2 --max-len-b 0", go to both `translate` and `serve`: an untrained
#    model never emits </s>, and a length bound keeps its outputs as long as real translations)
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
model="$(realpath "${1:?usage: bench-serve.sh MODEL_DIR [SOURCE_FILE]}")"
src="$(realpath "${2:-${NMT_DATA:-$root/../shared/data}/multi30k/test_2016_flickr.en}")"
nmt="$(realpath "${NMT:-$root/build/nmt}")"
seconds="${NMT_BENCH_SECONDS:-20}"
threads="${NMT_SERVE_THREADS:-2}"
connections="${NMT_BENCH_CONNECTIONS:-1 8 64}"
command -v wrk >/dev/null || { echo "bench-serve: needs wrk (NMT_SETUP_BENCH=1 bash scripts/setup.sh)" >&2; exit 1; }
[[ -x "$nmt" ]] || { echo "bench-serve: no nmt binary at $nmt" >&2; exit 1; }
[[ -f "$src" ]] || { echo "bench-serve: no source file $src" >&2; exit 1; }

work="$(mktemp -d)"
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
lines=$(wc -l < "$src")
echo "bench-serve: $(basename "$model"), $lines sentences of $(basename "$src"), --threads $threads ${NMT_DECODE_ARGS:-}, $(nproc) cores"
echo "bench-serve: CPU $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
  "OpenBLAS kernels $("$nmt" bench matmul --threads 1 | sed -nE 's/.*"blas_core":"([^"]*)".*/\1/p')"
echo "bench-serve: load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

calc() { awk "BEGIN { printf \"%.6f\", $* }"; }
decode_args=(${NMT_DECODE_ARGS:-})
offline_sps=0
single_ms=1e9
single_p50=1e9
single_p99=1e9
field() { python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, r))' "$1" "$2"; }
measure_offline() {  # keeps the best batch-64 rate and single-sentence times seen so far
  local b64 b1 sps ms p50 p99
  b64=$("$nmt" bench translate -m "$model" --src "$src" --threads "$threads" --batch-size 64 "${decode_args[@]}" | tail -n 1)
  b1=$("$nmt" bench translate -m "$model" --src "$src" --threads "$threads" --batch-size 1 --per-sentence "${decode_args[@]}" | tail -n 1)
  sps=$(field "$b64" sentences_per_s)
  ms=$(field "$b1" "latency_ms['mean']")
  p50=$(field "$b1" "latency_ms['p50']")
  p99=$(field "$b1" "latency_ms['p99']")
  printf 'offline (%s): batch 64: %.1f sentences/s; one at a time: mean %.1f ms, p50 %.1f ms, p99 %.1f ms per sentence\n' \
    "$1" "$sps" "$ms" "$p50" "$p99"
  offline_sps=$(calc "($sps > $offline_sps) ? $sps : $offline_sps")
  single_ms=$(calc "($ms < $single_ms) ? $ms : $single_ms")
  single_p50=$(calc "($p50 < $single_p50) ? $p50 : $single_p50")
  single_p99=$(calc "($p99 < $single_p99) ? $p99 : $single_p99")
}
measure_offline before

# One JSON body per source line, sent in turn by every wrk thread; p95 is not in wrk's own
# --latency table, so done() prints the percentiles wanted.
python3 - "$src" "$work/bodies.lua" <<'EOF'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")[:-1]
with open(sys.argv[2], "w", encoding="utf-8") as f:
    f.write("bodies = {\n")
    for l in lines:
        f.write("  %s,\n" % json.dumps(json.dumps({"text": l})))  # a Lua string holding the JSON
    f.write("}\n")
EOF
cat > "$work/load.lua" <<EOF
dofile("$work/bodies.lua")
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, "/translate", nil, bodies[i])
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT %.1f %.1f %.1f %.1f %d %d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.requests))
end
EOF

workers="${NMT_SERVE_WORKERS:-1}"
serve_args=(--workers "$workers" --threads $((threads / workers)) ${NMT_SERVE_ARGS:-})
echo "bench-serve: serve ${serve_args[*]}"
"$nmt" serve -m "$model" "${serve_args[@]}" "${decode_args[@]}" --port 0 -q 2> "$work/serve.log" &
server_pid=$!
port=""
for _ in $(seq 600); do
  port=$(sed -nE 's#.*listening on http://127\.0\.0\.1:([0-9]+).*#\1#p' "$work/serve.log")
  [[ -n "$port" ]] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$port" ]] || { echo "bench-serve: the server did not start" >&2; cat "$work/serve.log" >&2; exit 1; }

echo
: > "$work/rows.txt"
for c in $connections; do
  t=$((c < 2 ? 1 : 2))
  wrk -t"$t" -c"$c" -d"${seconds}s" --timeout 30s -s "$work/load.lua" "http://127.0.0.1:$port" > "$work/wrk.txt"
  read -r _ rps p50 p95 p99 errors _ < <(grep '^RESULT' "$work/wrk.txt")
  printf 'online: %d connection(s): %.1f requests/s, p50/p95/p99 %.1f/%.1f/%.1f ms, %d errors (load average %s)\n' \
    "$c" "$rps" "$p50" "$p95" "$p99" "$errors" "$(cut -d' ' -f1 /proc/loadavg)"
  echo "$c $rps $p50 $p95 $p99 $errors" >> "$work/rows.txt"
  [[ "$c" == 1 ]] && p99_one=$p99 && p50_one=$p50
done
echo
measure_offline after
printf 'offline, the faster of the two: batch 64: %.1f sentences/s; one at a time: mean %.1f, p50 %.1f, p99 %.1f ms\n' \
  "$offline_sps" "$single_ms" "$single_p50" "$single_p99"
echo
echo "| connections | requests/s | p50 ms | p95 ms | p99 ms | errors | vs offline batch 64 |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
while read -r c rps p50 p95 p99 errors; do
  printf '| %d | %.1f | %.1f | %.1f | %.1f | %d | %.0f %% |\n' "$c" "$rps" "$p50" "$p95" "$p99" "$errors" "$(calc "100 * $rps / $offline_sps")"
done < "$work/rows.txt"
echo
if [[ -n "${p99_one:-}" ]]; then
  printf 'p99 at 1 connection / mean single-sentence time: %.2f\n' "$(calc "$p99_one / $single_ms")"
  printf 'at 1 connection against one sentence at a time offline: p50 %.2fx, p99 %.2fx\n' \
    "$(calc "$p50_one / $single_p50")" "$(calc "$p99_one / $single_p99")"
fi
echo "bench-serve: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
kill -TERM "$server_pid"
wait "$server_pid" && echo "bench-serve: server stopped cleanly (exit 0)"
server_pid=""
