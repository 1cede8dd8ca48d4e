#!/usr/bin/env bash
# ctest: scripts/best-system.sh, the one-hour recipe's driver, on a corpus of 8 pairs and a budget
# of seconds. `train` first measures two short trainings side by side (probe.json), then trains
# two models side by side where each is projected to make NMT_BEST_MIN_UPDATES updates (seeds 5
# and 6, one thread each; with NMT_BEST_TATOEBA=2, on two copies of the Multi30k pairs and one of
# Tatoeba's), else one model on both threads,
# scores every candidate on val (BLEU and chrF in selection.tsv: each model and the averages of its
# last checkpoints, the ensembles of these, beams 5 and 8), and writes its choice to system.json;
# `translate` then gives one line per input line with that choice. Bad settings are refused in one
# line before any training.
#   tests/cli/best_system.sh NMT_BINARY SOURCE_DIR
set -euo pipefail
nmt=$1 root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
mkdir -p "$work/data/multi30k"
for split in train val; do
  for lang in en fr; do cp "$root/data/fixtures/tiny.$lang" "$work/data/multi30k/$split.$lang"; done
done
mkdir -p "$work/data/tatoeba-fra-eng"
paste "$root/data/fixtures/tiny.en" "$root/data/fixtures/tiny.fr" | sed 's/$/\tCC-BY 2.0 (France) Attribution/' \
  >"$work/data/tatoeba-fra-eng/fra.txt"  # the download's third column, which is left out
export NMT_BIN=$nmt NMT_DATA=$work/data NMT_THREADS=2
small="--vocab-size 100 --embedding 32 --hidden 32 --warmup 0 --valid-after 0 --save-every 2"

# Refused before any work: more models than threads, a seed that is not a number, no system yet.
expect_refusal() {  # CODE MESSAGE-PART ENVIRONMENT... -- ARGS...
  local code=$1 part=$2 status=0
  shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" bash "$root/scripts/best-system.sh" "$@" >"$work/out" 2>"$work/err" || status=$?
  ((status == code)) || fail "best-system.sh $* with ${envs[*]} exited $status, not $code: $(cat "$work/err")"
  grep -q -- "$part" "$work/err" || fail "no '$part' in: $(cat "$work/err")"
  [[ $(wc -l <"$work/err") -eq 1 ]] || fail "more than one line for a refusal: $(cat "$work/err")"
}
expect_refusal 2 NMT_BEST_MEMBERS NMT_BEST_MEMBERS=3 -- train "$work/refused"
expect_refusal 2 NMT_BEST_SEED NMT_BEST_SEED=one -- train "$work/refused"
expect_refusal 2 NMT_BEST_TATOEBA NMT_BEST_TATOEBA=-1 -- train "$work/refused"
expect_refusal 2 NMT_BEST_MIN_UPDATES NMT_BEST_MIN_UPDATES=many -- train "$work/refused"
expect_refusal 2 NMT_BEST_TRAIN_TIME NMT_BEST_TRAIN_TIME=soon -- train "$work/refused"
expect_refusal 2 NMT_BEST_TRAIN_TIME NMT_BEST_TRAIN_TIME=0s -- train "$work/refused"
mkdir -p "$work/no-tatoeba" && ln -s "$work/data/multi30k" "$work/no-tatoeba/multi30k"
expect_refusal 1 "tatoeba-fra-eng/fra.txt not found" NMT_BEST_TATOEBA=1 NMT_DATA=$work/no-tatoeba -- train "$work/refused"
expect_refusal 1 "system.json not found" NMT_BEST_SEED=1 -- translate "$work/refused"
[[ ! -e $work/refused ]] || fail "a refused run created its directory"

# NMT_BEST_MEMBERS left to the probe: any rate projects one update each, so two models.
NMT_BEST_MIN_UPDATES=1 NMT_BEST_TATOEBA=2 NMT_BEST_SEED=5 NMT_BEST_TRAIN_TIME=25s NMT_BEST_OPTIONS=$small \
  bash "$root/scripts/best-system.sh" train "$work/run" >"$work/train.log" 2>&1 ||
  { tail -20 "$work/train.log"; fail "train"; }
for m in gru gru-2; do
  [[ -f $work/run/$m/model.pt ]] || fail "no $m/model.pt"
done
grep -q "^best-system: two models side by side would make .* updates/s each: .*two models, 1 of the 2 threads each$" \
  "$work/train.log" || fail "no line saying what the probe measured and chose: $(grep best-system: "$work/train.log")"
