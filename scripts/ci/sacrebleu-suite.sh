#!/usr/bin/env bash
# sacreBLEU 2.6.0's own test suite against nmt's Python module (nmt_score), unchanged: fetches the
# sdist from PyPI with pip, builds and installs the module from this tree (`pip install .`),
# and runs the sdist's test/ files with `import sacrebleu` pointed at nmt_score by a small shim
# (scripts/ci/sacrebleu-shim/sitecustomize.py). Prints passed/failed per file, the files that do not
# apply (test-set registry and downloads, which nmt does not have), the result of nmt's own
# module tests (tests/python), and ends with one line for sacreBLEU's files:
#   N passed, N failed
# Python: nmt's own venv (~/.cache/nmt/venv, as scripts/setup.sh makes it); needs
# NMT_LIBTORCH=none NMT_SCORER_ONLY=1 bash scripts/setup.sh (compiler, CMake, fmt, JSON, CLI11, python3-venv).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
VENV=$(dirname "$(bash scripts/torch-home.sh)")/venv
SACREBLEU_VERSION=2.6.0
APPLICABLE=(test_bleu.py test_chrf.py test_ter.py test_sentence_bleu.py test_tokenizer_ter.py test_significance.py)
# test_api.py and test_dataset.py test sacreBLEU's test-set registry and its downloads
# (get_source_file, DATASETS, ...), which nmt_score does not have.
NOT_APPLICABLE=(test_api.py test_dataset.py)

say() { echo "sacrebleu-suite: $*"; }
die() { echo "sacrebleu-suite: $*" >&2; exit 1; }

if [[ ! -x "$VENV/bin/python3" ]]; then
  /usr/bin/python3 -m venv "$VENV" || die "could not make a Python venv in $VENV (python3-venv installed?)"
fi
pip() { "$VENV/bin/python3" -m pip --disable-pip-version-check -q "$@"; }
work=$(mktemp -d /tmp/nmt-sacrebleu-suite.XXXXXX)
trap 'rm -rf "$work"' EXIT

say "build tools and pytest (pip)"
pip install "scikit-build-core>=0.8" "pybind11>=2.11" pytest || die "pip could not install scikit-build-core, pybind11, pytest"
say "sacrebleu==$SACREBLEU_VERSION's sdist (pip download)"
pip download --no-deps --no-binary :all: -d "$work" "sacrebleu==$SACREBLEU_VERSION" ||
  die "pip could not fetch the sacrebleu $SACREBLEU_VERSION sdist"
tar -xzf "$work"/sacrebleu-$SACREBLEU_VERSION.tar.gz -C "$work"
suite=$work/sacrebleu-$SACREBLEU_VERSION
start=$SECONDS
say "pip install . (nmt_score, from the torch-free core; the scorer alone: NMT_SCORER_ONLY)"
# Make, not Ninja: set-up installs no Ninja, and scikit-build-core would fetch one from PyPI.
CMAKE_GENERATOR="Unix Makefiles" pip install --no-build-isolation --config-settings cmake.define.NMT_SCORER_ONLY=ON "$root" \
  > "$work/pip-install.log" 2>&1 ||
  { tail -n 30 "$work/pip-install.log" >&2; die "pip install . failed (its log above)"; }
say "built and installed in $((SECONDS - start)) s"

export PYTHONPATH=$root/scripts/ci/sacrebleu-shim
# The shim must be what the tests import, not a sacrebleu installed beside it.
"$VENV/bin/python3" -c 'import sacrebleu, nmt_score; assert sacrebleu is nmt_score, sacrebleu.__file__' ||
  die "the shim did not take: 'import sacrebleu' is not nmt_score"

passed=0 failed=0
for f in "${APPLICABLE[@]}"; do
  log=$work/$f.log
  # Run from the sdist's root: test_significance.py opens ./test/wmt17_en_de_systems.pkl.bz2.
  (cd "$suite" && "$VENV/bin/python3" -m pytest -p no:cacheprovider -q -o addopts= "test/$f" > "$log" 2>&1) || true
  # pytest's last line: "27 passed in 0.05s", "1 failed, 26 passed in ...", "1 error in ..."
  summary=$(tail -n 1 "$log")
  p=$(grep -oE '[0-9]+ passed' <<< "$summary" | grep -oE '[0-9]+' || true)
  fl=$(grep -oE '[0-9]+ (failed|errors?)' <<< "$summary" | awk '{s += $1} END {if (NR) print s}' || true)
  p=${p:-0} fl=${fl:-0}
  ((p + fl > 0)) || fl=1  # nothing ran: the file itself failed
  ((fl == 0)) || sed -n '/FAILED\|ERROR\|Error/p' "$log" | head -n 20
  printf 'sacrebleu-suite: %-24s %4d passed, %d failed\n' "$f" "$p" "$fl"
  passed=$((passed + p)) failed=$((failed + fl))
done
for f in "${NOT_APPLICABLE[@]}"; do
  printf 'sacrebleu-suite: %-24s not applicable (sacreBLEU test-set registry and downloads)\n' "$f"
done
# nmt's own tests of the module (figures of tests/score-vectors to the bit, bad input), without the shim.
own=0
(unset PYTHONPATH; cd "$work" && "$VENV/bin/python3" -m pytest -p no:cacheprovider -q "$root/tests/python" > "$work/own.log" 2>&1) || own=1
((own == 0)) || tail -n 30 "$work/own.log"
say "nmt's own module tests (tests/python): $(tail -n 1 "$work/own.log")"
echo "$passed passed, $failed failed"
((failed == 0 && own == 0))
