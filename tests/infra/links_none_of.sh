#!/usr/bin/env bash
# ctest ScorerOnly.LinksNeitherLibTorchNorSentencePieceNorProtobuf (the scorer-only nmt) and
# SpmLibrary.LinksNeitherLibTorchNorProtobuf (libnmt_spm.so, lib/CMakeLists.txt): FILE, an
# executable or shared library, names no library matching the extended regular expression REGEX
# among the NEEDED entries of its dynamic section (readelf -d). Prints those it names.
#   tests/infra/links_none_of.sh FILE REGEX
set -u
file=$1 libraries=$2
if readelf -d "$file" | grep NEEDED | grep -E "$libraries"; then
  echo "$file needs the libraries above (they match '$libraries')" >&2
  exit 1
fi
exit 0
