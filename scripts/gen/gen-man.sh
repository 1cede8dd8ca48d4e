#!/usr/bin/env bash
# Writes nmt(1), the manual page, from the binary's own --help texts (the top level and every
# subcommand), so `man nmt` says what `nmt ... --help` says. CMake runs it at build time
# (build/nmt.1) and `cmake --install` puts it in share/man/man1.
#   bash scripts/gen/gen-man.sh build/nmt [OUT]     (OUT written whole or not at all; default stdout)
set -euo pipefail
nmt=${1:?usage: gen-man.sh NMT_BINARY [OUT]}
if (($# > 1)); then
  bash "$0" "$nmt" > "$2.tmp" && mv "$2.tmp" "$2" || { rm -f "$2.tmp"; echo "gen-man: could not write $2" >&2; exit 1; }
  exit 0
fi
version=$("$nmt" --version | head -n 1)
mapfile -t commands < <("$nmt" --help | awk 'tolower($0) ~ /^subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
# roff: a leading dot or quote would be read as a request; backslashes are escapes.
roff() { sed -E 's/\\/\\e/g; s/^([.'"'"'])/\\\&\1/'; }
cat <<ROFF
.TH NMT 1 "" "$version" "User Commands"
.SH NAME
nmt \- neural machine translation: train, translate, score and serve (Transformer and GRU on LibTorch)
.SH SYNOPSIS
.B nmt
.I SUBCOMMAND
[\fIOPTIONS\fR]
.br
.B nmt
.I SUBCOMMAND
\-\-help
.SH DESCRIPTION
One binary with subcommands. Options may also come from a TOML file given with \-\-config, in
the section of the subcommand ([train], [translate], ...). Errors are one line on standard error;
the exit status is 0 on success, 2 for a usage error (a bad option or value), 1 for a runtime
error (a missing or unreadable file, a failed write).
.PP
.nf
ROFF
"$nmt" --help | roff
echo ".fi"
for c in "${commands[@]}"; do
  echo ".SH \"NMT ${c^^}\""
  echo ".nf"
  "$nmt" "$c" --help | roff
  echo ".fi"
done
cat <<'ROFF'
.SH FILES
.TP
.I MODEL/config.json, MODEL/model.pt, MODEL/spm.model
A model directory, as written by nmt train (see the training manual).
.SH SEE ALSO
The manual in the docs/ folder of nmt's source: installation, training, translation, scoring,
serving, quantization, performance.
ROFF
