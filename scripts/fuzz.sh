#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a bounded time.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 600; NMT_FUZZ_TARGETS="fuzz_config ..." picks targets)
# Seeds: tests/fuzz/corpus/TARGET/ (committed); new inputs go to fuzz-out/corpus/TARGET/ and
# crashes to fuzz-out/crashes/TARGET/. A crash makes the script fail; turn each finding into a
# regression test before fixing it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
command -v clang++ >/dev/null || { echo "fuzz.sh: needs clang++ (apt-get install clang)" >&2; exit 1; }
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DNMT_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "${NMT_JOBS:-2}"
status=0
for target in ${NMT_FUZZ_TARGETS:-fuzz_corpus fuzz_bleu fuzz_config fuzz_manifest fuzz_metrics fuzz_safetensors fuzz_engine_weights}; do
  mkdir -p "fuzz-out/corpus/$target" "fuzz-out/crashes/$target"
  echo "== $target for ${seconds}s"
  if ! "build-fuzz/tests/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="fuzz-out/crashes/$target/" -print_final_stats=1 \
      "fuzz-out/corpus/$target" "tests/fuzz/corpus/$target" 2>&1 | tail -n 12; then
    status=1
  fi
  if ls "fuzz-out/crashes/$target"/* >/dev/null 2>&1; then
    echo "fuzz.sh: $target found crashing inputs in fuzz-out/crashes/$target" >&2
    status=1
  fi
done
exit $status
