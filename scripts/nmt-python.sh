#!/usr/bin/env bash
# Prints the Python that nmt's benchmarks and the CTranslate2 test use: nmt's own venv, where
# `NMT_SETUP_BENCH=1 scripts/setup.sh` installs their packages (next to the wheel's LibTorch,
# ~/.cache/nmt/venv), or python3 where there is none yet. NMT_PYTHON overrides both.
set -euo pipefail
venv="$(dirname "$(bash "$(dirname "$0")/torch-home.sh")")/venv/bin/python3"
if [[ -n "${NMT_PYTHON:-}" ]]; then echo "$NMT_PYTHON"
elif [[ -x "$venv" ]]; then echo "$venv"
else echo python3
fi
