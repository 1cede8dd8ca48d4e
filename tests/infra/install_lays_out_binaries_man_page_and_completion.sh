#!/usr/bin/env bash
# ctest Install.BinariesManPageAndCompletionLand: `cmake --install BUILD_DIR` into an empty prefix
# lays out bin/nmt, bin/nmt-torch, the man page and the bash completion, none of them empty, and
# the installed nmt runs from there (`nmt --version`).
#   tests/infra/install_lays_out_binaries_man_page_and_completion.sh CMAKE_COMMAND BUILD_DIR
set -u
cmake=$1 build=$2
prefix=$(mktemp -d) && trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" > /dev/null || exit 1
for f in bin/nmt bin/nmt-torch share/man/man1/nmt.1 share/bash-completion/completions/nmt; do
  [[ -s "$prefix/$f" ]] || { echo "cmake --install wrote no $f" >&2; exit 1; }
done
"$prefix/bin/nmt" --version | grep -q '^nmt ' || { echo "the installed nmt does not run" >&2; exit 1; }
