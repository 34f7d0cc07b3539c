"""The GPU's own start and end times of what a process runs, from CUPTI's activity API (ctypes only).

A CUDA executor enables it before anything is loaded (process.py, `cmd_cuda`) and reads it after
every timed call: the call's span runs from the start of its first kernel, memset or copy to the end
of its last, as the GPU recorded them, and its figure is that span less the front end's gaps between
its records (call_layout's `work`). That is what torch.profiler (CUPTI too) reports for the same
call, with no launch or event latency in it (those vary by about 0.4 us between kernels, which is
20 % of a 2 us kernel). The records live in the executor's process, so they are
that process's report like its event times: the parent bounds them by the events and its own clock
(timing/cuda_loop.py).

Every record kind read here keeps `start` and `end` (uint64 ns) at offsets 16 and 24 in every
CUPTI version since CUDA 9 (CUpti_ActivityKernel4..., CUpti_ActivityMemcpy..., CUpti_ActivityMemset...),
and `kind` (uint32) at 0. Standard library only: the executor imports no torch.
"""

import ctypes
import glob
import os
import sys
import threading

# CUpti_ActivityKind: the kinds enabled, and how they read
KIND_MEMCPY, KIND_MEMSET, KIND_CONCURRENT_KERNEL, KIND_MEMCPY2 = 1, 2, 10, 22
KINDS = {KIND_MEMCPY: "memcpy", KIND_MEMSET: "memset", KIND_CONCURRENT_KERNEL: "kernel", KIND_MEMCPY2: "memcpy"}
START, END = 16, 24
FLUSH_FORCED = 1                    # CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
BUFFER_BYTES = 1 << 20
BUFFERS = 8                         # allocated up front: none is allocated once the filter is on

_REQUESTED = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)),
                              ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t))
_COMPLETED = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint8),
                              ctypes.c_size_t, ctypes.c_size_t)


def library_candidates():
    """Where libcupti may be, best first: $KERNELSEEK_CUPTI, the one PyTorch's wheels bring (the
    peers' executor runs torch, whose profiler would load that one), then the CUDA toolkit's."""
    found = []
    if os.environ.get("KERNELSEEK_CUPTI"):
        found.append(os.environ["KERNELSEEK_CUPTI"])
    for site in sys.path:
        found += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", "libcupti.so*")), reverse=True)
    for root in ["/usr/local/cuda", *sorted(glob.glob("/usr/local/cuda-*"), reverse=True)]:
        found += sorted(glob.glob(os.path.join(root, "extras", "CUPTI", "lib64", "libcupti.so*")), reverse=True)
        found += sorted(glob.glob(os.path.join(root, "targets", "*", "lib", "libcupti.so*")), reverse=True)
    seen, out = set(), []
    for path in found:
        real = os.path.realpath(path)
        if os.path.isfile(real) and real not in seen:
            seen.add(real)
            out.append(real)
    return out


def find_library():
    """The path of the libcupti to use, or None. Not loaded here: the parent never loads CUPTI (it
    would attach to the parent's context); each executor loads it and says whether it works."""
    found = library_candidates()
    return found[0] if found else None


def read_records(buf, valid, next_record):
    """[(kind name, start ns, end ns)] of the records in a completed buffer that read as work on the
    GPU; `next_record(buf, valid, record_pointer) -> status` is cuptiActivityGetNextRecord."""
    out, rec = [], ctypes.c_void_p()
    while True:
        status = next_record(buf, ctypes.c_size_t(valid), ctypes.byref(rec))
        if status != 0:
            return out
        kind = ctypes.c_uint32.from_address(rec.value).value
        if kind in KINDS:
            start = ctypes.c_uint64.from_address(rec.value + START).value
            end = ctypes.c_uint64.from_address(rec.value + END).value
            out.append((KINDS[kind], start, end))


