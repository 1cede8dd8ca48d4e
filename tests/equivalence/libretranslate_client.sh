#!/usr/bin/env bash
# LibreTranslate's own Python client (libretranslatepy from PyPI, unmodified) against a running
# `nmt serve` on loopback: it translates what `nmt translate` translates, lists the languages,
# and sends its API key as LibreTranslate's server expects (skipped without the client:
# NMT_LIBTORCH=wheel NMT_SETUP_REFERENCE=1 scripts/setup.sh installs it).
#   libretranslate_client.sh NMT_BINARY SOURCE_DIR
set -euo pipefail
nmt=$1 root=$2
source "$root/tests/equivalence/reference_python.sh"
require_python_modules "libretranslatepy"
source "$root/tests/support/serve_helpers.sh"
work=$(mktemp -d)
server=
cleanup() { [[ -z $server ]] || kill "$server" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
"$nmt" train --preset transformer-tiny --train "$root/data/fixtures/tiny" --valid "$root/data/fixtures/tiny" \
  --out "$work/model" --max-steps 100 --valid-every 100 --seed 3 --threads 1 -q
sentence="A man is riding a bicycle down the street."
expected=$(echo "$sentence" | "$nmt" translate -q --threads 1 -m "$work/model")
echo "s3cret-key" > "$work/key"
for key in "" s3cret-key; do
  start_server "$work/serve.log" "$nmt" -m "$work/model" --threads 1 -q ${key:+--api-key-file "$work/key"}
  "$py" - "$port" "$key" "$sentence" "$expected" <<'PY'
import sys
import urllib.error

from libretranslatepy import LibreTranslateAPI

port, key, sentence, expected = sys.argv[1:5]
url = f"http://127.0.0.1:{port}/"
lt = LibreTranslateAPI(url, api_key=key or None)
got = lt.translate(sentence, "en", "fr")
assert got == expected, (got, expected)
languages = lt.languages()
assert [(l["code"], l["targets"]) for l in languages] == [("en", ["fr"]), ("fr", [])], languages
if key:
    try:
        LibreTranslateAPI(url).translate(sentence, "en", "fr")
        raise AssertionError("translated without the key")
    except urllib.error.HTTPError as e:
        assert e.code == 400, e.code
print(f"libretranslatepy: {'with' if key else 'without'} a key: {got!r}")
PY
  stop_server
done
