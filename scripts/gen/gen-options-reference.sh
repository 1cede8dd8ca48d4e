#!/usr/bin/env bash
# Writes docs/reference/options.md, the option reference, from the binary's own --help texts
# (the option tables, as `nmt SUBCOMMAND --help` shows them), so the reference cannot drift
# from the code: the ctest Docs.OptionReferenceIsCurrent regenerates it and fails on any
# difference. After changing an option:
#   bash scripts/gen/gen-options-reference.sh build/nmt > docs/reference/options.md
set -euo pipefail
nmt=${1:?usage: gen-options-reference.sh NMT_BINARY}
[[ -x "$nmt" ]] || { echo "gen-options-reference: $nmt is not an executable" >&2; exit 2; }
# The subcommands, in the order `nmt --help` lists them.
mapfile -t commands < <("$nmt" --help | awk 'tolower($0) ~ /^subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
((${#commands[@]} > 0)) || { echo "gen-options-reference: no subcommands in '$nmt --help'" >&2; exit 1; }

echo "# Option reference"
echo
echo "Generated from \`nmt SUBCOMMAND --help\` by \`scripts/gen/gen-options-reference.sh\`; do not edit by hand."
echo "Every option can also be set in a TOML file given with \`--config\`, in the section of its"
echo "subcommand (\`[train]\`, \`[translate]\`, ...), under the option's long name."
echo
for c in "${commands[@]}"; do echo "- [\`nmt $c\`](#nmt-$c)"; done
echo
echo "## nmt"
echo
echo '```text'
"$nmt" --help | sed -E 's/[[:space:]]+$//'
echo '```'
for c in "${commands[@]}"; do
  echo
  echo "## nmt $c"
  echo
  echo '```text'
  "$nmt" "$c" --help | sed -E 's/[[:space:]]+$//'
  echo '```'
done
