#!/usr/bin/env bash
# The whole test suite from a fresh clone: dependencies, build, ctest, once for each LibTorch.
#   NMT_LIBTORCH="scorer none debian wheel"   test those builds only (default: all four: the
#                               scorer-only build first, `nmt bleu` and its tests, then
#                               sacreBLEU's own test suite against the Python module,
#                               scripts/ci/sacrebleu-suite.sh; then the build without LibTorch,
#                               which translates on the CPU engine; then the two LibTorch builds)
#   NMT_BUILD_DIR               build folder (default: build for Debian's, the folder the other
#                               scripts use, build-wheel for the wheel's, build-none for none,
#                               build-scorer for the scorer)
#   NMT_JOBS                    parallel compile and test jobs (default 2)
#   NMT_SETUP_REFERENCE         0: the wheel's build without the Python references (transformers,
#                               CTranslate2) of the equivalence tests, which then skip (default 1)
# The tests read the mirrored datasets from $NMT_DATA (default ../shared/data) and skip,
# with the reason, what needs data that is absent. Ends with one line of totals.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${NMT_JOBS:-2}
read -r -a variants <<< "${NMT_LIBTORCH:-scorer none debian wheel}"
passed=0 failed=0 summary=()
phase_start=$SECONDS
# Each phase's time, printed as it ends and again at the close (CI's record of where time goes).
phase() {
  local line
  line=$(printf '%-30s %3dm%02ds' "$1" $(((SECONDS - phase_start) / 60)) $(((SECONDS - phase_start) % 60)))
  echo "test: phase $line"
  phases+=("$line")
  phase_start=$SECONDS
}
phases=()
# Runs a suite whose last line is "N passed, N failed", logging to LOG, and adds its counts to the
# variant's ($p, $f) and the totals; a suite that fails without that line counts as one failure.
run_counted() {
  local log=$1 status=0 np nf
  shift
  "$@" 2>&1 | tee "$log" || status=$?
  read -r np nf < <(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$log" | tail -n 1) || true
  np=${np:-0} nf=${nf:-1}
  ((status == 0)) || ((nf > 0)) || nf=1
  p=$((p + np)) f=$((f + nf))
  passed=$((passed + np)) failed=$((failed + nf))
}
for variant in "${variants[@]}"; do
  start=$SECONDS
  phase_start=$SECONDS
  # The wheel's build also installs the Python references of the equivalence tests (transformers,
  # CTranslate2), which then must run: NMT_REQUIRE_REFERENCE=1 turns their "skipped" into a failure.
  reference=0
  [[ $variant == wheel ]] && reference=${NMT_SETUP_REFERENCE:-1}
  # "scorer" is NMT_LIBTORCH=none with the scorer alone (NMT_SCORER_ONLY).
  libtorch=$variant scorer_only=0
  [[ $variant == scorer ]] && libtorch=none scorer_only=1
  NMT_LIBTORCH=$libtorch NMT_SCORER_ONLY=$scorer_only NMT_SETUP_REFERENCE=$reference bash scripts/setup.sh
  export NMT_REQUIRE_REFERENCE=$reference
  phase "setup ($variant)"
  default_build=build
  [[ $variant == wheel ]] && default_build=build-wheel
  [[ $variant == none ]] && default_build=build-none
  [[ $variant == scorer ]] && default_build=build-scorer
  build=${NMT_BUILD_DIR:-$default_build}
  # Warnings are errors where the build is warning-free: the scorer-only and Debian LibTorch builds
  # (C++17). The wheel's C++20 build keeps -Wall -Wextra as warnings: GCC 12 reports false
  # positives inside libstdc++'s char_traits.h there (CONTRIBUTING.md, "Code style").
  werror=-DNMT_WERROR=ON
  [[ $variant == wheel ]] && werror=-DNMT_WERROR=OFF
  scorer_flag=-DNMT_SCORER_ONLY=OFF
  ((scorer_only)) && scorer_flag=-DNMT_SCORER_ONLY=ON
  NMT_LIBTORCH=$libtorch cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DNMT_LIBTORCH="$libtorch" "$scorer_flag" \
    "$werror" ${NMT_CMAKE_ARGS:-}
  cmake --build "$build" -j "$jobs"
  phase "build ($variant)"
  version=$("$build/nmt" --version)
  echo "test: $version, from NMT_LIBTORCH=$libtorch (${variant})"
  log="$build/ctest.log"
  status=0
  ctest --test-dir "$build" --output-on-failure -j "$jobs" 2>&1 | tee "$log" || status=$?
  # ctest's own closing line: "100% tests passed, 0 tests failed out of 183"
  read -r p f < <(sed -nE 's/.* tests passed, ([0-9]+) tests? failed out of ([0-9]+).*/\2 \1/p' "$log" | tail -n 1 |
    awk '{print $1 - $2, $2}')
  if [[ -z "${p:-}" ]]; then p=0; f=1; fi
  ((status == 0)) || ((f > 0)) || f=1
  passed=$((passed + p)) failed=$((failed + f))
  phase "tests ($variant)"
  if [[ $variant == none ]]; then
    # The Python package with the translator, built as a wheel and installed in a fresh venv.
    run_counted "$build/python-package.log" bash scripts/ci/python-package.sh "$build"
    phase "Python package (wheel, pytest)"
  fi
  if [[ $variant == scorer ]]; then
    # sacreBLEU 2.6.0's own test files against the Python module; its last line: "N passed, N failed".
    run_counted "$build/sacrebleu-suite.log" bash scripts/ci/sacrebleu-suite.sh
    phase "sacreBLEU's suite (python)"
  fi
  summary+=("$version: $p passed, $f failed ($(((SECONDS - start) / 60)) min with setup and build)")
done
echo
printf 'test: phase %s\n' "${phases[@]}"
printf 'test: %s\n' "${summary[@]}"
echo "total: $passed passed, $failed failed"
((failed == 0))
