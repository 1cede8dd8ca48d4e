#!/usr/bin/env bash
# Installs nmt's build and test dependencies. Idempotent: what is already present is skipped.
#
# Which LibTorch, one switch:
#   NMT_LIBTORCH=debian  (default) Debian 12's libtorch-dev, LibTorch 1.13, CPU.
#   NMT_LIBTORCH=wheel   LibTorch 2.x from the pinned PyTorch wheel on PyPI (NMT_TORCH_VERSION,
#                        default below), unpacked with `pip install --no-deps --target` into
#                        NMT_TORCH_HOME (default ~/.cache/nmt/torch-VERSION), where CMake finds it
#                        when configured with the same NMT_LIBTORCH=wheel (see CMakeLists.txt).
# Either way the other Debian packages below are installed. NMT_SETUP_BENCH=1 adds what
# scripts/bench.sh needs: Python PyTorch of the same LibTorch (python3-torch for Debian's, the
# same wheel's Python side for the wheel), Google Benchmark and wrk (scripts/bench-serve.sh), and
# CTranslate2 with SentencePiece's Python module (scripts/bench-ct2.sh: nmt against CTranslate2
# on the same weights; its converter reads model.pt with the wheel's Python PyTorch).
set -euo pipefail
cd "$(dirname "$0")/.."

LIBTORCH=${NMT_LIBTORCH:-debian}
# The pin (scripts/torch-wheel.version): the newest PyTorch on PyPI when it was set. Its wheel is
# the CUDA 13 build; libtorch_cpu.so needs the CUDA runtime (libcudart.so.13, libcupti.so.13)
# even on a CPU.
TORCH_VERSION=${NMT_TORCH_VERSION:-$(head -n 1 scripts/torch-wheel.version)}
TORCH_HOME_DIR=$(bash scripts/torch-home.sh)

case "$LIBTORCH" in
  debian | wheel) ;;
  *) echo "setup: NMT_LIBTORCH must be 'debian' or 'wheel', not '$LIBTORCH'" >&2; exit 2 ;;
esac

packages=(
  g++ cmake pkg-config make
  libgloo-dev             # headers of the Gloo library LibTorch's c10d uses (data-parallel training)
  libopenblas0-pthread    # without it LibTorch 1.13's matrix products use the reference BLAS (~30x slower)
  libsentencepiece-dev    # subword segmentation
  libcli11-dev            # command line
  libfmt-dev              # fmt, where the LibTorch found ships none of its own (Debian's 1.13)
  nlohmann-json3-dev      # JSON for configs, --json output, metrics.jsonl
  libcpp-httplib-dev      # HTTP/1.1 server of `nmt serve` (tests: its API over loopback)
  libgtest-dev            # test suite
  libpugixml-dev          # tests: an XML parser of someone else's reads the SVG/HTML nmt writes
  zlib1g-dev              # tests: reading the report's PNG screenshot
  chromium                # tests: the HTML report rendered in a real headless browser
  bsdutils                # tests: `script` drives the interactive translator through a pseudo-terminal
)
[[ "$LIBTORCH" == debian ]] && packages+=(libtorch-dev)  # LibTorch 1.13 (CPU): tensors and autograd
if [[ "${NMT_SETUP_BENCH:-0}" == 1 ]]; then
  packages+=(libbenchmark-dev)
  packages+=(wrk)  # scripts/bench-serve.sh: HTTP load on `nmt serve`
  [[ "$LIBTORCH" == debian ]] && packages+=(python3-torch)  # the reference on the same LibTorch 1.13
fi

