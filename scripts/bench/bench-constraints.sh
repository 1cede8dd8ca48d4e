#!/usr/bin/env bash
# Lexically constrained decoding measured as the literature does (Post & Vilar 2018, "Fast Lexically
# Constrained Decoding with Dynamic Beam Allocation"; Hu et al. 2019): constraints drawn from the
# reference translations, then coverage, BLEU/chrF and speed of `nmt translate --constraints`
# against the same run without constraints.
#
#   scripts/bench/bench-constraints.sh MODEL_DIR [OUT_DIR]        # OUT_DIR: build/bench-constraints
#   LINES=100 ROUNDS=1 scripts/bench/bench-constraints.sh /work/ref/m-transformer-tiny /tmp/bc  # a try
#
# Test sets: Multi30k test_2016_flickr and test_2017_flickr, English -> French.
# Constraints (scripts/bench/constraints_eval.py, seeded, SEED=1): per reference line, K phrases with K
# uniform in 1..3 (setting "1-3") and, drawn separately, in 1..2 (setting "1-2", the speed
# target); each phrase a random n-gram of 1-3 whitespace tokens of the reference (n uniform, start
# uniform among the spans that overlap no phrase already chosen in that line), trimmed of
# punctuation-only tokens at its ends and of punctuation stuck to its outer edges ("blanche." ->
# "blanche"); pure punctuation and repeats are redrawn; short lines may get fewer than K. The
# generator is seeded per line ("SEED/MIN-MAX/LINE"), so LINES=100 draws what the full run draws
# for those lines. Files: OUT_DIR/SET.c1-3.tsv, SET.c1-2.tsv (line N: tab-separated phrases).
#
# Decoding: beam 5, batch 64 sentences, NMT_THREADS threads (2) in every run; per round, per test
# set, the unconstrained run then each constraint setting (alternating, so machine load hits all
# alike); ROUNDS rounds (3); the table shows the median wall-clock of the whole `nmt translate`
# process (model load included: the same in every column) and the median over rounds of the
# per-round ratio with / without, also with the start-up (model load and one sentence, timed
# each round) taken off both. Coverage: the share of phrases met and of sentences with every
# phrase met, per --json's unmet_constraints, cross-checked by a text search of each phrase in the
# output (disagreements are listed). BLEU and chrF2: `nmt bleu -m bleu chrf` (sacreBLEU 13a
# defaults) against the reference.
#
# Outputs in OUT_DIR: SET.none.jsonl / SET.c*.jsonl (--json of round 1), SET.*.hyp (translations),
# SET.*.bleu.json, SET.*.log (stderr: per-line unmet warnings), rounds/ (later rounds, compared
# with round 1), results.jsonl (timings and the machine), table.md (what is printed).
# Knobs: LINES (first N lines of each test set; default all), ROUNDS (3), NMT_THREADS (2), SEED (1),
# NMT_BINARY (build/nmt), NMT_DATA (../shared/data), NMT_PYTHON (python3).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "bench-constraints: $*" >&2; exit 2; }
log() { printf '[bench-constraints %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 MODEL_DIR [OUT_DIR]"
MODEL=$1
OUT=${2:-$ROOT/build/bench-constraints}
NMT=${NMT_BINARY:-$ROOT/build/nmt}
PY=${NMT_PYTHON:-python3}
DATA=${NMT_DATA:-$ROOT/../shared/data}
ROUNDS=${ROUNDS:-3}
THREADS=${NMT_THREADS:-2}
SEED=${SEED:-1}
LINES=${LINES:-0}
BEAM=5
BATCH=64
SETS=(test_2016_flickr test_2017_flickr)
SETTINGS=(1-3 1-2)
HELPER="$ROOT/scripts/bench/constraints_eval.py"

[[ -d "$MODEL" ]] || die "model directory $MODEL not found"
[[ -f "$MODEL/model.pt" || -f "$MODEL/config.json" ]] || die "$MODEL has no model.pt: not an nmt model directory"
[[ -x "$NMT" ]] || die "$NMT not found or not executable (set NMT_BINARY)"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, not '$ROUNDS'"
[[ "$THREADS" =~ ^[1-9][0-9]*$ ]] || die "NMT_THREADS must be a positive integer, not '$THREADS'"
[[ "$LINES" =~ ^[0-9]+$ ]] || die "LINES must be a number of lines (0 = all), not '$LINES'"
[[ "$SEED" =~ ^[0-9]+$ ]] || die "SEED must be a non-negative integer, not '$SEED'"
for s in "${SETS[@]}"; do
  for l in en fr; do
    [[ -s "$DATA/multi30k/$s.$l" ]] || die "$DATA/multi30k/$s.$l not found (set NMT_DATA)"
  done
done
[[ $("$NMT" translate --help) == *--constraints* ]] || die "$NMT has no 'translate --constraints'"
mkdir -p "$OUT/rounds" || die "cannot create $OUT"
RES="$OUT/results.jsonl"
: > "$RES"
record() { printf '{"key": "%s", "value": %s}\n' "$1" "$2" >> "$RES"; }

# The inputs: the test sets (or their first LINES lines) and the constraints.
for s in "${SETS[@]}"; do
  if [[ $LINES -gt 0 ]]; then
    head -n "$LINES" "$DATA/multi30k/$s.en" > "$OUT/$s.en"
    head -n "$LINES" "$DATA/multi30k/$s.fr" > "$OUT/$s.ref"
  else
    cp "$DATA/multi30k/$s.en" "$OUT/$s.en"
    cp "$DATA/multi30k/$s.fr" "$OUT/$s.ref"
  fi
  for st in "${SETTINGS[@]}"; do
    "$PY" "$HELPER" sample --ref "$OUT/$s.ref" --out "$OUT/$s.c$st.tsv" --min "${st%-*}" --max "${st#*-}" \
      --seed "$SEED"
  done
done

# The machine, as the other bench scripts print it.
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
isa=$(grep -o -w -E 'avx2|avx512f|avx512_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/ $//')
blas=$("$NMT" bench matmul --threads "$THREADS")
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null) ]]; then commit="$commit (+ uncommitted changes)"; fi
command="$(printf '%q ' "$0" "$@" | sed 's/ $//')"
[[ $LINES -gt 0 ]] && command="LINES=$LINES $command"
[[ $ROUNDS != 3 ]] && command="ROUNDS=$ROUNDS $command"
[[ $THREADS != 2 ]] && command="NMT_THREADS=$THREADS $command"
[[ $SEED != 1 ]] && command="SEED=$SEED $command"
record machine "$("$PY" -c 'import json, sys; a = sys.argv[1:]; print(json.dumps({"cpu": a[0], "isa": a[1], "blas": json.loads(a[2]), "nmt": a[3], "commit": a[4], "date": a[5], "command": a[6], "model": a[7], "beam": int(a[8]), "batch": int(a[9]), "threads": int(a[10]), "rounds": int(a[11]), "seed": int(a[12]), "lines": a[13], "load": open("/proc/loadavg").read().split()[0]}))' \
  "$cpu" "$isa" "$blas" "$("$NMT" --version)" "$commit" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$command" "$MODEL" \
  "$BEAM" "$BATCH" "$THREADS" "$ROUNDS" "$SEED" "$([[ $LINES -gt 0 ]] && echo "first $LINES lines of each test set" || echo "whole test sets")")"

