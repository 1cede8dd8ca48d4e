#!/usr/bin/env bash
# Installs nmt's build and test dependencies from Debian 12's archive. Idempotent: packages
# already present are skipped, and apt-get runs only when something is missing.
set -euo pipefail

packages=(
  g++ cmake pkg-config make
  libtorch-dev            # LibTorch 1.13 (CPU): the tensor library and autograd
  libgloo-dev             # headers of the Gloo library LibTorch's c10d uses (data-parallel training)
  libopenblas0-pthread    # without it LibTorch's matrix products use the reference BLAS (~30x slower)
  libsentencepiece-dev    # subword segmentation
  libcli11-dev            # command line
  libfmt-dev
  nlohmann-json3-dev      # JSON for configs, --json output, metrics.jsonl
  libgtest-dev            # test suite
  zlib1g-dev              # tests: reading the report's PNG screenshot
  chromium                # tests: the HTML report rendered in a real headless browser
  bsdutils                # tests: `script` drives the interactive translator through a pseudo-terminal
)
[[ "${NMT_SETUP_BENCH:-0}" == 1 ]] && packages+=(python3-torch libbenchmark-dev)  # scripts/bench.sh

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
