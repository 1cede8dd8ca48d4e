#!/usr/bin/env bash
# Prints where scripts/setup.sh puts the pinned PyTorch wheel's LibTorch (NMT_LIBTORCH=wheel):
# $NMT_TORCH_HOME, else ~/.cache/nmt/torch-VERSION (XDG_CACHE_HOME honoured), VERSION being
# $NMT_TORCH_VERSION or the pin in scripts/torch-wheel.version. CMake and bench.sh ask here.
set -euo pipefail
version=${NMT_TORCH_VERSION:-$(head -n 1 "$(dirname "$0")/torch-wheel.version")}
echo "${NMT_TORCH_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/nmt/torch-$version}"
