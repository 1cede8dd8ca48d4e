#!/usr/bin/env bash
# `nmt serve` under ThreadSanitizer, with four decoding workers sharing one model: builds nmt
# with -DNMT_TSAN=ON in build-tsan, runs the batcher's tests (tests/unit/serve/batcher_api_test.cc),
# the serve tests (tests/cli/serve_test.cc, Serve.*, --workers 4 among them) of the ordinary build
# ($NMT_BUILD_DIR, default build/) against the sanitized server, trains a tiny model with the
# sanitized binary, then soaks the sanitized server (--workers 4 --threads 1, well-behaved and
# hostile clients: scripts/checks/soak-serve.py) for MINUTES. Any ThreadSanitizer report fails the run
# (halt_on_error: the process exits 66, and the report is printed).
#   bash scripts/checks/tsan-serve.sh [MINUTES]     (default 1; about 15 minutes of 2-core build first)
# What it cannot see: LibTorch and OpenBLAS are not instrumented, so accesses inside them are
# invisible; --threads 1 keeps LibTorch out of OpenMP regions, whose synchronisation TSan
# cannot follow. Exit 0 when clean.
set -euo pipefail
cd "$(dirname "$0")/../.."
minutes=${1:-1}
build=${NMT_TSAN_BUILD_DIR:-build-tsan}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNMT_TSAN=ON -DNMT_LIBTORCH="${NMT_LIBTORCH:-debian}" > "$work/cmake.log" ||
  { cat "$work/cmake.log" >&2; exit 1; }
cmake --build "$build" -j "${NMT_JOBS:-2}" --target nmt_torch_cli nmt_cli nmt_core_tests
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 log_path=$work/tsan suppressions=$PWD/scripts/checks/tsan.supp"
reports() {
  if compgen -G "$work/tsan*" > /dev/null; then cat "$work"/tsan* >&2; echo "tsan-serve: ThreadSanitizer reported ($1)" >&2; exit 1; fi
}
"$build/tests/nmt_core_tests" --gtest_filter='ServeBatcher.*' --gtest_brief=1 || { reports "batcher tests"; exit 1; }
reports "batcher tests"
tests=${NMT_BUILD_DIR:-build}
cmake --build "$tests" -j "${NMT_JOBS:-2}" --target nmt_tests
NMT_TEST_BINARY="$(cd "$build" && pwd)/nmt" "$tests/tests/nmt_tests" --gtest_filter='Serve.*' --gtest_brief=1 ||
  { reports "serve tests"; echo "tsan-serve: the serve tests failed" >&2; exit 1; }
reports "serve tests"
"$build/nmt" train --preset transformer-tiny --train data/fixtures/tiny --valid data/fixtures/tiny --max-steps 20 \
  --valid-bleu false --threads 1 -q -o "$work/model" || { reports "training"; exit 1; }
reports "training"
status=0
python3 scripts/checks/soak-serve.py "$work/model" --nmt "$build/nmt" --workers 4 --threads 1 --clients 8 \
  --minutes "$minutes" --every 15 || status=$?
reports "serve --workers 4"
((status == 0)) || { echo "tsan-serve: the soak failed (exit $status)" >&2; exit 1; }
echo "tsan-serve: clean (batcher tests, serve tests, training, serve --workers 4 soaked for $minutes min)"
