#!/usr/bin/env bash
# A recipe sweep on the GPU machine: train variants of a preset side by side on one GPU, each for
# the number of updates a CPU hour gives it, and print each one's validation BLEU curve. The
# sweep behind gru-small-1h's one-layer recipe (docs/experiments.md) is the default
# variants file, scripts/bench/gpu-sweep.variants.
#
#   scripts/bench/gpu-sweep.sh prepare            on this machine: .device/ with Debian's packages nmt
#                                           builds against, the scripts and Multi30k (ignored by git)
#   bash scripts/bench/gpu-sweep.sh run [FILE]    on the GPU machine, from the repository root, with
#                                           .device carried along: build nmt (the command only,
#                                           no tests) against the installed PyTorch wheel's
#                                           LibTorch with CUDA, then train FILE's variants
#
# Variants file: one per line, NAME STEPS [nmt train options...]; STEPS is the CPU hour's update
# count for that variant (measure its rate on the CPU first: updates in a few minutes of
# `nmt train --max-time`, against the preset's own). Environment: NMT_SWEEP_PRESET (default
# gru-small-1h), NMT_SWEEP_LIMIT (seconds per run, default 600), OUT (results; default /tmp/out).
# A run's lines: "NAME: STEP:BLEU ..." for each validation, then its last log line.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)

prepare() {
  set -e  # a package or file that did not arrive is found here, not on the GPU machine's clock
  cd "$here"
  mkdir -p .device  # ignored by git (.gitignore)
  # ../shared/gpu/fetch-debs.sh's list, plus what the CMake files ask for since: cpp-httplib
  # (`nmt serve`; its .pc file names OpenSSL and Brotli), pugixml (the tests) and ICU (sentences).
  bash "$here/../shared/gpu/fetch-debs.sh" .device/debs >/dev/null
  local state
  state=$(mktemp -d)
  mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
  local o=(-oDir::State::Lists="$state/lists" -oDir::Cache="$state/cache")
  apt-get "${o[@]}" update -qq
  (cd .device/debs && apt-get "${o[@]}" download libcpp-httplib-dev libcpp-httplib0.11 libssl-dev libbrotli-dev \
    libbrotli1 libpugixml-dev libpugixml1v5 libicu-dev libicu72 icu-devtools \
    libgumbo-dev libgumbo1)
  rm -rf "$state"
  rm -rf .device/multi30k .device/build-on-device.sh
  # ../shared is read-only, and cp keeps the mode: make the copies writable so a rerun replaces them.
  cp --no-preserve=mode "$here/../shared/gpu/build-on-device.sh" .device/
  cp -r --no-preserve=mode "${NMT_DATA:-$here/../shared/data}/multi30k" .device/
  du -sh .device
}

run() {
  local variants=${1:-$here/scripts/bench/gpu-sweep.variants} out=${OUT:-/tmp/out}
  local preset=${NMT_SWEEP_PRESET:-gru-small-1h} limit=${NMT_SWEEP_LIMIT:-600} data=$here/.device/multi30k
  variants=$(realpath "$variants")
  cd "$here" || exit 1  # build-on-device.sh builds the tree it is run from
  mkdir -p "$out"
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  # build-on-device.sh builds every target; the sweep needs the command only.
  # shellcheck disable=SC2016  # the text to replace, not an expansion
  sed 's#cmake --build /tmp/b -j"$(nproc)"#cmake --build /tmp/b -j"$(nproc)" --target nmt_cli#' \
    .device/build-on-device.sh >.device/build-cli.sh
  bash .device/build-cli.sh -DNMT_LIBTORCH= -DNMT_CUDA=ON -DNMT_BUILD_TESTS=OFF 2>&1 | tail -25 | tee "$out/build.txt"
  ((PIPESTATUS[0] == 0)) || exit 1  # (a warm machine may still hold an older /tmp/b/nmt)
  export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  /tmp/b/nmt --version | tee -a "$out/build.txt"
  local name steps args
  while read -r name steps args; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    mkdir -p "$out/$name"
    rm -rf "/tmp/runs/$name"  # else a warm machine's earlier run of NAME would resume and stop at once
    # shellcheck disable=SC2086  # args are nmt options, split on purpose
    (timeout "$limit" /tmp/b/nmt train --preset "$preset" --train "$data/train" --valid "$data/val" \
        --out "/tmp/runs/$name" --device cuda --threads 2 --max-steps "$steps" --max-time 30m --save-every 100000 \
        --log-every 100 $args </dev/null >"$out/$name/train.log" 2>&1
      echo "rc=$?" >>"$out/$name/train.log"
      cp "/tmp/runs/$name/metrics.jsonl" "/tmp/runs/$name/config.json" "$out/$name/" 2>/dev/null) &
    sleep 2
  done <"$variants"
  SECONDS=0
  while [[ -n "$(jobs -r)" ]]; do
    sleep 10
    ((SECONDS % 60 < 10)) && nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader >>"$out/smi.txt"
  done
  local d
  while read -r name _; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    d=$out/$name
    # rc=124: stopped by the time limit, before its last validation
    printf '%s: ' "$name"
    grep -o 'step [0-9]* | epoch [0-9]* | loss [0-9.]* | ppl [0-9.]* | BLEU [0-9.]*' "$d/train.log" |
      awk '{printf "%s:%s ", $2, $NF}'
    tail -2 "$d/train.log" | tr '\n' ' '
    echo
  done <"$variants"
}

case "${1:-}" in
  prepare) prepare ;;
  run) run "${2:-}" ;;
  *) echo "usage: scripts/bench/gpu-sweep.sh prepare | run [VARIANTS]" >&2; exit 2 ;;
esac
