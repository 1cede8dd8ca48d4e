#!/usr/bin/env bash
# ctest: scripts/checks/check-links.py fails on what points nowhere, in Markdown and in source files
# alike: a link to a missing file or heading, a source comment naming a file that does not
# exist, a heading that is not there, or a section of the README that is not there; and passes
# on a tree where everything resolves.
#   tests/infra/check_links.sh SOURCE_DIR
# check-links: skip (the paths below are the fixture tree's, not this repository's)
set -euo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$work/docs" "$work/lib" "$work/scripts"
printf '# Top\n\n## The best system\n\nSee [a](docs/a.md#usage).\n' > "$work/README.md"
printf '# A\n\n## Usage\n' > "$work/docs/a.md"
printf '// docs/a.md#usage and README.md, "The best system" say why.\n' > "$work/lib/x.cc"
printf '#!/bin/sh\n# run by scripts/y.sh\n' > "$work/scripts/y.sh"
python3 "$root/scripts/checks/check-links.py" "$work" > "$work/out" 2>&1 || { cat "$work/out"; fail "a tree that resolves was refused"; }

expect_broken() {  # FILE CONTENT MESSAGE
  local saved
  saved=$(cat "$work/$1")
  printf '%s\n' "$2" > "$work/$1"
  if python3 "$root/scripts/checks/check-links.py" "$work" > "$work/out" 2>&1; then fail "$1: '$2' passed"; fi
  grep -qF "$3" "$work/out" || { cat "$work/out"; fail "$1: no '$3'"; }
  printf '%s\n' "$saved" > "$work/$1"
}
expect_broken lib/x.cc '// see docs/gone.md' 'lib/x.cc:1: docs/gone.md: no such file'
expect_broken lib/x.cc '// docs/a.md#nowhere' 'docs/a.md#nowhere: no heading with that anchor'
expect_broken lib/x.cc '// README, "Best system"' 'README.md, "Best system": no such section'
expect_broken scripts/y.sh '# scripts/gone.sh does it' 'scripts/y.sh:1: scripts/gone.sh: no such file'
expect_broken docs/a.md '[b](b.md)' 'docs/a.md:1: b.md: no such file'
echo "check-links: 6 cases passed"
