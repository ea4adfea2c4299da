#!/usr/bin/env python3
"""Summarize an Autobahn|Testsuite fuzzingclient report directory.

Usage: summarize.py REPORT_DIR [AGENT]
Reads REPORT_DIR/index.json (agent -> case id -> {behavior, behaviorClose,
duration, remoteCloseCode, reportfile}); for each non-OK case also reads the
per-case json to print a one-line reason (the case's "result"/"resultClose").
Exit status: 0 if every case has behavior in OK/NON-STRICT/INFORMATIONAL and
behaviorClose in OK/INFORMATIONAL, else 1.
"""
import json, os, sys
from collections import Counter

GOOD = {"OK", "NON-STRICT", "INFORMATIONAL"}
GOOD_CLOSE = {"OK", "INFORMATIONAL"}


def case_key(cid):
    return tuple(int(p) if p.isdigit() else p for p in cid.split("."))


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    rdir = sys.argv[1]
    with open(os.path.join(rdir, "index.json")) as f:
        index = json.load(f)
    agents = [sys.argv[2]] if len(sys.argv) > 2 else sorted(index)
    rc = 0
    for agent in agents:
        cases = index[agent]
        ids = sorted(cases, key=case_key)
        beh = Counter(cases[c]["behavior"] for c in ids)
        bclose = Counter(cases[c]["behaviorClose"] for c in ids)
        print("agent %r: %d cases" % (agent, len(ids)))
        print("  behavior:      " + ", ".join("%s=%d" % kv for kv in sorted(beh.items())))
        print("  behaviorClose: " + ", ".join("%s=%d" % kv for kv in sorted(bclose.items())))
        bad = [c for c in ids if cases[c]["behavior"] != "OK" or cases[c]["behaviorClose"] != "OK"]
        if bad:
            print("  non-OK cases (id: behavior/behaviorClose closeCode dur: reason):")
        for c in bad:
            e = cases[c]
            if e["behavior"] not in GOOD or e["behaviorClose"] not in GOOD_CLOSE:
                rc = 1
            reason = ""
            rf = e.get("reportfile")
            if rf and os.path.exists(os.path.join(rdir, rf.replace(".html", ".json"))):
                with open(os.path.join(rdir, rf.replace(".html", ".json"))) as f:
                    d = json.load(f)
                parts = []
                if e["behavior"] != "OK":
                    parts.append(str(d.get("result", "")))
                if e["behaviorClose"] != "OK":
                    parts.append("close: " + str(d.get("resultClose", "")))
                reason = " | ".join(p for p in parts if p)
            print("    %-8s %s/%s code=%s %dms: %s" % (
                c, e["behavior"], e["behaviorClose"], e.get("remoteCloseCode"),
                e.get("duration", 0), reason))
    return rc


if __name__ == "__main__":
    sys.exit(main())
