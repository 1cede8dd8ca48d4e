#!/usr/bin/env bash
# Installs nmt's build and test dependencies. Idempotent: what is already present is skipped.
#
# Which LibTorch, one switch:
#   NMT_LIBTORCH=debian  (default) Debian 12's libtorch-dev, LibTorch 1.13, CPU.
#   NMT_LIBTORCH=wheel   LibTorch 2.x from the pinned PyTorch wheel on PyPI (NMT_TORCH_VERSION,
#                        default below), unpacked with `pip install --no-deps --target` into
#                        NMT_TORCH_HOME (default ~/.cache/nmt/torch-VERSION), where CMake finds it
#                        when configured with the same NMT_LIBTORCH=wheel (see CMakeLists.txt).
#                        pip is that of nmt's own venv (~/.cache/nmt/venv): no Python package
#                        of the user's, and no LibTorch outside ~/.cache/nmt, is replaced.
#   NMT_LIBTORCH=none    no LibTorch: what the build without it needs (`nmt translate`, `eval`,
#                        `serve` and `bleu` on nmt's CPU engine, the torch-free tests): SentencePiece,
#                        ICU, Gumbo, oneDNN, cpp-httplib; no protobuf, Chromium...
#                        (cmake -S . -B build-none -DNMT_LIBTORCH=none). With NMT_SCORER_ONLY=1,
#                        only what the scorer-only build (`nmt bleu`) and the Python module
#                        nmt_score need (cmake ... -DNMT_LIBTORCH=none -DNMT_SCORER_ONLY=ON).
# Either way the other Debian packages below are installed (apt-get, as root or through sudo;
# what is missing is named before it is installed). Debian 12 only: elsewhere it stops at once. NMT_SETUP_BENCH=1 adds what
# scripts/bench/bench.sh needs: Python PyTorch of the same LibTorch (python3-torch for Debian's, the
# same wheel's Python side for the wheel), Google Benchmark and wrk (scripts/bench/bench-serve.sh), and
# CTranslate2 with SentencePiece's Python module (scripts/bench/bench-ct2.sh: nmt against CTranslate2
# on the same weights; its converter reads model.pt with the wheel's Python PyTorch).
# NMT_SETUP_REFERENCE=1 (with NMT_LIBTORCH=wheel; CI's wheel build sets it, NMT_SETUP_BENCH=1
# implies it) adds the Python references the equivalence tests compare nmt with: the wheel's
# Python PyTorch, transformers and safetensors (tests/equivalence/marian_import.sh: `nmt import`
# against transformers' generate()), CTranslate2 and SentencePiece
# (tests/equivalence/ct2_equivalence.sh), pinned.
set -euo pipefail
cd "$(dirname "$0")/.."

LIBTORCH=${NMT_LIBTORCH:-debian}
# The pin (scripts/torch-wheel.version): the newest PyTorch on PyPI when it was set. PyPI's Linux
# wheel is the CUDA 13 build: even its libtorch_cpu.so needs the CUDA runtime (libcudart.so.13,
# libcupti.so.13). Those two come from NVIDIA's own wheels on PyPI (nvidia-cuda-runtime,
# nvidia-cuda-cupti, 14 MB), unpacked next to torch/ in the same folder: libtorch_cpu.so's RPATH
# ($ORIGIN/../../nvidia/cu13/lib) finds them there, so nothing goes into the system's library
# path and no CUDA toolkit is needed. CMake then builds against the wheel's CPU libraries
# without LibTorch's CMake package, which insists on a CUDA toolkit (CMakeLists.txt); with a
# toolkit present, the CUDA build works as before.
TORCH_VERSION=${NMT_TORCH_VERSION:-$(head -n 1 scripts/torch-wheel.version)}
TORCH_HOME_DIR=$(bash scripts/torch-home.sh)
NMT_CACHE=$(dirname "$TORCH_HOME_DIR")
VENV=$NMT_CACHE/venv  # nmt's own Python: pip for the wheel and the benchmarks' packages

say() { echo "setup: $*"; }
die() { echo "setup: $*" >&2; exit 1; }

case "$LIBTORCH" in
  debian | wheel | none) ;;
  *) echo "setup: NMT_LIBTORCH must be 'debian', 'wheel' or 'none', not '$LIBTORCH'" >&2; exit 2 ;;
esac
if [[ "${NMT_SETUP_REFERENCE:-0}" == 1 && "$LIBTORCH" != wheel ]]; then
  echo "setup: NMT_SETUP_REFERENCE=1 needs NMT_LIBTORCH=wheel (transformers needs the wheel's PyTorch 2.x)" >&2
  exit 2
fi

