#!/usr/bin/env bash
# PyTorch's launcher (torchrun) for nmt's data-parallel training, run by nmt's own Python
# (scripts/nmt-python.sh) with the PyTorch wheel's Python side on its path:
#   bash scripts/torchrun.sh --no-python --nproc-per-node 2 build/nmt train ...
# The wheel set-up unpacks LibTorch for C++ only; `import torch` also needs the wheel's pure
# Python requirements and the CUDA libraries it loads even on a CPU (about 3 GB), which
# `NMT_LIBTORCH=wheel NMT_SETUP_REFERENCE=1 bash scripts/setup.sh` installs. Without them this
# says so in one line (exit 1). scripts/launch-local.sh needs none of it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=$(bash "$root/scripts/nmt-python.sh")
if ! "$py" -c 'import torch' 2>/dev/null; then
  home=$(bash "$root/scripts/torch-home.sh")
  export PYTHONPATH="$home:$home-cuda-deps${PYTHONPATH:+:$PYTHONPATH}"
fi
if ! err=$("$py" -c 'import torch.distributed.run' 2>&1); then
  echo "torchrun: $py cannot import PyTorch's launcher ($(tail -n 1 <<< "$err")): run" \
    "NMT_LIBTORCH=wheel NMT_SETUP_REFERENCE=1 bash scripts/setup.sh (the wheel's Python side, ~3 GB)," \
    "or use scripts/launch-local.sh" >&2
  exit 1
fi
exec "$py" -m torch.distributed.run "$@"