# One timed run: run SET NAME ROUND [--constraints FILE]. Round 1 writes OUT/SET.NAME.jsonl, later
# rounds rounds/SET.NAME.rN.jsonl, compared with round 1.
run() {
  local s=$1 name=$2 round=$3
  shift 3
  local dest="$OUT/$s.$name.jsonl" err="$OUT/$s.$name.log"
  if [[ $round -gt 1 ]]; then dest="$OUT/rounds/$s.$name.r$round.jsonl" err="$OUT/rounds/$s.$name.r$round.log"; fi
  local start end
  start=$(date +%s.%N)
  "$NMT" translate -m "$MODEL" -i "$OUT/$s.en" -o "$dest" --json --beam "$BEAM" --batch-size "$BATCH" \
    --threads "$THREADS" "$@" 2> "$err" || die "nmt translate failed on $s ($name): see $err"
  end=$(date +%s.%N)
  record "$s/$name" "$("$PY" -c "print(round($end - $start, 3))")"
  if [[ $round -gt 1 ]]; then
    if cmp -s "$dest" "$OUT/$s.$name.jsonl"; then record "$s/deterministic" true; else record "$s/deterministic" false; fi
  fi
}

head -n 1 "$OUT/${SETS[0]}.en" > "$OUT/one-line.en"
for ((round = 1; round <= ROUNDS; round++)); do
  # Start-up (model load, one sentence): subtracted for the "load excluded" ratio.
  start=$(date +%s.%N)
  "$NMT" translate -q -m "$MODEL" -i "$OUT/one-line.en" -o /dev/null --beam "$BEAM" --threads "$THREADS" ||
    die "nmt translate failed on one line of ${SETS[0]}"
  end=$(date +%s.%N)
  record startup "$("$PY" -c "print(round($end - $start, 3))")"
  for s in "${SETS[@]}"; do
    log "round $round/$ROUNDS: $s without constraints"
    run "$s" none "$round"
    for st in "${SETTINGS[@]}"; do
      log "round $round/$ROUNDS: $s with $st constraints per sentence"
      run "$s" "c$st" "$round" --constraints "$OUT/$s.c$st.tsv"
    done
  done
done

# Translations and scores of round 1.
for s in "${SETS[@]}"; do
  for name in none "${SETTINGS[@]/#/c}"; do
    "$PY" -c 'import json, sys; [print(json.loads(l)["translation"]) for l in open(sys.argv[1], encoding="utf-8")]' \
      "$OUT/$s.$name.jsonl" > "$OUT/$s.$name.hyp"
    "$NMT" bleu -r "$OUT/$s.ref" "$OUT/$s.$name.hyp" -m bleu chrf --json > "$OUT/$s.$name.bleu.json"
  done
done

sets=$(IFS=,; echo "${SETS[*]}")
settings=$(IFS=,; echo "${SETTINGS[*]}")
"$PY" "$HELPER" report "$OUT" --sets "$sets" --settings "$settings" --speed-setting 1-2 | tee "$OUT/table.md"
log "outputs in $OUT (table.md, results.jsonl, *.tsv constraints, *.jsonl / *.hyp translations)"
