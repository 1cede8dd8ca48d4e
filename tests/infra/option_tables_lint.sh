#!/usr/bin/env bash
# ctest Options.EveryFlagComesFromATable: every flag of every command comes from an option table
# (app/option_binder.h), or is one of the exceptions docs/design.md lists with its reason
# ("Flags outside the option tables"); no range is checked by hand in app/. The lint passes on the
# tree, and fails on a copy with a flag declared by hand and on one with a range checked by hand,
# so a lint that stopped finding them would fail here.
#   tests/infra/option_tables_lint.sh SOURCE_DIR
set -u
root=$1
lint="$root/scripts/checks/check-option-tables.py"
python3 "$lint" "$root" || { echo "the tree declares the flags above by hand" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
planted() {  # planted NAME LINE: a copy of app/ with LINE added to cmd_average.cc's command
  mkdir -p "$work/$1/docs" "$work/$1/scripts"
  cp -r "$root/app" "$work/$1/app"
  cp "$root/docs/design.md" "$work/$1/docs/"
  sed -i "0,/cmd->callback(/s||$2\n  cmd->callback(|" "$work/$1/app/cmd_average.cc"
  grep -q "$2" "$work/$1/app/cmd_average.cc" || { echo "could not plant $1" >&2; exit 1; }
  python3 "$lint" "$work/$1" > "$work/$1.out" 2>&1
  local rc=$?
  if [ $rc -ne 1 ] || ! grep -q "app/cmd_average.cc:" "$work/$1.out"; then
    echo "the lint missed $1 (exit $rc):" >&2
    cat "$work/$1.out" >&2
    exit 1
  fi
}
planted hand-flag 'cmd->add_option("--extra", extra_, "Declared by hand");'
planted hand-range 'opt->check(CLI::Range(1, 5));'
echo "the lint passes on the tree and fails on a hand-declared flag and a hand-checked range"
