#!/usr/bin/env bash
# The whole test suite from a fresh clone: dependencies, build, ctest.
# The tests read the mirrored datasets from $NMT_DATA (default ../shared/data) and skip,
# with the reason, what needs data that is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=${NMT_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${NMT_CMAKE_ARGS:-}
cmake --build "$build" -j "${NMT_JOBS:-2}"
ctest --test-dir "$build" --output-on-failure -j "${NMT_JOBS:-2}"
