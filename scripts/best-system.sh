#!/usr/bin/env bash
# nmt's best Multi30k-only English→French system, trained from scratch within one hour on two
# CPU threads, and the filter that translates with it.
#
#   scripts/best-system.sh train DIR       subword model, training, checkpoint averaging and
#                                          the choice of decoding, all selected on val only;
#                                          everything it takes counts against the hour
#   scripts/best-system.sh translate DIR   English lines on stdin → French lines on stdout,
#                                          one line per line, with what `train` chose
#
# Build nmt against the PyTorch wheel's LibTorch for this (NMT_LIBTORCH=wheel, the README's
# recommended build): on a 2-core Zen 3 it made 188 updates of the recipe in 3 minutes where Debian's
# LibTorch 1.13 with OpenBLAS made 149 (MKL's matrix products, no OpenBLAS threads spinning in
# sched_yield), and the hour is a number of updates.
#
# Environment: NMT_DATA (default ../shared/data, else scripts/get-data.sh), NMT_THREADS
# (default 2), NMT_BEST_TRAIN_TIME (default 55m: the hour less subword training, averaging and
# the selection on val, which took 1.5 minutes on a 2-core Xeon and 4 on a 2-core Zen 3: run N2
# trained 56 minutes there and ended 13 s past the hour; the throughput probe's time comes out of
# it), NMT_BEST_SEED (default 1: the first model's seed), NMT_BEST_MEMBERS (models trained side by
# side, each on NMT_THREADS/N threads with seeds NMT_BEST_SEED, +1, ...; their ensembles are
# candidates on val; default: measured, see probe_members below, 1 with one thread),
# NMT_BEST_MIN_UPDATES (default 4000: the updates each of two models must be projected to make
# for two to be trained), NMT_BEST_OPTIONS (training options added after the recipe's, for
# experiments against it), and NMT_BEST_TATOEBA (default 0; K > 0 trains on K copies of
# Multi30k's training pairs and one of Tatoeba's, DATA/tatoeba-fra-eng/fra.txt, the subword
# model included).
# Re-running `train` on the same DIR resumes. The choice is DIR/system.json; DIR/selection.tsv
# is the table of everything tried on val.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
nmt=${NMT_BIN:-$here/build/nmt}
threads=${NMT_THREADS:-2}
members=${NMT_BEST_MEMBERS:-}
seed=${NMT_BEST_SEED:-1}
tatoeba=${NMT_BEST_TATOEBA:-0}
min_updates=${NMT_BEST_MIN_UPDATES:-4000}
train_time=${NMT_BEST_TRAIN_TIME:-55m}

