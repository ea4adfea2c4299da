#!/bin/bash
# Run Autobahn|Testsuite fuzzingclient against a running relay, through relay-adapter.js.
#
# Usage: run-against-relay.sh [--access-port 3000] [--relay-port 3001] [--adapter-port 9002]
#                             [--host 127.0.0.1] [--agent relay] [--out DIR] [--tls]
#   Ports can also come from RELAY_PORT_ACCESS / RELAY_PORT_RELAY / ADAPTER_PORT; the token
#   audience from RELAY_AUDIENCE (default http://<host>:<access-port>), the HS256 key from
#   RELAY_SECRET (default: the relay's development key).
#   CASES / EXCLUDE / WSTEST_TIMEOUT env as in run-fuzzingclient.sh
#   (default cases "1.*","2.*","3.*","4.*","5.*","6.*","7.*","9.*","10.*").
#   --tls: the relay serves TLS (RELAY_TLS_CERT/KEY); the adapter speaks TLS to it.
# The relay must already be running. Reports go to reports/relay (or --out); the adapter's
# log to <out>/adapter.log. Prints counts by behavior and behaviorClose and the non-OK cases.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
HOST=127.0.0.1
ACCESS_PORT=${RELAY_PORT_ACCESS:-3000}
RELAY_PORT=${RELAY_PORT_RELAY:-3001}
ADAPTER_PORT=${ADAPTER_PORT:-9002}
AGENT=relay
TLS=
OUT="$HERE/reports/relay"
while [ $# -gt 0 ]; do
  case "$1" in
    --access-port) ACCESS_PORT=$2; shift 2;;
    --relay-port) RELAY_PORT=$2; shift 2;;
    --adapter-port) ADAPTER_PORT=$2; shift 2;;
    --host) HOST=$2; shift 2;;
    --agent) AGENT=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    --tls) TLS=1; shift;;
    -h|--help) sed -n 2,13p "$0"; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
SCHEME=http
[ -n "$TLS" ] && SCHEME=https
AUDIENCE=${RELAY_AUDIENCE:-$SCHEME://$HOST:$ACCESS_PORT}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
for p in "$ACCESS_PORT" "$RELAY_PORT"; do
  port_open "$HOST" "$p" || { echo "nothing listens on $HOST:$p: start the relay first" >&2; exit 2; }
done
if port_open 127.0.0.1 "$ADAPTER_PORT"; then
  echo "port $ADAPTER_PORT is already in use (another adapter?); use --adapter-port" >&2; exit 2
fi

mkdir -p "$OUT"
ADAPTER_TLS=${TLS:+1} node "$HERE/relay-adapter.js" --port "$ADAPTER_PORT" --access "$SCHEME://$HOST:$ACCESS_PORT" \
  --relay "$HOST:$RELAY_PORT" --audience "$AUDIENCE" > "$OUT.adapter.log" 2>&1 &
APID=$!
trap 'kill $APID 2>/dev/null; wait $APID 2>/dev/null' EXIT
# wait for the adapter's LISTENING line (no probe connection: it would cost two codes)
for i in $(seq 100); do grep -q LISTENING "$OUT.adapter.log" 2>/dev/null && break; kill -0 $APID 2>/dev/null || break; sleep 0.1; done
kill -0 $APID 2>/dev/null || { echo "adapter did not start:" >&2; cat "$OUT.adapter.log" >&2; exit 2; }

"$HERE/run-fuzzingclient.sh" "ws://127.0.0.1:$ADAPTER_PORT" "$AGENT" "$OUT"
WRC=$?
kill $APID 2>/dev/null; wait $APID 2>/dev/null; trap - EXIT
mv "$OUT.adapter.log" "$OUT/adapter.log"
echo "adapter: $(grep -c "setup failed" "$OUT/adapter.log") setup failures, $(grep -c "echo participant" "$OUT/adapter.log") echo-participant errors/closes by the relay side (see $OUT/adapter.log)"
grep "setup failed" "$OUT/adapter.log" | head -5
[ -f "$OUT/index.json" ] || { echo "no report written (wstest exit $WRC)" >&2; exit 1; }
python3 "$HERE/summarize.py" "$OUT"
