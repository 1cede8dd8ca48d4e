# Sourced by the tests against Python references (tests/equivalence/ct2_equivalence.sh,
# tests/equivalence/marian_import.sh) and by tests/cli/torchrun.sh: sets $py to nmt's Python
# (scripts/nmt-python.sh) with the wheel's PyTorch on its path, and require_python_modules
# "MODULES" exits when one is missing: skipped (77), or failed (1) where set-up installed them
# (CI's wheel build: NMT_REQUIRE_REFERENCE=1).
#   root=SOURCE_DIR; source "$root/tests/equivalence/reference_python.sh"; require_python_modules "torch ctranslate2"
py=$(bash "$root/scripts/nmt-python.sh")
if ! "$py" -c 'import torch' 2>/dev/null; then
  home=$(bash "$root/scripts/torch-home.sh")
  export PYTHONPATH="$home:$home-cuda-deps${PYTHONPATH:+:$PYTHONPATH}"
fi

require_python_modules() {
  local modules=$1 verdict=skipped code=77
  if [[ ${NMT_REQUIRE_REFERENCE:-0} == 1 ]]; then verdict="failed (NMT_REQUIRE_REFERENCE=1)" code=1; fi
  "$py" -c "import ${modules// /, }" 2>/dev/null && return 0
  echo "$verdict: $py cannot import ${modules// /, } (NMT_LIBTORCH=wheel NMT_SETUP_REFERENCE=1 scripts/setup.sh installs them)"
  exit "$code"
}
