"""How fine CUPTI's timestamps are in a process, by when CUPTI was enabled there (issue 14).

    python3 -m tools.lab.cupti_step [--json out.json]

On the H200 the executors' records came in 32 ns steps and the fidelity tool's process's in 250 ns
steps (docs/harness-lab.md, "Timing on the H200"): at 250 ns a 2.5 us kernel's figure moves in 10 %
steps. Each order below runs in a fresh process: CUPTI's activity records enabled (a) before torch
is imported, (b) after the import and before CUDA starts, (c) after torch started CUDA (the peers'
executor's order, and the fidelity tool's before 2026-12-02), (d) with no torch, after the driver's
primary context and the harness's pad (the native executors' order). In each: 16 of the harness's
pads (3-6 us) and, with torch, 16 small torch kernels three ways, each flushed from another
process's context first when --other is given: alone, after the pad, and after the pad and an event
(as the executors call). Printed: the step of each one's durations (cupti_activity.timestamp_step).
"""

import argparse
import json
import subprocess
import sys
import time

from harness.executor.cuda_driver import Driver                                     # stdlib only, as is
from harness.executor.cupti_activity import Activity, find_library, timestamp_step  # this: no torch yet

ORDERS = ("before-import", "after-import", "after-init", "driver")


def probe(order, other):
    """One order, in this process: the steps of the pads' and the torch kernels' durations, a few of
    the durations (us), and the host's time in each phase of a call."""
    act, torch = None, None
    if order == "before-import":
        act = Activity(find_library())
    if order != "driver":
        import torch
    if order == "after-import":
        act = Activity(find_library())
    if torch is not None:
        torch.zeros(1, device="cuda").add_(1)
        torch.cuda.synchronize()
    drv = Driver(0)
    pad = drv.pad_kernel()
    pad.launch(0.001)
    drv.synchronize()
    if act is None:
        act = Activity(find_library())
    flusher = None
    if other:
        from .cupti_fidelity import OtherProcess
        flusher = OtherProcess(64 << 20)
    out = {"order": order, "other": other}
    pads = []
    for i in range(16):
        if flusher:
            flusher.flush()
        act.take()
        pad.launch(0.003 + 0.0002 * i)
        drv.synchronize()
        pads += act.take()
    out["pad_step_ns"] = timestamp_step(pads)
    out["pad_us"] = [round((e - s) / 1e3, 3) for _, s, e in pads[:6]]
    if torch is not None:
        x = torch.randn(4096, device="cuda")
        start, end = drv.event(), drv.event()
        # A small kernel alone, after the harness's pad (as the fidelity tool calls), and after the pad
        # and an event (as the executors' timed calls are made): the kernel's own records only.
        for how in ("alone", "after-pad", "after-pad-event"):
            kernels, phases = [], []
            for _ in range(16):
                if flusher:
                    flusher.flush()
                drv.synchronize()
                act.take()
                t = [time.perf_counter()]
                if how != "alone":
                    pad.launch(0.1)
                t.append(time.perf_counter())
                if how == "after-pad-event":
                    drv.record(start, 0x1)
                t.append(time.perf_counter())
                x.add_(1.0)
                t.append(time.perf_counter())
                if how == "after-pad-event":
                    drv.record(end, 0x1)
                t.append(time.perf_counter())
                torch.cuda.synchronize()
                phases.append([(b - a) * 1e6 for a, b in zip(t, t[1:])])
                recs = sorted(act.take(), key=lambda r: r[1])
                kernels += recs[1:] if how != "alone" else recs
            out[f"torch_{how}_step_ns"] = timestamp_step(kernels)
            out[f"torch_{how}_us"] = [round((e - s) / 1e3, 3) for _, s, e in kernels[:6]]
            # The host's time (us, median of 16) in: the pad's launch, the start event, the kernel's
            # launch, the end event (the executors' host_ms is the first three)
            out[f"torch_{how}_host_us"] = [round(sorted(p[j] for p in phases)[8], 1) for j in range(4)]
    if flusher:
        flusher.close()
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m tools.lab.cupti_step", description=__doc__.split("\n")[0])
    p.add_argument("--order", choices=ORDERS, help="probe this order in this process (default: each in its own)")
    p.add_argument("--other", action="store_true", help="flush from another process's context before each call")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)
    if args.order:
        print(json.dumps(probe(args.order, args.other)))
        return 0
    results = []
    for order in ORDERS:
        for other in (False, True):
            cmd = [sys.executable, "-m", "tools.lab.cupti_step", "--order", order] + (["--other"] if other else [])
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            line = run.stdout.strip().splitlines()[-1:] if run.returncode == 0 else []
            results.append(json.loads(line[0]) if line else {"order": order, "other": other,
                                                                "error": run.stderr.strip()[-600:]})
            print(json.dumps(results[-1]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
