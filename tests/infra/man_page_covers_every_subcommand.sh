#!/usr/bin/env bash
# ctest Docs.ManPageCoversEverySubcommand: the man page the build generates (BUILD/nmt.1,
# scripts/gen/gen-man.sh) has a section, `.SH "NMT SUBCOMMAND"`, for every subcommand that
# `nmt --help` lists (and it lists at least 10: a help text that lost its list fails too).
#   tests/infra/man_page_covers_every_subcommand.sh NMT_BINARY MAN_PAGE
set -u
nmt=$1 man_page=$2
commands=$("$nmt" --help | awk 'tolower($0) ~ /^subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
(($(wc -w <<< "$commands") >= 10)) || { echo "nmt --help lists only: $commands" >&2; exit 1; }
for c in $commands; do
  grep -q "^\.SH \"NMT ${c^^}\"" "$man_page" || { echo "nmt.1 has no section for $c" >&2; exit 1; }
done