# Debian 12 is what the package list below is written for; elsewhere say so before anything.
os_id=$( (. /etc/os-release 2>/dev/null && echo "${ID:-?} ${VERSION_ID:-?}") || echo "unknown")
if [[ "$os_id" != "debian 12" && "${NMT_SETUP_ANY_OS:-0}" != 1 ]]; then
  die "this is '$os_id'; set-up supports Debian 12 (bookworm) only: install the packages named in scripts/setup.sh by hand, or set NMT_SETUP_ANY_OS=1 to try anyway"
fi

# The scorer alone (NMT_LIBTORCH=none NMT_SCORER_ONLY=1): nmt_score, `nmt bleu` and its tests,
# the Python module (python3-dev for its headers, python3-venv for pip in nmt's own venv).
scorer_packages=(
  g++ cmake pkg-config make
  libcli11-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libpugixml-dev  # the torch-free tests
  python3 python3-dev python3-venv
)
# The build without LibTorch (NMT_LIBTORCH=none): the scorer's, and what translates on the engine.
engine_packages=(
  "${scorer_packages[@]}"
  libsentencepiece-dev libicu-dev libgumbo-dev libcpp-httplib-dev libdnnl-dev
)
packages=(
  g++ cmake pkg-config make
  libgloo-dev             # headers of the Gloo library LibTorch's c10d uses (data-parallel training)
  libopenblas0-pthread    # without it LibTorch 1.13's matrix products use the reference BLAS (~30x slower)
  libsentencepiece-dev    # subword segmentation
  libprotobuf-dev         # protobuf, loaded first in every binary (CMakeLists.txt: nmt_executable_link)
  libcli11-dev            # command line
  libicu-dev              # ICU's sentence BreakIterator: paragraphs split into sentences
  libgumbo-dev            # Gumbo, an HTML5 parser: `nmt translate --format html`
  libfmt-dev              # fmt, where the LibTorch found ships none of its own (Debian's 1.13)
  nlohmann-json3-dev      # JSON for configs, --json output, metrics.jsonl
  libcpp-httplib-dev      # HTTP/1.1 server of `nmt serve` (tests: its API over loopback)
  libdnnl-dev             # oneDNN: the CPU engine's float32 matrix products (lib/nmt/engine/linear.h)
  libgtest-dev            # test suite
  libpugixml-dev          # tests: an XML parser of someone else's reads the SVG/HTML nmt writes
  zlib1g-dev              # tests: reading the report's PNG screenshot
  chromium                # tests: the HTML report rendered in a real headless browser
  bsdutils                # tests: `script` drives the interactive translator through a pseudo-terminal
  python3                 # tests: the docs checks (scripts/checks/*.py)
  curl ca-certificates    # scripts/get-data.sh downloads Multi30k and Tatoeba
)
if [[ "$LIBTORCH" == none ]]; then
  packages=("${engine_packages[@]}")
  [[ "${NMT_SCORER_ONLY:-0}" == 1 ]] && packages=("${scorer_packages[@]}")
fi
[[ "$LIBTORCH" == debian ]] && packages+=(libtorch-dev)  # LibTorch 1.13 (CPU): tensors and autograd
[[ "$LIBTORCH" == wheel ]] && packages+=(python3-venv)   # pip, in nmt's own venv, fetches the wheel
if [[ "${NMT_SETUP_BENCH:-0}" == 1 ]]; then
  packages+=(libbenchmark-dev python3-venv)
  packages+=(wrk)  # scripts/bench/bench-serve.sh: HTTP load on `nmt serve`
  [[ "$LIBTORCH" == debian ]] && packages+=(python3-torch)  # the reference on the same LibTorch 1.13
fi

install_debian_packages() {
  local missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    say "all ${#packages[@]} Debian packages present"
    return
  fi
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null ||
      die "installing Debian packages needs root, and there is no sudo: as root run: apt-get install ${missing[*]}"
    sudo=sudo
  fi
  first_apt_error() { grep -m 1 -E '^(E|W|dpkg): ' "$1" | cut -c 1-240 || echo "no error line"; }
  say "will install ${#missing[@]} Debian packages (apt-get, with their dependencies): ${missing[*]}"
  local log
  log=$(mktemp /tmp/nmt-setup-apt.XXXXXX)
  export DEBIAN_FRONTEND=noninteractive
  # apt's first error goes into the one line (a log inside a throw-away root, as in CI, is lost)
  $sudo apt-get update -qq > "$log" 2>&1 && ! grep -qE '^(W|E): (Failed|Some index)' "$log" ||
    die "apt-get update could not reach Debian's package archive (network or proxy?): $(first_apt_error "$log") (all its messages: $log)"
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >> "$log" 2>&1 ||
    die "apt-get install failed (no network, a full disk or a held package?): $(first_apt_error "$log") (all its messages: $log)"
  rm -f "$log"
}

