"""What the harness's own events add to a CUDA call's time, measured against CUPTI and subtracted.

A timed call runs between a start and an end event on the legacy stream (executor/process.py, `_timed_gpu`);
between the start event and the call's first kernel, and between its last kernel and the end event,
the GPU spends a few microseconds of its own (the candidate's kernels run on a blocking stream that
waits for the legacy one). Measured on the H200 against torch.profiler (CUPTI) for the same kernels:
2.5-2.9 us on every flash_attn_fwd and rmsnorm scenario, 1.4x the kernel on the smallest (6.5 us)
(docs/harness-lab.md). So the parent, in its own process and before any executor starts, times the
harness's pad kernel for a few microseconds the same way, once on a blocking stream (the path of
the candidate, the baseline and the incumbent) and once on the legacy stream (the peers, which
launch there through PyTorch), under torch.profiler, and takes the difference between the event
time and CUPTI's kernel time as that path's offset. Every implementation on a path gets the same
offset, measured by the trusted side: comparisons between them are unchanged, absolute figures
match CUPTI. Kept per GPU, driver, torch and harness version in the data dir (no sandbox binds it).
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from .. import HARNESS_VERSION
from ..executor.cuda_driver import CU_STREAM_LEGACY, PAD_PTX
from .profiler import device_activity

CAL_MS = 0.005      # the calibration kernel: the pad spinning 5 us on every SM's thread slots
REPS = 25
MEASURE_TIMEOUT_S = 120
# The floor of a figure after the offset: a call cannot take less (a figure this small is flagged by
# the roofline check anyway).
FLOOR_MS = 0.0005


def measure(pad_ms):
    """{"native": ms, "peers": ms} of event time beyond CUPTI's kernel time, on this process's GPU;
    raises RuntimeError when the profile cannot be matched with the calls made. The event times are
    taken with no profiler attached (CUPTI slows the launches and records it watches), the kernel
    times under it; run in a process of its own (`python -m harness.timing.event_offsets`), so that CUPTI
    never stays attached to the harness's parent."""
    from ..executor.cuda_driver import Driver
    torch.zeros(1, device="cuda").add_(1)      # torch's context exists and is current
    drv = Driver(torch.cuda.current_device())
    pad, stream = drv.pad_kernel(), drv.stream()
    start, end = drv.event(), drv.event()
    pad.launch(20.0)          # clocks up before anything is measured
    drv.synchronize()

    def run(path):
        drv.synchronize()
        pad.launch(pad_ms)
        drv.record(start, CU_STREAM_LEGACY)
        pad.launch(CAL_MS, stream if path == "native" else CU_STREAM_LEGACY)
        drv.record(end, CU_STREAM_LEGACY)
        drv.synchronize()
        return drv.elapsed_ms(start, end)

    paths = ("native", "peers")
    events = {path: sorted(run(path) for _ in range(REPS)) for path in paths}
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for path in paths:
            for _ in range(REPS):
                run(path)
    # The calibration launches are the short ones (the pads before them run pad_ms).
    spans = [(e - s) / 1e3 for _, kind, s, e in sorted(device_activity(prof), key=lambda a: a[2])
             if kind == "kernel" and (e - s) < 1e3 * (CAL_MS + pad_ms) / 2]
    if len(spans) != 2 * REPS:
        raise RuntimeError(f"the profile shows {len(spans)} calibration kernels where {2 * REPS} ran")
    out = {}
    for i, path in enumerate(paths):
        ks = sorted(spans[i * REPS:(i + 1) * REPS])
        out[path] = round(max(0.0, events[path][REPS // 2] - ks[REPS // 2]), 6)
    return out


def _key(info, pad_ms):
    parts = [info.get("name"), info.get("driver"), torch.__version__, torch.version.cuda, HARNESS_VERSION,
             hashlib.sha256(PAD_PTX.read_bytes()).hexdigest(), str(pad_ms), str(CAL_MS)]
    return hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:24]


def offsets(info, pad_ms, data_dir):
    """(offsets or None, how they were found: "measured", "kept" or why there are none) for the GPU
    that `info` (its device_info) describes."""
    path = Path(data_dir) / "calibration" / f"event-offsets-{_key(info, pad_ms)}.json"
    try:
        kept = json.loads(path.read_text())
        if set(kept) == {"native", "peers"} and all(isinstance(v, float) and 0 <= v < 0.1 for v in kept.values()):
            return kept, "kept"
    except (OSError, ValueError):
        pass
    try:
        proc = subprocess.run([sys.executable, "-m", "harness.timing.event_offsets", str(pad_ms)], capture_output=True,
                              text=True, timeout=MEASURE_TIMEOUT_S, cwd=str(Path(__file__).resolve().parents[2]))
        if proc.returncode != 0:
            raise RuntimeError((proc.stderr.strip().splitlines() or ["exited %d" % proc.returncode])[-1][:300])
        found = json.loads(proc.stdout.strip().splitlines()[-1])
        if not (set(found) == {"native", "peers"} and all(isinstance(v, float) and 0 <= v < 0.1 for v in found.values())):
            raise RuntimeError(f"unexpected figures: {proc.stdout.strip()[:200]}")
    except Exception as exc:   # noqa: BLE001 - the figures stay the raw event times, and say so
        return None, f"not calibrated ({type(exc).__name__}: {exc}): figures are the raw event times"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(found))
    os.replace(tmp, path)
    return found, "measured"


def corrected(ms, offset):
    return max(FLOOR_MS, ms - offset) if offset else ms


if __name__ == "__main__":
    print(json.dumps(measure(float(sys.argv[1]))))
