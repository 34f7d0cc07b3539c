#!/usr/bin/env python3
"""Compact summary of check.py --log JSON lines: correctness per task, then TFLOP/s (or GB/s) of the
kernel and the peers on a few representative scenarios.  python3 summary.py results.jsonl"""
import json
import re
import sys

PICK = re.compile(r"^b\d+-h(\d+)-kv\1-sq(512|2048|8192|16384)-sk\2-d(64|128|256)-c[01]$"
                  r"|-sq1-sk8192-d128|-sq77-sk16384-d128|^r(1|4096|65536)-c(1024|16384)$|^r65535-c4097$")

recs = [json.loads(line) for line in open(sys.argv[1])]
for task in sorted({r["task"] for r in recs}):
    rs = [r for r in recs if r["task"] == task]
    ok = sum(r["ok"] for r in rs)
    worst = max(rs, key=lambda r: r["err"] / r["tol"] if r["tol"] else float("inf"))
    print("== %s: %d/%d correct; worst err/tol %.3f (%s: err %.3g tol %.3g)"
          % (task, ok, len(rs), worst["err"] / worst["tol"], worst["id"], worst["err"], worst["tol"]))
    for r in rs:
        if not r["ok"]:
            print("   FAIL %s %s" % (r["id"], r.get("reason", "")))
    bad_peers = sorted({"%s:%s" % (k, v) for r in rs for k, v in r["peer_err"].items()
                        if isinstance(v, str) and v != "unsupported"})
    unsup = {k: sum(1 for r in rs if r["peer_err"].get(k) == "unsupported") for r in rs[:1] for k in r["peer_err"]}
    print("   peers unsupported: %s %s" % (unsup, bad_peers[:3]))
    print("   %-38s %9s %7s %6s  %s" % ("scenario", "ms", "TFLOP/s", "GB/s", "peers: ms (TFLOP/s)"))
    for r in rs:
        t = r.get("time_ms")
        if not t or not PICK.search(r["id"]) or not isinstance(t.get("kernel"), float):
            continue
        k = t["kernel"]
        peers = "  ".join("%s %.3f (%.1f)" % (n, v, r["tflops"] * k / v) if isinstance(v, float) else "%s -" % n
                          for n, v in t.items() if n != "kernel")
        print("   %-38s %9.3f %7.1f %6.0f  %s" % (r["id"], k, r["tflops"], r["gbps"], peers))
