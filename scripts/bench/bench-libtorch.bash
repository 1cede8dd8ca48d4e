# Sourced by bench.sh and bench-train.sh (after ROOT is set): the nmt binary, the Python of the
# eager-PyTorch reference and the build folder of the LibTorch pair NMT_LIBTORCH names:
#   debian (default)  build/nmt on Debian's LibTorch 1.13, Debian's python3-torch 1.13
#   wheel             build-wheel/nmt on the pinned wheel's LibTorch 2.x, the Python side of the
#                     same wheel (PYTHONPATH: scripts/torch-home.sh's folder)
# NMT_BINARY and NMT_PYTHON override the binary and the Python. Exits 2 on another value.
LIBTORCH=${NMT_LIBTORCH:-debian}
case "$LIBTORCH" in
  debian) NMT=${NMT_BINARY:-$ROOT/build/nmt}; PY=${NMT_PYTHON:-/usr/bin/python3}; BUILD=$ROOT/build ;;
  wheel)
    NMT=${NMT_BINARY:-$ROOT/build-wheel/nmt}; PY=$(bash "$ROOT/scripts/nmt-python.sh"); BUILD=$ROOT/build-wheel
    home=$(bash "$ROOT/scripts/torch-home.sh")
    export PYTHONPATH="$home:$home-cuda-deps${PYTHONPATH:+:$PYTHONPATH}" ;;
  *) echo "$(basename "$0" .sh): NMT_LIBTORCH must be debian or wheel, not '$LIBTORCH'" >&2; exit 2 ;;
esac