install_debian_packages() {
  local missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    echo "setup: all ${#packages[@]} Debian packages present"
    return
  fi
  echo "setup: installing ${missing[*]}"
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# pip of whichever Python runs the benchmark's reference (pyenv's or Debian's).
pip_cmd() {
  if command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
    echo "python3 -m pip"
  else
    echo "/usr/bin/python3 -m pip"
  fi
}

# The wheel, unpacked once per version: a finished unpack is marked by .nmt-complete, so an
# interrupted one is redone rather than half used.
install_torch_wheel() {
  if [[ -f "$TORCH_HOME_DIR/.nmt-complete" ]]; then
    echo "setup: LibTorch $TORCH_VERSION (PyTorch wheel) present in $TORCH_HOME_DIR"
  else
    echo "setup: installing the PyTorch $TORCH_VERSION wheel's LibTorch into $TORCH_HOME_DIR"
    rm -rf "$TORCH_HOME_DIR"
    mkdir -p "$TORCH_HOME_DIR"
    # --no-deps: the CUDA wheels it names are gigabytes; the C++ library needs none of them but
    # the CUDA runtime, checked below. --no-compile: the C++ build needs no .pyc files.
    $(pip_cmd) install -q --root-user-action=ignore --no-deps --no-compile --no-warn-script-location --target "$TORCH_HOME_DIR" \
      "torch==$TORCH_VERSION"
    touch "$TORCH_HOME_DIR/.nmt-complete"
  fi
  local lib missing=() found
  found=$(ldconfig -p)
  for lib in libcudart.so.13 libcupti.so.13; do
    grep -q "$lib" <<< "$found" || missing+=("$lib")
  done
  if ((${#missing[@]})); then
    echo "setup: the PyTorch wheel's libtorch_cpu.so needs ${missing[*]} (the CUDA 13 runtime) and the" \
      "dynamic linker finds none; install the CUDA 13 toolkit or the nvidia-cuda-runtime and" \
      "nvidia-cuda-cupti wheels and add their lib folders to /etc/ld.so.conf.d" >&2
    exit 1
  fi
  if [[ "${NMT_SETUP_BENCH:-0}" == 1 ]]; then
    # The Python side of the same wheel (the benchmark's reference): its pure-Python needs, and
    # the CUDA libraries `import torch` loads that the CUDA toolkit lacks (NCCL of the wheel's
    # version, NVSHMEM, cuSPARSELt, cuFile), pinned as the wheel pins them, into a folder of
    # their own so the C++ build (NMT_CUDA=AUTO) still sees a CPU-only machine.
    $(pip_cmd) install -q --root-user-action=ignore filelock typing-extensions sympy networkx jinja2 fsspec numpy
    local deps="$TORCH_HOME_DIR-cuda-deps"
    if [[ ! -f "$deps/.nmt-complete" ]]; then
      local pins
      pins=$(sed -nE 's/^Requires-Dist: (nvidia-(nccl|nvshmem|cusparselt)-cu[0-9]+==[0-9.]+).*/\1/p;
                      s/^Requires-Dist: cuda-toolkit\[.*\]==([0-9.]+).*/cuda-toolkit[cufile]==\1/p' \
        "$TORCH_HOME_DIR"/torch-*.dist-info/METADATA)
      echo "setup: installing $(echo $pins) into $deps (the benchmark's Python PyTorch)"
      rm -rf "$deps"
      # shellcheck disable=SC2086
      $(pip_cmd) install -q --root-user-action=ignore --no-compile --target "$deps" $pins
      touch "$deps/.nmt-complete"
    fi
  fi
}

# scripts/bench-ct2.sh's other engine, pinned: the newest CPU wheel on PyPI when it was set.
CT2_VERSION=4.8.5
SENTENCEPIECE_VERSION=0.2.3
install_ctranslate2() {
  local have
  have=$(python3 -c 'import ctranslate2, sentencepiece; print(ctranslate2.__version__, sentencepiece.__version__)' 2>/dev/null || true)
  if [[ "$have" == "$CT2_VERSION $SENTENCEPIECE_VERSION" ]]; then
    echo "setup: CTranslate2 $CT2_VERSION and SentencePiece $SENTENCEPIECE_VERSION (Python) present"
    return
  fi
  echo "setup: installing CTranslate2 $CT2_VERSION and SentencePiece $SENTENCEPIECE_VERSION (Python)"
  # Not fatal: only scripts/bench-ct2.sh and one ctest (skipped without them) need these.
  $(pip_cmd) install -q --root-user-action=ignore "ctranslate2==$CT2_VERSION" "sentencepiece==$SENTENCEPIECE_VERSION" ||
    echo "setup: WARNING: CTranslate2/SentencePiece not installed; scripts/bench-ct2.sh cannot run" >&2
}

install_debian_packages
[[ "$LIBTORCH" == wheel ]] && install_torch_wheel
[[ "${NMT_SETUP_BENCH:-0}" == 1 ]] && install_ctranslate2
echo "setup: done (NMT_LIBTORCH=$LIBTORCH)"