usage() {
  echo "usage: scripts/best-system.sh train DIR | translate DIR" >&2
  exit 2
}
die() {
  echo "best-system: $*" >&2
  exit 1
}
(($# == 2)) || usage
command=$1
dir=$2
setting_error() {  # NAME VALUE WHAT: a bad setting, refused before any work
  echo "best-system: $1 must be $3, not '$2'" >&2
  exit 2
}
[[ $threads =~ ^[1-9][0-9]*$ ]] || setting_error NMT_THREADS "$threads" "a positive number"
# NMT_BEST_MEMBERS unset: measured by probe_members when there are threads to share.
if [[ -z $members ]] && ((threads == 1)); then members=1; fi
[[ -z $members ]] || { [[ $members =~ ^[1-9][0-9]*$ ]] && ((members <= threads)); } ||
  setting_error NMT_BEST_MEMBERS "$members" "1..NMT_THREADS ($threads)"
[[ $min_updates =~ ^[0-9]+$ ]] || setting_error NMT_BEST_MIN_UPDATES "$min_updates" "a number"
# NMT_BEST_TRAIN_TIME in whole seconds, as nmt's --max-time reads it (90s, 55m, 1.5h, 3300).
train_seconds=$(awk -v t="$train_time" 'BEGIN {
  if (!match(t, /^[0-9]+(\.[0-9]+)?(s|m|min|h)?$/)) exit 1
  n = t + 0; u = t; sub(/^[0-9.]+/, "", u)
  if (u == "m" || u == "min") n *= 60; else if (u == "h") n *= 3600
  if (n < 1) exit 1
  printf "%d\n", n }') || setting_error NMT_BEST_TRAIN_TIME "$train_time" "a duration of at least 1s (e.g. 90s, 55m, 1h)"
[[ $seed =~ ^[0-9]+$ ]] || setting_error NMT_BEST_SEED "$seed" "a number"
[[ $tatoeba =~ ^[0-9]+$ ]] || setting_error NMT_BEST_TATOEBA "$tatoeba" "a number"

# The recipe (chosen on val: docs/experiments.md) is the gru-small-1h preset:
# gru-small with one layer-normalised GRU layer, dropout 0.3, its joint 8k SentencePiece
# vocabulary, a linear decay of the learning rate from 0.005 to 0 as the time budget ends instead
# of inverse-sqrt, so the last updates run at a small rate, validation from update 2400 on, and
# checkpoints every 50 updates, the last 8 kept, to average.
recipe=(--preset gru-small-1h)
read -r -a extra <<<"${NMT_BEST_OPTIONS:-}"

# nmt eval's JSON → "BLEU chrF"
read_scores() { python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["bleu"]["score"], s["chrf"]["score"])' 2>/dev/null; }

# model_args "gru gru-2" → -m DIR/gru -m DIR/gru-2 (one model, or an ensemble)
model_args() {
  local m
  for m in $1; do printf -- '-m\n%s\n' "$dir/$m"; done
}

val_scores() {  # "MODEL..." [decoding options...] → "BLEU chrF" of val
  local models
  mapfile -t models < <(model_args "$1")
  shift
  "$nmt" eval "${models[@]}" --src "$data/multi30k/val.en" --ref "$data/multi30k/val.fr" --threads "$threads" \
    --json -q --no-record "$@" | read_scores
}

# consider "MODEL..." BEAM ALPHA ("-" for greedy): scores it on val (BLEU, which chooses, and chrF,
# reported beside it), adds its row to selection.tsv and makes it the best (train's best,
# best_chrf, best_model, best_beam, best_alpha) if its BLEU beats the best so far.
consider() {
  local model=$1 beam=$2 alpha=$3 scores bleu chrf
  # A failed decoding leaves no number: nmt has said why on stderr, and the script stops here.
  if ((beam == 1)); then scores=$(val_scores "$model") || true; else
    scores=$(val_scores "$model" --beam "$beam" --alpha "$alpha") || true
  fi
  read -r bleu chrf <<<"$scores"
  [[ $bleu =~ ^[0-9.]+$ && $chrf =~ ^[0-9.]+$ ]] || die "no BLEU for $model on val (its decoding failed)"
  printf '%s\t%s\t%s\t%s\t%s\n' "$model" "$beam" "$alpha" "$bleu" "$chrf" | tee -a "$dir/selection.tsv" >&2
  if python3 -c "import sys; sys.exit(0 if $bleu > $best else 1)"; then
    best=$bleu best_chrf=$chrf best_model=$model best_beam=$beam best_alpha=${alpha/#-/0}
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
    [[ -f "$data/multi30k/$f" ]] || die "$data/multi30k/$f not found (set NMT_DATA)"
  done
  if ((tatoeba > 0)); then
    [[ -s "$data/tatoeba-fra-eng/fra.txt" ]] || die "$data/tatoeba-fra-eng/fra.txt not found (NMT_BEST_TATOEBA; set NMT_DATA)"
  fi
}

# The training pairs: Multi30k's files, or with NMT_BEST_TATOEBA=K the tab-separated DIR/train.tsv
# of K copies of Multi30k's pairs and Tatoeba's (sets train_data, the options that name them).
make_training_data() {
  if ((tatoeba == 0)); then
    train_data=(--train "$data/multi30k/train")
    return
  fi
  local k tsv=$dir/train.tsv
  {
    for ((k = 0; k < tatoeba; k++)); do paste "$data/multi30k/train.en" "$data/multi30k/train.fr"; done
    cut -f 1,2 "$data/tatoeba-fra-eng/fra.txt"
  } >"$tsv.tmp" 2>/dev/null || { rm -f "$tsv.tmp"; die "cannot write $tsv (full disk?)"; }
  mv "$tsv.tmp" "$tsv" || die "cannot write $tsv"
  train_data=(--train-tsv "$tsv")
}

ensure_binary() {
  [[ -x "$nmt" ]] && return
  echo "best-system: building nmt (NMT_LIBTORCH=${NMT_LIBTORCH:-}; not counted against the hour)" >&2
  cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=Release >/dev/null  # CMake reads NMT_LIBTORCH
  cmake --build "$here/build" -j "$threads" --target nmt_cli >&2
}

member_name() { if (($1 == 1)); then echo gru; else echo "gru-$1"; fi; }

# How to spend the threads, measured on this machine (sets members and member_seconds, the
# training time left after the probe). Two models side by side pay where each makes enough
# updates: on a 2-core Xeon each of two made 5,428 in the hour and their ensemble led one
# two-thread model by 0.7 BLEU on val (runs G, H, N1 of docs/experiments.md); on a 2-core Zen 3
# each made 2,440, and the pair only tied one two-thread model (N2 against F: 58.07 against
# 57.93 best, 55.95 against 56.44 one model greedy). So two short trainings of the recipe run side
# by side (30 updates on half the threads each, about 45 s on the Zen 3), and two models are
# trained if their rate over updates 20-30 projects NMT_BEST_MIN_UPDATES each in the time left,
# else one on all threads. DIR/probe.json keeps the measurement; a re-run (a resumed run) reads it.
probe_members() {
  local probe=$dir/probe k pids=() rate
  if [[ -f $dir/probe.json ]]; then
    read -r members member_seconds < <(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))
print(p["members"], p["train_seconds"])' "$dir/probe.json" 2>/dev/null) || die "cannot read $dir/probe.json"
    return
  fi
  local started=$SECONDS
  rm -rf "$probe"
  mkdir -p "$probe"
  for k in 1 2; do
    "${training[@]}" --out "$probe/$k" --threads $((threads / 2)) --seed $((seed + k - 1)) --max-steps 30 \
      --log-every 10 --valid-bleu false -q 2>"$probe/$k.log" &
    pids+=($!)
  done
  for k in 1 2; do
    wait "${pids[k - 1]}" || {
      kill "${pids[@]}" 2>/dev/null
      die "the throughput probe's training failed: $(tail -n 1 "$probe/$k.log")"
    }
  done
  # The slower of the two: the last log line's updates/s (over updates 20-30, after the warm-up).
  rate=$(python3 -c 'import json,sys
rates = []
for path in sys.argv[1:]:
    events = [json.loads(line) for line in open(path)]
    rates.append([e for e in events if e.get("event") == "train"][-1]["updates_per_s"])
print(min(rates))' "$probe/1/metrics.jsonl" "$probe/2/metrics.jsonl" 2>/dev/null) ||
    die "the throughput probe wrote no rate ($probe/*/metrics.jsonl)"
  member_seconds=$((train_seconds - (SECONDS - started)))
  ((member_seconds > 0)) || die "the throughput probe took all of NMT_BEST_TRAIN_TIME ($train_time)"
  local projected
  projected=$(awk -v r="$rate" -v s="$member_seconds" 'BEGIN {printf "%d", r * s}')
  members=1
  ((projected >= min_updates)) && members=2
  python3 - "$dir/probe.json" "$rate" "$member_seconds" "$projected" "$min_updates" "$members" 2>/dev/null <<'PY' ||
import json, os, sys
path, rate, seconds, projected, minimum, members = sys.argv[1:]
probe = {"updates_per_s_per_model": float(rate), "train_seconds": int(seconds), "projected_updates": int(projected),
         "min_updates": int(minimum), "members": int(members)}
with open(path + ".tmp", "w") as f:
    json.dump(probe, f, indent=1)
    f.write("\n")
os.replace(path + ".tmp", path)
PY
    die "cannot write $dir/probe.json"
  rm -rf "$probe"
  LC_ALL=C printf 'best-system: two models side by side would make %.2f updates/s each: %d each in the %dm%02ds left, %s %d: %s\n' \
    "$rate" "$projected" $((member_seconds / 60)) $((member_seconds % 60)) \
    "$( ((members == 2)) && echo "at least" || echo "fewer than")" "$min_updates" \
    "$( ((members == 2)) && echo "two models, $((threads / 2)) of the $threads threads each" || echo "one model on $threads threads")" >&2
}

# train_member K: the K-th model of the run, on its share of the threads, with its own seed. The
# first logs to stderr, the others to DIR/gru-K.log.
train_member() {
  local k=$1 name
  name=$(member_name "$k")
  local cmd=("${training[@]}" --out "$dir/$name" --threads $((threads / members)) --seed $((seed + k - 1))
    --max-time "${member_seconds}s" --log-every 50)
  if ((k == 1)); then "${cmd[@]}"; else "${cmd[@]}" 2>"$dir/$name.log"; fi
}

# All members side by side (two 1-thread trainings made 1.27x the tokens/s of one 2-thread
# training of the recipe on a 2-core Xeon, 2026-11-27, and 1.14x on a 2-core Zen 3, run N2 of
# docs/experiments.md); each must finish.
train_members() {
  local k pids=()
  for ((k = 1; k <= members; k++)); do
    train_member "$k" &
    pids+=($!)
  done
  for ((k = 1; k <= members; k++)); do
    wait "${pids[k - 1]}" || {
      local status=$?
      kill "${pids[@]}" 2>/dev/null  # the others' hour would be wasted
      die "training $(member_name "$k") failed (exit $status; see its log)"
    }
  done
  for ((k = 2; k <= members; k++)); do  # an ensemble needs one vocabulary; SentencePiece's training is deterministic
    cmp -s "$dir/gru/spm.model" "$dir/$(member_name "$k")/spm.model" ||
      die "$(member_name "$k")/spm.model differs from gru/spm.model: the models cannot be ensembled"
  done
}

# The averages of each model's last 4 and 8 checkpoints (MODEL-avg4, MODEL-avg8), made again on
# a re-run: a resumed run has new last checkpoints.
average_members() {
  local k name n
  for ((k = 1; k <= members; k++)); do
    name=$(member_name "$k")
    for n in 4 8; do
      rm -rf "$dir/$name-avg$n"
      "$nmt" average "$dir/$name" --last "$n" -o "$dir/$name-avg$n" >/dev/null ||
        die "cannot average $dir/$name's last $n checkpoints"
    done
  done
}

# ensemble_of SUFFIX → "gru gru-2 ..." with SUFFIX on each name: all models as one ensemble.
ensemble_of() {
  local k all=""
  for ((k = 1; k <= members; k++)); do all+="${all:+ }$(member_name "$k")$1"; done
  echo "$all"
}

train() {
  ensure_binary
  find_data
  mkdir -p "$dir"
  local start=$SECONDS
  make_training_data
  # The recipe's training command, which the probe and every model run with their own options.
  training=("$nmt" train "${recipe[@]}" "${extra[@]}" "${train_data[@]}" --valid "$data/multi30k/val")
  member_seconds=$train_seconds
  [[ -n $members ]] || probe_members
  train_members
  # Candidates, each scored on val: every model's best validated checkpoint and the averages of
  # its last 4 and 8 checkpoints, one model at a time (greedy), then the ensembles of all models'
  # best checkpoints, of their averages of 4 and of 8; beam search on the best of these.
  average_members
  printf 'weights\tbeam\talpha\tval BLEU\tval chrF\n' >"$dir/selection.tsv"
  local best_model="" best_beam=1 best_alpha=0 best=-1 best_chrf=-1 model setting k suffix
  for ((k = 1; k <= members; k++)); do
    for suffix in "" -avg4 -avg8; do consider "$(member_name "$k")$suffix" 1 -; done
  done
  local greedy_model=$best_model greedy_bleu=$best greedy_chrf=$best_chrf  # one model, greedy
  if ((members > 1)); then
    for suffix in "" -avg4 -avg8; do consider "$(ensemble_of "$suffix")" 1 -; done
  fi
  # Beam search on the best weights: alpha 1.4 was the edge of the first grid (0.6 / 1.0 / 1.4) in
  # both runs that had it, so the grid goes on past it; 8 tells whether a wider beam pays (it tied
  # beam 5 for one model in runs C-F; for H's two-model ensemble it gained 0.28).
  local settings=("5 1.0" "5 1.4" "5 1.8" "5 2.2" "8 1.4" "8 1.8")
  local beam_model=$best_model
  for setting in "${settings[@]}"; do consider "$beam_model" $setting; done
  local seconds=$((SECONDS - start))
  python3 - "$dir/system.json" "$best_model" "$best_beam" "$best_alpha" "$best" "$best_chrf" "$greedy_model" \
    "$greedy_bleu" "$greedy_chrf" "$seconds" 2>/dev/null <<'PY' || die "cannot write $dir/system.json"
import json, os, sys
path, models, beam, alpha, bleu, chrf, greedy_model, greedy_bleu, greedy_chrf, seconds = sys.argv[1:]
system = {"models": models.split(), "beam": int(beam), "alpha": float(alpha), "val_bleu": float(bleu),
          "val_chrf": float(chrf),
          "greedy": {"model": greedy_model, "val_bleu": float(greedy_bleu), "val_chrf": float(greedy_chrf)},
          "seconds": int(seconds)}
tmp = path + ".tmp"
with open(tmp, "w") as f:
    json.dump(system, f, indent=1)
    f.write("\n")
os.replace(tmp, path)
PY
  LC_ALL=C printf 'best-system: %s, beam %s, alpha %s: val BLEU %.2f, chrF %.2f (greedy, one model: %s %.2f, chrF %.2f); everything took %dm%02ds\n' \
    "$best_model" "$best_beam" "$best_alpha" "$best" "$best_chrf" "$greedy_model" "$greedy_bleu" "$greedy_chrf" \
    $((seconds / 60)) $((seconds % 60)) >&2
}

translate() {
  [[ -f "$dir/system.json" ]] || die "$dir/system.json not found: run 'scripts/best-system.sh train $dir' first"
  ensure_binary
  local settings models beam alpha
  # "models" (a list); "model" in a system.json written before ensembles
  settings=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); m=s.get("models") or [s["model"]]
print(s["beam"], s["alpha"], " ".join(m))' "$dir/system.json") || die "cannot read $dir/system.json"
  read -r beam alpha models <<<"$settings"
  local args
  mapfile -t args < <(model_args "$models")
  exec "$nmt" translate "${args[@]}" --beam "$beam" --alpha "$alpha" --threads "$threads" -q
}

case "$command" in
  train) train ;;
  translate) translate ;;
  *) usage ;;
esac
