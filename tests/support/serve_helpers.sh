# Shell helpers for the tests that start `nmt serve` (sourced, not run).
#   start_server LOG NMT ARGS...   starts NMT serve ARGS... --port 0 in the background, logging to LOG;
#                                  sets $server (its pid) and $port once it listens, or fails the test.
#   post_translate PORT TEXT       prints the "translation" field of POST /translate {"text": TEXT}.
# The caller's cleanup trap kills $server.

start_server() {
  local log=$1 nmt=$2
  shift 2
  "$nmt" serve "$@" --port 0 2> "$log" &
  server=$!
  port=
  local _
  for _ in $(seq 600); do
    port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log")
    [[ -n $port ]] && return 0
    kill -0 "$server" 2>/dev/null || { echo "nmt serve exited before listening:"; cat "$log"; exit 1; }
    sleep 0.1
  done
  echo "nmt serve did not start within 60 s:"
  cat "$log"
  exit 1
}

stop_server() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=
}

post_translate() {
  python3 - "$1" "$2" <<'PY'
import json, sys, urllib.request
port, text = sys.argv[1], sys.argv[2]
req = urllib.request.Request(f"http://127.0.0.1:{port}/translate", data=json.dumps({"text": text}).encode(),
                             headers={"Content-Type": "application/json"})
print(json.load(urllib.request.urlopen(req))["translation"])
PY
}
