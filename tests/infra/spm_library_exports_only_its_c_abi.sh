#!/usr/bin/env bash
# ctest SpmLibrary.ExportsOnlyItsCAbi: libnmt_spm.so (lib/CMakeLists.txt), the library SentencePiece
# is reached through, exports its C ABI (nmt_spm_*) and nothing else: an exported SentencePiece or
# protobuf symbol could bind to LibTorch's protobuf, or LibTorch's to this one. Prints the symbols
# it exports besides (nm -D --defined-only, absolute symbols such as version nodes left out).
#   tests/infra/spm_library_exports_only_its_c_abi.sh LIBNMT_SPM
set -u
library=$1
if nm -D --defined-only "$library" | awk '$2 != "A" {print $3}' | grep -v '^nmt_spm_'; then
  echo "$library exports the symbols above besides its C ABI (nmt_spm_*)" >&2
  exit 1
fi
exit 0
