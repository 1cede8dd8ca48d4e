# bash completion for nmt: subcommands, then each subcommand's options, read from the binary's
# own --help (so it cannot go stale), and file names for everything else. Installed by
# `cmake --install` into share/bash-completion/completions/nmt; or: source scripts/nmt-completion.bash
_nmt_words() {  # _nmt_words NMT [SUBCOMMAND]: the options (or, without one, the subcommands)
  local nmt=$1 cmd=${2:-}
  if [[ -z "$cmd" ]]; then
    "$nmt" --help 2>/dev/null | awk 'tolower($0) ~ /^subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}'
  else
    "$nmt" "$cmd" --help 2>/dev/null | grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | sed -E 's/^[ ,]//' | sort -u
  fi
}
_nmt() {
  local cur=${COMP_WORDS[COMP_CWORD]} nmt=${COMP_WORDS[0]} cmd="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    [[ ${COMP_WORDS[i]} != -* ]] && { cmd=${COMP_WORDS[i]}; break; }
  done
  if [[ -z "$cmd" ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_nmt_words "$nmt") --help --version" -- "$cur")
  elif [[ "$cur" == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_nmt_words "$nmt" "$cmd")" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
}
complete -o filenames -F _nmt nmt