# nmt's own venv under ~/.cache/nmt: pip for the wheel (Debian's python3 has none, and its
# packages are the system's) without touching any Python package of the user's.
venv_pip() {
  if [[ ! -x "$VENV/bin/pip" ]]; then
    rm -rf "$VENV"
    mkdir -p "$NMT_CACHE"
    /usr/bin/python3 -m venv "$VENV" || die "could not make a Python venv in $VENV (python3-venv installed? disk full?)"
  fi
  "$VENV/bin/python3" -m pip --disable-pip-version-check "$@"
}

# The wheel, unpacked once per version into a folder of its own: pip unpacks into NAME.partial
# and only a finished unpack is renamed into place and marked .nmt-complete, so an interrupted
# or failed one (a full disk) is never used: the next run starts it again.
install_torch_wheel() {
  if [[ -f "$TORCH_HOME_DIR/.nmt-complete" ]]; then
    say "LibTorch $TORCH_VERSION (PyTorch wheel) present in $TORCH_HOME_DIR"
  else
    local partial=$TORCH_HOME_DIR.partial log=$TORCH_HOME_DIR.log
    say "will install the PyTorch $TORCH_VERSION wheel's LibTorch (540 MB download, 1.9 GB unpacked)" \
      "and the CUDA runtime it loads (nvidia-cuda-runtime, nvidia-cuda-cupti) into $TORCH_HOME_DIR"
    rm -rf "$partial" "$TORCH_HOME_DIR"
    mkdir -p "$partial"
    # --no-deps: the CUDA wheels it names are gigabytes; the C++ library loads only the runtime,
    # whose version the wheel pins through cuda-toolkit[...]==X (two wheels of a few MB).
    # --no-compile: the C++ build needs no .pyc files.
    local pip_args=(install -q --no-compile --no-warn-script-location --target "$partial")
    if ! venv_pip "${pip_args[@]}" --no-deps "torch==$TORCH_VERSION" > "$log" 2>&1; then
      rm -rf "$partial"
      die "pip could not fetch or unpack torch==$TORCH_VERSION into $partial (network? $(df -h --output=avail "$NMT_CACHE" | tail -n 1 | tr -d ' ') free there, 2.5 GB needed); pip's messages: $log"
    fi
    local toolkit
    toolkit=$(sed -nE 's/^Requires-Dist: cuda-toolkit\[.*\]==([0-9.]+).*/\1/p' "$partial"/torch-*.dist-info/METADATA)
    [[ -n "$toolkit" ]] || die "torch==$TORCH_VERSION names no cuda-toolkit pin in its METADATA: set-up does not know this wheel"
    if ! venv_pip "${pip_args[@]}" "cuda-toolkit[cudart,cupti]==$toolkit" >> "$log" 2>&1; then
      rm -rf "$partial"
      die "pip could not install the CUDA runtime wheels (cuda-toolkit[cudart,cupti]==$toolkit) into $partial; pip's messages: $log"
    fi
    touch "$partial/.nmt-complete"
    mv "$partial" "$TORCH_HOME_DIR"
    rm -f "$log"
  fi
  local lib=$TORCH_HOME_DIR/torch/lib/libtorch_cpu.so missing
  missing=$(ldd "$lib" 2>&1 | sed -nE 's/^\s*(\S+) => not found/\1/p' | tr '\n' ' ')
  [[ -z "$missing" ]] || die "$lib cannot load: ${missing}not found; remove $TORCH_HOME_DIR and run set-up again"
  if [[ "${NMT_SETUP_BENCH:-0}" == 1 || "${NMT_SETUP_REFERENCE:-0}" == 1 ]]; then
    # The Python side of the same wheel (the references of the benchmarks and equivalence tests):
    # its pure-Python needs, and every CUDA library `import torch` loads (cuBLAS, cuDNN, NCCL...),
    # pinned as the wheel pins them, into a folder of their own so the C++ build (NMT_CUDA=AUTO)
    # still sees a CPU-only machine. None is taken from a CUDA toolkit the machine may have.
    local log
    log=$(mktemp /tmp/nmt-setup-pip.XXXXXX)
    venv_pip install -q filelock typing-extensions sympy networkx jinja2 fsspec numpy > "$log" 2>&1 ||
      die "pip could not install the Python side of the PyTorch wheel (filelock, sympy, numpy...): network? disk? pip's messages: $log"
    local deps="$TORCH_HOME_DIR-cuda-deps" pins
    pins=$(sed -nE 's/^Requires-Dist: (nvidia-[a-z0-9-]+==[0-9.]+).*/\1/p; s/^Requires-Dist: (cuda-toolkit\[[a-z0-9_,]+\]==[0-9.]+).*/\1/p' \
      "$TORCH_HOME_DIR"/torch-*.dist-info/METADATA | sort | tr '\n' ' ')
    if [[ ! -f "$deps/.nmt-complete" || "$(cat "$deps/.nmt-complete")" != "$pins" ]]; then
      say "installing $pins into $deps (the CUDA libraries the wheel's Python side loads, ~3 GB)"
      rm -rf "$deps"
      # shellcheck disable=SC2086
      if ! venv_pip install -q --no-compile --target "$deps" $pins > "$log" 2>&1; then
        rm -rf "$deps"
        die "pip could not install the CUDA libraries the wheel's Python side loads into $deps (network? disk?); pip's messages: $log"
      fi
      echo "$pins" > "$deps/.nmt-complete"
    fi
    rm -f "$log"
  fi
}

