#!/usr/bin/env bash
# The Python package with the translator (nmt.Translator on the CPU engine, no LibTorch), as a
# user gets it: `pip wheel .` builds the wheel, a fresh virtual environment installs it (no
# compiler needed there), and tests/python runs against it with the build without LibTorch's
# `nmt` and nmt_random_model (tests/python/test_translator.py compares every option with the
# CLI). Ends with one line: "N passed, N failed".
#   scripts/ci/python-package.sh BUILD_DIR   (a build of NMT_LIBTORCH=none, e.g. build-none)
# Needs NMT_LIBTORCH=none bash scripts/setup.sh (compiler, CMake, the engine's Debian packages,
# python3-venv) and PyPI for scikit-build-core, pybind11 and pytest.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=$(cd "${1:?usage: python-package.sh BUILD_DIR}" && pwd)
say() { echo "python-package: $*"; }
die() { echo "python-package: $*" >&2; echo "0 passed, 1 failed"; exit 1; }
[[ -x "$build/nmt" && -x "$build/tests/nmt_random_model" ]] || die "$build has no nmt or tests/nmt_random_model; build it first"
work=$(mktemp -d /tmp/nmt-python-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv "$work/build-venv" || die "could not make a venv (python3-venv installed?)"
pip() { "$1/bin/python3" -m pip --disable-pip-version-check -q "${@:2}"; }
pip "$work/build-venv" install "scikit-build-core>=0.8" "pybind11>=2.11" || die "pip could not install scikit-build-core, pybind11"
start=$SECONDS
say "pip wheel . (the translator and the scorer, without LibTorch)"
# Make, not Ninja: set-up installs no Ninja, and scikit-build-core would fetch one from PyPI.
CMAKE_GENERATOR="Unix Makefiles" pip "$work/build-venv" wheel --no-build-isolation --no-deps -w "$work/dist" "$root" \
  > "$work/wheel.log" 2>&1 || { tail -n 30 "$work/wheel.log" >&2; die "pip wheel . failed (its log above)"; }
wheel=$(ls "$work"/dist/nmt-*.whl)
say "built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) in $((SECONDS - start)) s"
/usr/bin/python3 -m venv "$work/user-venv"
pip "$work/user-venv" install "$wheel" pytest || die "pip could not install the wheel and pytest"
# No LibTorch in that environment, and none loaded by importing and translating.
"$work/user-venv/bin/python3" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is not None)' ||
  die "torch is importable in the fresh venv"
status=0
(cd "$work" && NMT_BINARY="$build/nmt" NMT_RANDOM_MODEL="$build/tests/nmt_random_model" \
  "$work/user-venv/bin/python3" -m pytest -p no:cacheprovider -q "$root/tests/python" > "$work/pytest.log" 2>&1) || status=$?
tail -n 40 "$work/pytest.log"
read -r p f < <(python3 - "$work/pytest.log" <<'PY'
import re, sys
last = open(sys.argv[1]).read().strip().splitlines()[-1]
count = lambda word: int(m.group(1)) if (m := re.search(r"(\d+) " + word, last)) else 0
print(count("passed"), count("failed") + count("error"))
PY
)
((status == 0)) || ((f > 0)) || f=1
say "tests/python against the installed wheel: $(tail -n 1 "$work/pytest.log")"
echo "$p passed, $f failed"
((f == 0))