python3 - "$work/run/probe.json" <<'PY' || fail "probe.json: $(cat "$work/run/probe.json")"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["members"] == 2 and p["min_updates"] == 1 and p["updates_per_s_per_model"] > 0, p
assert 0 < p["train_seconds"] < 25 and p["projected_updates"] >= 1, p
PY
[[ ! -e $work/run/probe ]] || fail "the probe's trainings were left in the run's directory"
grep -q '"threads": 1,' "$work/run/gru/config.json" || fail "the first of two models did not train on one thread"
grep -q '"seed": 5,' "$work/run/gru/config.json" || fail "the first model was not trained with seed 5"
grep -q '"seed": 6,' "$work/run/gru-2/config.json" || fail "the second model was not trained with seed 6"
[[ $(wc -l <"$work/run/train.tsv") -eq 24 ]] || fail "train.tsv is not 2 x 8 Multi30k pairs + 8 Tatoeba pairs"
[[ $(awk -F'\t' 'NF != 2' "$work/run/train.tsv" | wc -l) -eq 0 ]] || fail "train.tsv has lines without exactly two columns"
grep -q "train.tsv" "$work/run/gru-2/config.json" || fail "the second model did not train on train.tsv"
grep -q '"vocab_size": 100,' "$work/run/gru/config.json" || fail "NMT_BEST_OPTIONS did not reach the training"
# Each model's best checkpoint and averages alone, the ensembles of each kind, beams 5 and 8.
for row in $'gru\t1\t-' $'gru-2\t1\t-' $'gru-2-avg4\t1\t-' $'gru-2-avg8\t1\t-' $'gru gru-2\t1\t-' \
  $'gru-avg4 gru-2-avg4\t1\t-' $'gru-avg8 gru-2-avg8\t1\t-' $'\t5\t1.4' $'\t8\t1.8'; do
  grep -q -F "$row" "$work/run/selection.tsv" || fail "no row '$row' in selection.tsv: $(cat "$work/run/selection.tsv")"
done
# Every row of the table has val BLEU and chrF; the choice and its greedy one-model row carry both.
awk -F'\t' 'NR > 1 && !(NF == 5 && $4 ~ /^[0-9.]+$/ && $5 ~ /^[0-9.]+$/)' "$work/run/selection.tsv" | grep -q . &&
  fail "selection.tsv has a row without val BLEU and chrF: $(cat "$work/run/selection.tsv")"
python3 - "$work/run/system.json" <<'PY' || fail "system.json: $(cat "$work/run/system.json")"
import json, sys
s = json.load(open(sys.argv[1]))
weights = {m + suffix for m in ("gru", "gru-2") for suffix in ("", "-avg4", "-avg8")}
assert s["models"] and set(s["models"]) <= weights, s
assert s["beam"] in (1, 5, 8) and s["greedy"]["model"] in weights, s
assert 0 <= s["val_chrf"] <= 100 and 0 <= s["greedy"]["val_chrf"] <= 100, s
PY
bash "$root/scripts/best-system.sh" translate "$work/run" <"$work/data/multi30k/val.en" >"$work/out.fr" ||
  fail "translate"
[[ $(wc -l <"$work/out.fr") -eq $(wc -l <"$work/data/multi30k/val.en") ]] || fail "not one line out per line in"

# A decoding of val that fails (here: nmt eval exits 1 with its error) stops the run in one line of
# the script's after nmt's own, no traceback, and the system chosen before stays.
cp "$work/run/system.json" "$work/system.before"
printf '#!/usr/bin/env bash\n[[ $1 == eval ]] && { echo "nmt: error: eval fails here" >&2; exit 1; }\nexec %q "$@"\n' \
  "$nmt" >"$work/failing-nmt" && chmod +x "$work/failing-nmt"
status=0
NMT_BIN=$work/failing-nmt NMT_BEST_MEMBERS=2 NMT_BEST_TATOEBA=2 NMT_BEST_SEED=5 NMT_BEST_TRAIN_TIME=6s \
  NMT_BEST_OPTIONS=$small bash "$root/scripts/best-system.sh" train "$work/run" >/dev/null 2>"$work/err" || status=$?
((status == 1)) || fail "a failed decoding of val exited $status, not 1: $(tail -3 "$work/err")"
[[ $(tail -1 "$work/err") == "best-system: no BLEU for gru on val (its decoding failed)" ]] ||
  fail "a failed decoding of val ended with: $(tail -3 "$work/err")"
! grep -q Traceback "$work/err" || fail "a failed decoding of val printed a traceback"
cmp -s "$work/system.before" "$work/run/system.json" || fail "a failed run changed system.json"
# Where two models could not each make NMT_BEST_MIN_UPDATES, one model trains on both threads and
# no ensemble is among the candidates.
NMT_BEST_MIN_UPDATES=1000000000 NMT_BEST_SEED=5 NMT_BEST_TRAIN_TIME=20s NMT_BEST_OPTIONS=$small \
  bash "$root/scripts/best-system.sh" train "$work/one" >"$work/one.log" 2>&1 || { tail -20 "$work/one.log"; fail "train one"; }
grep -q "fewer than 1000000000: one model on 2 threads$" "$work/one.log" ||
  fail "no line saying the probe chose one model: $(grep best-system: "$work/one.log")"
[[ -f $work/one/gru/model.pt && ! -e $work/one/gru-2 ]] || fail "not one model: $(ls "$work/one")"
grep -q '"threads": 2,' "$work/one/gru/config.json" || fail "the one model did not train on both threads"
grep -q -F $'gru gru-2' "$work/one/selection.tsv" && fail "an ensemble was considered with one model"
grep -q '"members": 1' "$work/one/probe.json" || fail "probe.json: $(cat "$work/one/probe.json")"
echo "ok: the probe's choice of two models or one, their ensemble on val, system.json, translate, a failed decoding"