class Activity:
    """CUPTI's records of this process's kernels, memsets and copies; `take()` flushes and returns
    those since the last `take()`. Raises OSError or RuntimeError when CUPTI cannot be enabled."""

    def __init__(self, path, buffer_bytes=BUFFER_BYTES):
        self.lib = lib = ctypes.CDLL(path)
        self.buffer_bytes = buffer_bytes
        lib.cuptiActivityGetNextRecord.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
        lib.cuptiActivityGetNextRecord.restype = ctypes.c_int
        self.records, self.lock = [], threading.Lock()
        self.free = [(ctypes.c_uint8 * buffer_bytes)() for _ in range(BUFFERS)]
        self.lent = {}
        # Kept on the object: CUPTI calls them for as long as the process lives.
        self._requested, self._completed = _REQUESTED(self._request), _COMPLETED(self._complete)
        self._check(lib.cuptiActivityRegisterCallbacks(self._requested, self._completed), "register callbacks")
        for kind in KINDS:
            self._check(lib.cuptiActivityEnable(ctypes.c_int(kind)), f"enable kind {kind}")

    def _check(self, status, what):
        if status != 0:
            raise RuntimeError(f"CUPTI {what}: error {status}")

    def _request(self, buf_out, size_out, max_out):
        with self.lock:
            buf = self.free.pop() if self.free else None
            if buf is not None:
                self.lent[ctypes.addressof(buf)] = buf
        # Every buffer out: a null one, and CUPTI drops records (and says so); nothing is allocated.
        buf_out[0] = ctypes.POINTER(ctypes.c_uint8)() if buf is None else ctypes.cast(buf, ctypes.POINTER(ctypes.c_uint8))
        size_out[0] = 0 if buf is None else self.buffer_bytes
        max_out[0] = 0

    def _complete(self, _ctx, _stream, buf, _size, valid):
        addr = ctypes.cast(buf, ctypes.c_void_p).value
        records = read_records(ctypes.c_void_p(addr), valid, self.lib.cuptiActivityGetNextRecord) if valid else []
        with self.lock:
            self.records += records
            mine = self.lent.pop(addr, None)
            if mine is not None:
                self.free.append(mine)

    def take(self, flags=FLUSH_FORCED):
        """The records since the last take. FLUSH_FORCED: CUPTI hands over its buffers whether full or
        not, with every record of the work finished so far (0: only the buffers it has completed)."""
        self._check(self.lib.cuptiActivityFlushAll(ctypes.c_uint32(flags)), "flush")
        with self.lock:
            out, self.records = self.records, []
        return out


STEPS_NS = (1000, 500, 250, 125, 64, 32, 16, 8)   # finer ones are all within the slack
STEP_SLACK_NS = 2     # CUPTI converts the GPU's clock to the host's: a 32 ns step reads as 31-33 ns


def timestamp_step(records):
    """The coarsest step (ns, of STEPS_NS) every record's duration of `records` [(kind, start ns, end
    ns)] is a multiple of, within STEP_SLACK_NS; 1 when none is, 0 with no record of non-zero length.
    Durations, not the stamps themselves: CUPTI maps the GPU's clock onto the host's, so stamps far
    apart carry the mapping's drift, a record's two ends do not. The H200's records came in 32 ns
    steps in the executors; at 250 ns a 2.5 us kernel's figure would move in 10 % steps."""
    lengths = [end - start for _, start, end in records if end > start]
    if not lengths:
        return 0
    for step in STEPS_NS:
        if all(min(n % step, step - n % step) <= STEP_SLACK_NS for n in lengths):
            return step
    return 1


def call_span_ms(records, pad_ms):
    """A timed call's span in ms from the records taken after it: with a pad, the first record must
    be the harness's pad (queued first, so it starts first: the call waits for it) and is left out;
    the span runs from the start of the next record to the end of the last. None when the records
    do not read that way (no pad, a record dropped) or nothing else ran."""
    layout = call_layout(records, pad_ms)
    return None if layout is None else layout["span"]


