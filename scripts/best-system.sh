#!/usr/bin/env bash
# nmt's best Multi30k-only English→French system, trained from scratch within one hour on two
# CPU threads (issue 17), and the filter that translates with it.
#
#   scripts/best-system.sh train DIR       subword model, training, checkpoint averaging and
#                                          the choice of decoding, all selected on val only;
#                                          everything it takes counts against the hour
#   scripts/best-system.sh translate DIR   English lines on stdin → French lines on stdout,
#                                          one line per line, with what `train` chose
#
# Build nmt against the PyTorch wheel's LibTorch for this (NMT_LIBTORCH=wheel; README, "Best
# system"): on a 2-core Zen 3 it made 188 updates of the recipe in 3 minutes where Debian's
# LibTorch 1.13 with OpenBLAS made 149 (MKL's matrix products, no OpenBLAS threads spinning in
# sched_yield), and the hour is a number of updates.
#
# Environment: NMT_DATA (default ../shared/data, else scripts/get-data.sh), NMT_THREADS
# (default 2), NMT_BEST_TRAIN_TIME (default 56m: the hour less subword training, averaging and
# the selection on val, which take 2-3 minutes). Re-running `train` on the same DIR resumes.
# The choice is DIR/system.json; DIR/selection.tsv is the table of everything tried on val.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
nmt=${NMT_BIN:-$here/build/nmt}
threads=${NMT_THREADS:-2}

usage() {
  echo "usage: scripts/best-system.sh train DIR | translate DIR" >&2
  exit 2
}
(($# == 2)) || usage
command=$1
dir=$2

# The recipe (chosen on val: see the README's "Best system" section) is the gru-small-1h preset:
# gru-small with one GRU layer, dropout 0.3, its joint 8k SentencePiece vocabulary, a linear decay
# of the learning rate from 0.005 to 0 as the time budget ends instead of inverse-sqrt, so the last
# updates run at a small rate, validation from update 2400 on, and checkpoints every 50 updates,
# the last 8 kept, to average.
recipe=(--preset gru-small-1h)

read_bleu() { python3 -c 'import json,sys; print(json.load(sys.stdin)["bleu"]["score"])'; }

val_bleu() {  # MODEL [decoding options...] → BLEU of val
  local model=$1
  shift
  "$nmt" eval -m "$model" --src "$data/multi30k/val.en" --ref "$data/multi30k/val.fr" --threads "$threads" \
    --json -q --no-record "$@" | read_bleu
}

# consider MODEL BEAM ALPHA ("-" for greedy): scores it on val, adds its row to selection.tsv and
# makes it the best (train's best, best_model, best_beam, best_alpha) if it beats the best so far.
consider() {
  local model=$1 beam=$2 alpha=$3 bleu
  if ((beam == 1)); then bleu=$(val_bleu "$dir/$model"); else bleu=$(val_bleu "$dir/$model" --beam "$beam" --alpha "$alpha"); fi
  printf '%s\t%s\t%s\t%s\n' "$model" "$beam" "$alpha" "$bleu" | tee -a "$dir/selection.tsv" >&2
  if python3 -c "import sys; sys.exit(0 if $bleu > $best else 1)"; then
    best=$bleu best_model=$model best_beam=$beam best_alpha=${alpha/#-/0}
  fi
}

find_data() {
  if [[ -n "${NMT_DATA:-}" ]]; then
    data=$NMT_DATA
  elif [[ -f "$here/../shared/data/multi30k/train.en" ]]; then
    data=$here/../shared/data
  else
    bash "$here/scripts/get-data.sh" --dest "$here/data/downloaded" >&2
    data=$here/data/downloaded
  fi
  for f in train.en train.fr val.en val.fr; do
    [[ -f "$data/multi30k/$f" ]] || { echo "best-system: $data/multi30k/$f not found (set NMT_DATA)" >&2; exit 1; }
  done
}

ensure_binary() {
  [[ -x "$nmt" ]] && return
  echo "best-system: building nmt (NMT_LIBTORCH=${NMT_LIBTORCH:-}; not counted against the hour)" >&2
  cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=Release >/dev/null  # CMake reads NMT_LIBTORCH
  cmake --build "$here/build" -j "$threads" --target nmt_cli >&2
}

train() {
  ensure_binary
  find_data
  mkdir -p "$dir"
  local start=$SECONDS
  "$nmt" train "${recipe[@]}" --train "$data/multi30k/train" --valid "$data/multi30k/val" --out "$dir/gru" \
    --threads "$threads" --max-time "${NMT_BEST_TRAIN_TIME:-56m}" --log-every 50
  # Candidates, each scored on val: the best validated checkpoint and averages of the last ones.
  rm -rf "$dir/gru-avg4" "$dir/gru-avg8"  # a re-run averages the resumed run's last checkpoints again
  "$nmt" average "$dir/gru" --last 4 -o "$dir/gru-avg4" >/dev/null
  "$nmt" average "$dir/gru" --last 8 -o "$dir/gru-avg8" >/dev/null
  printf 'weights\tbeam\talpha\tval BLEU\n' >"$dir/selection.tsv"
  local best_model="" best_beam=1 best_alpha=0 best=-1 model setting
  for model in gru gru-avg4 gru-avg8; do consider "$model" 1 -; done
  local greedy_model=$best_model greedy_bleu=$best
  # Beam search on the best weights: alpha 1.4 was the edge of the first grid (0.6 / 1.0 / 1.4) in
  # both runs that had it, so the grid goes on past it; 8 tells whether a wider beam pays.
  for setting in "5 1.0" "5 1.4" "5 1.8" "5 2.2" "8 1.4" "8 1.8"; do consider "$greedy_model" $setting; done
  local seconds=$((SECONDS - start))
  python3 - "$dir/system.json" "$best_model" "$best_beam" "$best_alpha" "$best" "$greedy_model" "$greedy_bleu" \
    "$seconds" <<'EOF'
import json, os, sys
path, model, beam, alpha, bleu, greedy_model, greedy_bleu, seconds = sys.argv[1:]
system = {"model": model, "beam": int(beam), "alpha": float(alpha), "val_bleu": float(bleu),
          "greedy": {"model": greedy_model, "val_bleu": float(greedy_bleu)}, "seconds": int(seconds)}
tmp = path + ".tmp"
with open(tmp, "w") as f:
    json.dump(system, f, indent=1)
    f.write("\n")
os.replace(tmp, path)
EOF
  printf 'best-system: %s, beam %s, alpha %s: val BLEU %s (greedy, one model: %s %s); everything took %dm%02ds\n' \
    "$best_model" "$best_beam" "$best_alpha" "$best" "$greedy_model" "$greedy_bleu" $((seconds / 60)) \
    $((seconds % 60)) >&2
}

translate() {
  [[ -f "$dir/system.json" ]] || { echo "best-system: $dir/system.json not found: run 'scripts/best-system.sh train $dir' first" >&2; exit 1; }
  ensure_binary
  local settings
  settings=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["model"], s["beam"], s["alpha"])' \
    "$dir/system.json")
  read -r model beam alpha <<<"$settings"
  exec "$nmt" translate -m "$dir/$model" --beam "$beam" --alpha "$alpha" --threads "$threads" -q
}

case "$command" in
  train) train ;;
  translate) translate ;;
  *) usage ;;
esac
