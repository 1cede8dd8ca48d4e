#!/usr/bin/env bash
# ctest Docs.BashCompletionOffersSubcommandsAndOptions: scripts/nmt-completion.bash, read from the
# binary's --help, completes a subcommand (nmt tra<TAB>: train translate) and a subcommand's
# options (nmt translate --bea<TAB>: --beam --beam-shrink).
#   tests/infra/bash_completion_offers_subcommands_and_options.sh NMT_BINARY SOURCE_DIR
set -u
nmt=$1 root=$2
source "$root/scripts/nmt-completion.bash"
COMP_WORDS=("$nmt" tra); COMP_CWORD=1; _nmt
[[ "${COMPREPLY[*]}" == "train translate" ]] || { echo "nmt tra<TAB> gave: ${COMPREPLY[*]}" >&2; exit 1; }
COMP_WORDS=("$nmt" translate --bea); COMP_CWORD=2; _nmt
[[ "${COMPREPLY[*]}" == "--beam --beam-shrink" ]] || { echo "nmt translate --bea<TAB> gave: ${COMPREPLY[*]}" >&2; exit 1; }
