#!/usr/bin/env bash
# ctest ScorerOnly.OtherSubcommandsSayThisBuildHasNoLibTorch: in the scorer-only build
# (-DNMT_LIBTORCH=none -DNMT_SCORER_ONLY=ON) a subcommand that needs LibTorch, `nmt translate`,
# is refused with exit 2 and a line that names the build, instead of a crash or a missing library.
#   tests/cli/scorer_only_refuses_other_subcommands.sh NMT_BINARY
set -u
nmt=$1
out=$("$nmt" translate 2>&1)
rc=$?
if [[ $rc -ne 2 ]] || ! grep -q "scorer-only build (NMT_SCORER_ONLY)" <<< "$out"; then
  echo "exit $rc: $out" >&2
  exit 1
fi
