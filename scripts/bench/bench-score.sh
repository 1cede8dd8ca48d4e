#!/usr/bin/env bash
# Times `nmt bleu` (the launcher scores without loading LibTorch: app/launcher/main.cc) against
# the sacreBLEU 2.6.0 command line on the same inputs:
#   * paired bootstrap resampling: 1,000 resamples, 3 systems, 1,000 sentences (BLEU + chrF,
#     then BLEU + chrF + TER);
#   * TER of one system on test_2016_flickr;
#   * --confidence (1,000 resamples) of one system, BLEU + chrF;
#   * paired approximate randomisation (10,000 trials), 3 systems, BLEU + chrF.
# The references are Multi30k's test_2016_flickr.fr; the systems are deterministic
# perturbations of it (dropped, swapped, shifted and replaced words: scripts/gen/synth_systems.py).
# Each command runs NMT_BENCH_REPEAT times (default 3) and the fastest wall and CPU times are
# kept; the outputs of the two programs are compared byte for byte. The machine's load average is
# printed before and after.
#
#   bash scripts/bench/bench-score.sh [build/nmt]   (needs: pip install sacrebleu==2.6.0)
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
nmt="$(realpath "${1:-$root/build/nmt}")"
data="${NMT_DATA:-$root/../shared/data}"
ref="$data/multi30k/test_2016_flickr.fr"
repeat="${NMT_BENCH_REPEAT:-3}"
[[ -x "$nmt" ]] || { echo "bench-score: no nmt binary at $nmt (build the nmt_cli target)" >&2; exit 1; }
[[ -f "$ref" ]] || { echo "bench-score: no reference at $ref (set NMT_DATA)" >&2; exit 1; }
python3 -c 'import sacrebleu, sys; sys.exit(sacrebleu.__version__ != "2.6.0")' ||
  { echo "bench-score: needs sacreBLEU 2.6.0 (pip install sacrebleu==2.6.0)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$ref" "$work/ref.txt"
python3 "$root/scripts/gen/synth_systems.py" "$work/ref.txt" "$work"  # sys1.txt, sys2.txt, sys3.txt

# The fastest of $repeat runs: "wall cpu" in seconds (cpu = user + system of the command, from
# wait4, which a busy machine inflates less than wall time; both to the microsecond, as nmt's
# runs take a few hundredths of a second); the output of the last run goes to $1.
best_time() {
  python3 - "$repeat" "$@" <<'PY'
import os, subprocess, sys, time
repeat, out, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
best_wall = best_cpu = float("inf")
for _ in range(repeat):
    with open(out, "wb") as f:
        start = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=f, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(child.pid, 0)
        best_wall = min(best_wall, time.perf_counter() - start)
        best_cpu = min(best_cpu, usage.ru_utime + usage.ru_stime)
print(f"{best_wall:.6f} {best_cpu:.6f}")
PY
}

cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "CPU: $cpu ($(nproc) cores), sacreBLEU 2.6.0 (Python $(python3 -c 'import platform; print(platform.python_version())'), numpy $(python3 -c 'import numpy; print(numpy.__version__)')), best of $repeat runs"
echo "load average before measuring: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| task | sacreBLEU 2.6.0 | nmt bleu | speed-up | same output |"
echo "|---|---|---|---|---|"
cd "$work"
export NO_COLOR=1
unset SACREBLEU_SEED SACREBLEU_FORMAT
ratio() { python3 -c "print(f'{$1/max($2, 1e-6):.1f}x')"; }
secs() { python3 -c "print(f'{$1:.3f}')"; }
row() {
  local task="$1"; shift
  read -r s_wall s_cpu < <(best_time sacre.out python3 -m sacrebleu "$@")
  read -r n_wall n_cpu < <(best_time nmt.out "$nmt" bleu "$@")
  local same=no
  cmp -s sacre.out nmt.out && same=yes
  echo "| $task | $(secs "$s_wall") s (cpu $(secs "$s_cpu") s) | $(secs "$n_wall") s (cpu $(secs "$n_cpu") s) |" \
       "$(ratio "$s_wall" "$n_wall") (cpu $(ratio "$s_cpu" "$n_cpu")) | $same |"
}
row "paired bootstrap, 1,000 resamples, 3 systems x 1,000 sentences, BLEU + chrF" \
  ref.txt -i sys1.txt sys2.txt sys3.txt -m bleu chrf --paired-bs -f text
row "paired bootstrap, same, BLEU + chrF + TER" \
  ref.txt -i sys1.txt sys2.txt sys3.txt -m bleu chrf ter --paired-bs -f text
row "TER, one system, test_2016_flickr (1,000 sentences)" ref.txt -i sys3.txt -m ter -f text
row "--confidence, 1,000 resamples, BLEU + chrF" ref.txt -i sys2.txt -m bleu chrf --confidence -f text
row "paired approximate randomisation, 10,000 trials, 3 systems, BLEU + chrF" \
  ref.txt -i sys1.txt sys2.txt sys3.txt -m bleu chrf --paired-ar -f text
echo
echo "load average after measuring: $(cut -d' ' -f1-3 /proc/loadavg)"
