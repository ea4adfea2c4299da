#!/bin/bash
# Run Autobahn|Testsuite fuzzingclient against the reference relay (reference-relay.js, Node
# `ws`), through relay-adapter.js in direct mode (no codes): the same set-up as
# run-against-relay.sh, so the two reports can be compared case by case.
#
# Usage: run-against-reference.sh [--relay-port 9003] [--adapter-port 9004]
#                                 [--agent reference-ws-relay] [--out DIR]
#   Ports can also come from REF_PORT / ADAPTER_PORT.
#   CASES / EXCLUDE / WSTEST_TIMEOUT env as in run-fuzzingclient.sh
#   (default cases "1.*","2.*","3.*","4.*","5.*","6.*","7.*","9.*","10.*").
#   REF_WS_DEFAULTS=1 keeps ws's maxFragments/maxBufferedChunks defaults in the relay.
# Starts reference-relay.js and the adapter, runs the suite, stops both by pid. Reports go to
# reports/reference (or --out), with reference-relay.log and adapter.log. Prints counts by
# behavior and behaviorClose and the non-OK cases (summarize.py).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RELAY_PORT=${REF_PORT:-9003}
ADAPTER_PORT=${ADAPTER_PORT:-9004}
AGENT=reference-ws-relay
OUT="$HERE/reports/reference"
while [ $# -gt 0 ]; do
  case "$1" in
    --relay-port) RELAY_PORT=$2; shift 2;;
    --adapter-port) ADAPTER_PORT=$2; shift 2;;
    --agent) AGENT=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    -h|--help) sed -n 2,14p "$0"; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
for p in "$RELAY_PORT" "$ADAPTER_PORT"; do
  if port_open 127.0.0.1 "$p"; then
    echo "port $p is already in use; use --relay-port / --adapter-port" >&2; exit 2
  fi
done

mkdir -p "$OUT"
RLOG="$OUT.reference-relay.log"; ALOG="$OUT.adapter.log"
RPID=; APID=
stop_all() {
  [ -n "$APID" ] && { kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null; }
  [ -n "$RPID" ] && { kill "$RPID" 2>/dev/null; wait "$RPID" 2>/dev/null; }
  APID=; RPID=
}
trap stop_all EXIT

# wait_listening PID LOG: up to 10 s for the LISTENING line
wait_listening() {
  for i in $(seq 100); do grep -q LISTENING "$2" 2>/dev/null && return 0; kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  grep -q LISTENING "$2" 2>/dev/null
}

node "$HERE/reference-relay.js" "$RELAY_PORT" 127.0.0.1 > "$RLOG" 2>&1 &
RPID=$!
wait_listening "$RPID" "$RLOG" || { echo "reference relay did not start:" >&2; cat "$RLOG" >&2; exit 2; }

node "$HERE/relay-adapter.js" --direct --port "$ADAPTER_PORT" --relay "127.0.0.1:$RELAY_PORT" > "$ALOG" 2>&1 &
APID=$!
wait_listening "$APID" "$ALOG" || { echo "adapter did not start:" >&2; cat "$ALOG" >&2; exit 2; }

"$HERE/run-fuzzingclient.sh" "ws://127.0.0.1:$ADAPTER_PORT" "$AGENT" "$OUT"
WRC=$?
stop_all; trap - EXIT
mv "$RLOG" "$OUT/reference-relay.log"
mv "$ALOG" "$OUT/adapter.log"
tail -n 1 "$OUT/reference-relay.log"
echo "adapter: $(grep -c "setup failed" "$OUT/adapter.log") setup failures, $(grep -c "echo participant" "$OUT/adapter.log") echo-participant errors/closes by the relay side (see $OUT/adapter.log)"
grep "setup failed" "$OUT/adapter.log" | head -5
[ -f "$OUT/index.json" ] || { echo "no report written (wstest exit $WRC)" >&2; exit 1; }
python3 "$HERE/summarize.py" "$OUT"
