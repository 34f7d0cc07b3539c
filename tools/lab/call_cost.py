"""Where the host's time goes in one timed call of a native executor, phase by phase, and what
taking CUPTI's records less often would save (issue 14: cheaper rounds for the one-block kernels).

    python3 -m tools.lab.call_cost [--calls 200] [--other] [--json out.json]

A kept rmsnorm evaluation spends 1.44 ms of host time a timed call for a 2-3 us kernel, and its
one-block scenarios stop at their time cap with about 190 rounds, where their medians need about
500 to repeat within 2 % (docs/harness-lab.md, "Fifth session"). This replays the executor's sequence
(executor/process.py, `_timed_gpu`) in one process on the driver alone, with the harness's pad as the call
(a 2 us kernel on every SM), and times each phase with the host's clock:

    sync, take-before, pad launch, start event, call, end event, sync, after event + wait,
    the two elapsed times, take-after, the layout

for each way of taking CUPTI's records (VARIANTS): after every call with a forced flush (as now),
after every call with an unforced one (CUPTI hands over only the buffers it has completed: are the
records there?), once every 8 calls (the calls told apart by their pads), and never until the end.
With --other, another process flushes L2 from its own context before every call (as the parent).
Printed per variant: each phase's median (us), the median call, and how many calls' records read
as a pad and one call (what a figure needs).
"""

import argparse
import json
import sys
import time

from harness.executor.cuda_driver import Driver
from harness.executor.cupti_activity import BUFFER_BYTES, FLUSH_FORCED, Activity, call_layout, find_library

PAD_MS = 0.1          # the native executors' pad (cuda_loop.PAD_MS)
CALL_MS = 0.002       # the stand-in call: the pad's kernel for 2 us
PHASES = ("sync", "take_before", "pad", "start", "call", "end", "sync2", "after", "elapsed", "take_after", "layout")
# (name, flags of the take, calls per take, CUPTI's buffers' bytes)
VARIANTS = (("forced-each", FLUSH_FORCED, 1, BUFFER_BYTES), ("unforced-each", 0, 1, BUFFER_BYTES),
            ("forced-every-8", FLUSH_FORCED, 8, BUFFER_BYTES), ("at-end", FLUSH_FORCED, 0, BUFFER_BYTES),
            # The first launch after a forced take cost 245-258 us on the H200 (2026-12-02, sixth
            # session): does it grow with the buffers CUPTI gets back?
            ("forced-each-64k", FLUSH_FORCED, 1, 64 << 10), ("forced-each-8k", FLUSH_FORCED, 1, 8 << 10),
            ("unforced-each-64k", 0, 1, 64 << 10))


def split_at_pads(records, pad_ms):
    """Records of several padded calls taken at once -> one list per call, each from its pad (a
    kernel of at least 0.9 x the pad's length) to the next pad. Only for this tool, whose call is a
    kernel far shorter than the pad: a call's own kernel as long as the pad would read as a pad."""
    out = []
    for rec in sorted(records, key=lambda r: (r[1], r[2])):
        if rec[0] == "kernel" and rec[2] - rec[1] >= 0.9e6 * pad_ms:
            out.append([rec])
        elif out:
            out[-1].append(rec)
    return out


def summarize(name, phases, readable, calls):
    """One variant's report: each phase's median (us) over the calls, the median call's total, and
    how many calls' records read as a pad and one call."""
    med = {}
    for k in PHASES:
        v = sorted(p[k] for p in phases)
        med[k] = round(v[len(v) // 2], 1) if v else None
    totals = sorted(sum(p.values()) for p in phases)
    return {"variant": name, "phase_us": med, "call_us": round(totals[len(totals) // 2], 1) if totals else None,
            "readable": readable, "calls": calls}


def replay(drv, pad, act, flags, every, calls, flusher=None):
    """(phases per call, calls whose records read as a pad and one call) for one variant."""
    start, end, after = drv.event(), drv.event(), drv.event()
    phases, records, taken, mark = [], [], True, [0.0]

    def lap(key):
        now = time.perf_counter()
        phases[-1][key] = (now - mark[0]) * 1e6
        mark[0] = now
    act.take()
    for i in range(calls):
        if flusher is not None:
            flusher.flush()
        phases.append({})
        mark[0] = time.perf_counter()
        drv.synchronize()
        lap("sync")
        if every == 1 and not taken:
            records += act.take(flags)
        lap("take_before")
        pad.launch(PAD_MS)
        lap("pad")
        drv.record(start, 0x1)
        lap("start")
        pad.launch(CALL_MS)
        lap("call")
        drv.record(end, 0x1)
        lap("end")
        drv.synchronize()
        lap("sync2")
        drv.record(after, 0x1)
        drv.event_sync(after)
        lap("after")
        drv.elapsed_ms(start, end)
        drv.elapsed_ms(end, after)
        lap("elapsed")
        got = []
        if every and (i + 1) % every == 0:
            got = act.take(flags)
            records += got
        taken = bool(got)
        lap("take_after")
        if every == 1:
            call_layout(got, PAD_MS)
        lap("layout")
    records += act.take()
    readable = sum(1 for c in split_at_pads(records, PAD_MS) if call_layout(c, PAD_MS) is not None)
    return phases, readable


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m tools.lab.call_cost", description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--other", action="store_true", help="flush L2 from another process before every call")
    ap.add_argument("--json", help="write the report here")
    args = ap.parse_args(argv)
    path = find_library()
    if path is None:
        print("call_cost: no libcupti found", file=sys.stderr)
        return 2
    drv = Driver(0)
    pad = drv.pad_kernel()
    pad.launch(0.001)
    drv.synchronize()
    flusher = None
    if args.other:
        from .cupti_fidelity import OtherProcess
        flusher = OtherProcess(64 << 20)
    out = []
    try:
        for name, flags, every, size in VARIANTS:
            act = Activity(path, size)    # CUPTI's callbacks registered anew, with buffers of `size`
            phases, readable = replay(drv, pad, act, flags, every, args.calls, flusher)
            out.append(summarize(name, phases[10:], readable, args.calls))     # the first 10: warming up
            print(json.dumps(out[-1]), flush=True)
    finally:
        if flusher is not None:
            flusher.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"other": args.other, "variants": out}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