def call_layout(records, pad_ms, gap_ms=None):
    """The span (ms, as call_span_ms) with how it lay on the GPU: `lead`, from the pad's end to the
    call's first record (the host still queueing the call when the pad ended: what the pad did not
    cover; None without a pad), `idle`, the time inside the span where none of the call's records
    ran (gaps between its kernels, copies and memsets), and `work`, the call's figure: the span less
    up to `gap_ms` (FRONT_END_GAP_MS) of each of those gaps (work_of). None where call_span_ms is None."""
    ordered = sorted(records, key=lambda r: (r[1], r[2]))
    lead_from = None
    if pad_ms > 0:
        if not ordered or ordered[0][0] != "kernel" or (ordered[0][2] - ordered[0][1]) < 0.9e6 * pad_ms:
            return None
        lead_from = ordered[0][2]
        ordered = ordered[1:]
    if not ordered:
        return None
    span, idle, work = work_of([(start, end) for _, start, end in ordered],
                               (FRONT_END_GAP_MS if gap_ms is None else gap_ms) * 1e6)
    return {"span": span / 1e6, "idle": idle / 1e6, "work": work / 1e6,
            "lead": None if lead_from is None else max(0, ordered[0][1] - lead_from) / 1e6}


# What a call's figure leaves out of its span: the GPU idle between two of its records, up to this
# much of each gap. Between a call's kernels (and memsets, copies) the GPU's front end takes one to
# two and a half microseconds to start the next one after the last ended, even with everything queued,
# and how long is not the kernels': on the H200 the cuDNN peer's kernel started 1.5 or 2.3 us after
# its memset, the later in a share of the calls that differs from process to process (a tenth of its
# smallest scenarios' time), the flash peer's second record 0.9 or 1.9 us after its first
# (docs/harness-lab.md, "Tenth session"); torch.profiler's kernel times leave every gap out. A longer gap
# is the host (work between launches, a launch that outran the pad): all of it beyond the allowance
# counts.
FRONT_END_GAP_MS = 0.003


def work_of(intervals, allowance):
    """(span, idle, work) of [(start, end)], all in their unit: the span from the first start to the
    last end, the time inside it that no interval covers, and the span less up to `allowance` (the
    same unit) of each uncovered gap."""
    ordered = sorted(intervals)
    first, reach, idle, excused = ordered[0][0], ordered[0][0], 0, 0
    for start, end in ordered:
        if start > reach:
            idle += start - reach
            excused += min(start - reach, allowance)
        reach = max(reach, end)
    return reach - first, idle, reach - first - excused


def _self_check():
    """`python3 -m harness.executor.cupti_activity`: on a GPU host, the library found and the spans of the
    harness's pad (5, 20, 100 us) and of a pad-led call, as this module reads them (one JSON line)."""
    import json
    import time
    import torch
    from .cuda_driver import Driver, PAD_PTX
    torch.zeros(1, device="cuda").add_(1)
    drv = Driver(torch.cuda.current_device())
    pad = drv.pad_kernel(PAD_PTX.read_bytes())
    path = find_library()
    act = Activity(path)
    out = {"library": path, "pads_us": {}, "call_us": []}
    for us in (5, 20, 100):
        act.take()
        pad.launch(us / 1e3)
        drv.synchronize()
        out["pads_us"][us] = round(call_span_ms(act.take(), 0.0) * 1e3, 3)
    x = torch.randn(64, 64, device="cuda")
    for _ in range(5):
        act.take()
        pad.launch(0.1)
        t0 = time.perf_counter()
        x.add_(1.0)
        drv.synchronize()
        wall = time.perf_counter() - t0
        out["call_us"].append({"span": round(call_span_ms(act.take(), 0.1) * 1e3, 3), "wall": round(wall * 1e6, 1)})
    print(json.dumps(out))


if __name__ == "__main__":
    _self_check()
