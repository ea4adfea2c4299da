#!/bin/bash
# Run Autobahn|Testsuite fuzzingclient against one WebSocket URL.
# Usage: run-fuzzingclient.sh URL AGENT OUTDIR
#   CASES   env: JSON list body of case patterns
#                (default: "1.*","2.*","3.*","4.*","5.*","6.*","7.*","9.*","10.*")
#   EXCLUDE env: JSON list body of excluded case patterns (default: none)
#   WSTEST_TIMEOUT env: seconds before wstest is killed (default 3600)
# Writes OUTDIR/spec.json, OUTDIR/wstest.log and the reports (index.json, *.json, *.html).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
URL=${1:?url}; AGENT=${2:?agent}; OUTDIR=${3:?outdir}
CASES=${CASES:-'"1.*","2.*","3.*","4.*","5.*","6.*","7.*","9.*","10.*"'}
EXCLUDE=${EXCLUDE:-}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
rm -f "$OUTDIR"/*.json "$OUTDIR"/*.html "$OUTDIR"/wstest.log
cat > "$OUTDIR/spec.json" <<JSON
{
  "outdir": "$OUTDIR",
  "servers": [{"agent": "$AGENT", "url": "$URL"}],
  "cases": [$CASES],
  "exclude-cases": [$EXCLUDE],
  "exclude-agent-cases": {}
}
JSON

echo "wstest -m fuzzingclient -s $OUTDIR/spec.json  (log: $OUTDIR/wstest.log)"
rc=0
timeout "${WSTEST_TIMEOUT:-3600}" "${WSTEST:-wstest}" -m fuzzingclient -s "$OUTDIR/spec.json" > "$OUTDIR/wstest.log" 2>&1 || rc=$?
echo "wstest exit status: $rc"
exit $rc
