#!/usr/bin/env bash
# ctest Docs.OptionReferenceIsCurrent: docs/reference/options.md is the binary's own help texts,
# regenerated here by scripts/gen/gen-options-reference.sh and compared with the committed file;
# prints the difference. After changing an option:
#   bash scripts/gen/gen-options-reference.sh build/nmt > docs/reference/options.md
#   tests/infra/option_reference_is_current.sh NMT_BINARY SOURCE_DIR
set -u
nmt=$1 root=$2
diff -u "$root/docs/reference/options.md" <(bash "$root/scripts/gen/gen-options-reference.sh" "$nmt") >&2