# scripts/bench/bench-ct2.sh's other engine, pinned: the newest CPU wheel on PyPI when it was set.
CT2_VERSION=4.8.5
SENTENCEPIECE_VERSION=0.2.3
install_ctranslate2() {
  local have
  have=$("$VENV/bin/python3" -c 'import ctranslate2, sentencepiece; print(ctranslate2.__version__, sentencepiece.__version__)' 2>/dev/null || true)
  if [[ "$have" == "$CT2_VERSION $SENTENCEPIECE_VERSION" ]]; then
    echo "setup: CTranslate2 $CT2_VERSION and SentencePiece $SENTENCEPIECE_VERSION (Python) present"
    return
  fi
  echo "setup: installing CTranslate2 $CT2_VERSION and SentencePiece $SENTENCEPIECE_VERSION (Python)"
  # Not fatal: only scripts/bench/bench-ct2.sh and one ctest (skipped without them) need these.
  venv_pip install -q "ctranslate2==$CT2_VERSION" "sentencepiece==$SENTENCEPIECE_VERSION" ||
    echo "setup: WARNING: CTranslate2/SentencePiece not installed; scripts/bench/bench-ct2.sh cannot run" >&2
}

# The references of the equivalence tests, pinned (the newest on PyPI when they were set). Where
# they are asked for, failing to install them is an error: the tests would only be skipped.
TRANSFORMERS_VERSION=5.24.0
SAFETENSORS_VERSION=0.8.0
LIBRETRANSLATEPY_VERSION=2.1.4  # LibreTranslate's client: `nmt serve` speaks its API
install_reference() {
  local want="$TRANSFORMERS_VERSION $SAFETENSORS_VERSION $CT2_VERSION $SENTENCEPIECE_VERSION $LIBRETRANSLATEPY_VERSION" have
  have=$("$VENV/bin/python3" -c 'import transformers, safetensors, ctranslate2, sentencepiece as s, importlib.metadata as m
print(transformers.__version__, safetensors.__version__, ctranslate2.__version__, s.__version__, m.version("libretranslatepy"))' 2>/dev/null || true)
  if [[ "$have" == "$want" ]] &&
    PYTHONPATH="$TORCH_HOME_DIR:$TORCH_HOME_DIR-cuda-deps" "$VENV/bin/python3" -c 'import torch' 2>/dev/null; then
    say "transformers $TRANSFORMERS_VERSION, safetensors, CTranslate2, SentencePiece and libretranslatepy (Python) present"
    return
  fi
  say "installing transformers $TRANSFORMERS_VERSION, safetensors $SAFETENSORS_VERSION, CTranslate2 $CT2_VERSION, SentencePiece $SENTENCEPIECE_VERSION and libretranslatepy $LIBRETRANSLATEPY_VERSION (Python, for the equivalence tests)"
  local log
  log=$(mktemp /tmp/nmt-setup-pip.XXXXXX)
  venv_pip install -q "transformers==$TRANSFORMERS_VERSION" "safetensors==$SAFETENSORS_VERSION" \
    "ctranslate2==$CT2_VERSION" "sentencepiece==$SENTENCEPIECE_VERSION" "libretranslatepy==$LIBRETRANSLATEPY_VERSION" \
    > "$log" 2>&1 ||
    die "pip could not install the equivalence tests' Python references (network? disk?); pip's messages: $log"
  # The tests import them beside the wheel's PyTorch: checked here, once, rather than skipped there.
  PYTHONPATH="$TORCH_HOME_DIR:$TORCH_HOME_DIR-cuda-deps" "$VENV/bin/python3" -c 'import torch, transformers, ctranslate2, libretranslatepy' \
    >> "$log" 2>&1 || die "the references do not import beside the wheel's PyTorch; python's messages: $log"
  rm -f "$log"
}

install_debian_packages
[[ "$LIBTORCH" == wheel ]] && install_torch_wheel
if [[ "${NMT_SETUP_REFERENCE:-0}" == 1 ]]; then
  install_reference
elif [[ "${NMT_SETUP_BENCH:-0}" == 1 ]]; then
  install_ctranslate2
fi
echo "setup: done (NMT_LIBTORCH=$LIBTORCH)"
