"""Set the harness's per-scenario times against the GPU time CUPTI (torch.profiler) reports (issue 14).

    python3 -m tools.lab.cupti_fidelity --task-dir kernels/flash_attn_fwd \\
        --candidate kernels/flash_attn_fwd/baseline.cu --result r.json \\
        [--scenarios all|quick|IDS] [--calls 5] [--seed 0] [--pad-ms 1.0] [--json out.json]

`r.json` is `python3 -m harness eval --json r.json` of the same task and candidate. For each scenario
that is ok there, the candidate, the baseline and the peers with a harness figure are called again
in this process (no executors, no sandbox: trusted kernels only), under one profiler per scenario.
Each call follows an L2 flush that CUPTI records as a device-to-device memcpy, not a kernel (so an
implementation that makes such a copy itself cannot be measured), and a sleep kernel that keeps the
stream busy while the call's launches are queued, as in the harness's padded rounds; what runs
between two flushes, less that sleep, is one call. Per call: `kernel_sum_us`, the kernels' durations
added up, and `span_us`, from the start of the first kernel (or memset, or other copy) to the end of
the last, and `work_us`, the harness's figure: the span less up to FRONT_END_GAP_MS of each gap between
records (cupti_activity.call_layout). Each is made into a scenario's time as the harness makes it
(cuda_loop.FIGURE), and the harness's figures are set against the calls' work, their span and
their kernel sum (`span_median_ms` is the spans' median, for comparison).
"""

import argparse
import contextlib
import ctypes
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import torch

from harness.api import Unsupported
from harness.build.compile import build
from harness.errors import EnvironmentProblem, HarnessError, UsageError
from harness.executor.cuda_driver import DeviceRange, Driver
from harness.executor.cupti_activity import FRONT_END_GAP_MS, Activity, call_layout, find_library, timestamp_step, work_of
from harness.executor.memory import SPREAD_ALIGN
from harness.executor.pair import argtypes
from harness.executor.process import _CTYPES
from harness.executor.shm import layout
from harness.executor.slots import _specs
from harness.task.model import load_reference, load_task
from harness.task.scenarios import select_scenarios
from harness.timing.cuda_loop import FIGURE, set_bytes
from harness.timing.devices import MAX_CLOCK_HZ, MIB
from harness.timing.profiler import device_activity, kind_of, kineto_activity
from harness.timing.stats import median

TOLERANCE = 0.05          # issue 14: every per-scenario time within ±5 % of CUPTI's ...
MEDIAN_TOLERANCE = 0.01   # ... and the median deviation within ±1 %
PAD_KERNEL = "spin_kernel"   # torch.cuda._sleep's kernel, at::cuda::(anonymous)::spin_kernel


class FidelityError(HarnessError):
    """A profile that cannot be cut into the calls that were made."""


# -- the profile: device activity -> calls ---------------------------------------------------------

def split_calls(activity, expected):
    """Cut device activity [(name, kind, start_us, end_us)] into calls at each flush.

    One dict per call: `kernel_sum_us`, `span_us` (over everything but a leading pad kernel) and
    `kernels` (how many). Raises FidelityError unless there are exactly `expected` flushes, nothing
    runs before the first and every call ran something."""
    calls, current = [], None
    for name, kind, start, end in sorted(activity, key=lambda a: (a[2], a[3])):
        if kind == "flush":
            current = []
            calls.append(current)
        elif current is None:
            raise FidelityError(f"{name} ran before the first flush")
        else:
            current.append((name, kind, start, end))
    if len(calls) != expected:
        raise FidelityError(f"{len(calls)} device-to-device copies where {expected} flushes were made: an "
                            f"implementation copies device memory itself, so its calls cannot be told apart")
    figures = []
    for i, call in enumerate(calls):
        if call and PAD_KERNEL in call[0][0]:
            call = call[1:]
        figures.append(call_figure(call, i))
    return figures


def call_figure(call, i):
    """One call's `kernel_sum_us`, `span_us`, `work_us` (the harness's figure: the span less up to
    FRONT_END_GAP_MS of each gap inside it, cupti_activity.call_layout) and `kernels` from its
    activity [(name, kind, start_us, end_us)], the pad left out; FidelityError when it ran nothing."""
    if not call:
        raise FidelityError(f"call {i} ran nothing on the device")
    kernels = [a for a in call if a[1] == "kernel"]
    span, _, work = work_of([(a[2], a[3]) for a in call], FRONT_END_GAP_MS * 1e3)
    return {"kernel_sum_us": sum(end - start for _, _, start, end in kernels), "span_us": span, "work_us": work,
            "kernels": len(kernels)}


def _figures(every):
    """One implementation's calls -> its figures (ms), made as the harness makes a CUDA scenario's
    time of its rounds (cuda_loop.FIGURE), the span's median beside them, and the calls.
    Calls whose launches outran their pad (`outran`) are left out of the figures (all of them, if
    every call did) and counted."""
    mine = [f for f in every if not f.get("outran")] or every
    spans = [f["span_us"] for f in mine]
    return {"kernel_sum_ms": FIGURE.of([f["kernel_sum_us"] for f in mine]) / 1e3,
            "work_ms": FIGURE.of([f["work_us"] for f in mine]) / 1e3, "span_ms": FIGURE.of(spans) / 1e3,
            "span_median_ms": median(spans) / 1e3, "outran": sum(bool(f.get("outran")) for f in every),
            "calls": every}


def per_impl(figures, impls, calls):
    """The calls of `impls`, `calls` each in that order, -> {impl: figures (ms) and the calls}."""
    return {impl: _figures(figures[j * calls:(j + 1) * calls]) for j, impl in enumerate(impls)}





# -- figures ---------------------------------------------------------------------------------------
def summarize(rows, key):
    """Harness / CUPTI (`key`: span_ms or kernel_sum_ms) per implementation and overall: how many lie
    within ±5 %, the median ratio, the median |ratio - 1|, the worst ratio and its scenario, and
    `met`: all within ±5 % and the median |ratio - 1| within 1 %. Rows without a figure count as
    `missing`."""
    groups, missing = {}, {}
    for r in rows:
        if r.get(key):
            groups.setdefault(r["impl"], []).append((r["harness_ms"] / r[key], r["id"]))
        else:
            missing[r["impl"]] = missing.get(r["impl"], 0) + 1
            groups.setdefault(r["impl"], [])
    every = [x for ratios in groups.values() for x in ratios]
    return {"impls": {impl: _stats(ratios, missing.get(impl, 0)) for impl, ratios in groups.items()},
            "overall": _stats(every, sum(missing.values()))}


def _stats(ratios, missing):
    if not ratios:
        return {"n": 0, "missing": missing, "within": 0, "median_ratio": None, "median_abs_dev": None,
                "worst_ratio": None, "worst_id": None, "met": False}
    within = sum(1 - TOLERANCE <= x <= 1 + TOLERANCE for x, _ in ratios)
    dev = median([abs(x - 1) for x, _ in ratios])
    worst, worst_id = max(ratios, key=lambda t: abs(t[0] - 1))
    return {"n": len(ratios), "missing": missing, "within": within, "median_ratio": median([x for x, _ in ratios]),
            "median_abs_dev": dev, "worst_ratio": worst, "worst_id": worst_id,
            "met": not missing and within == len(ratios) and dev <= MEDIAN_TOLERANCE}


def render(report):
    lines = [f"{'scenario':44} {'impl':10} {'harness ms':>11} {'kernel-sum':>11} {'work ms':>10} {'span ms':>10} "
             f"{'h/work':>7} {'h/span':>7} {'h/sum':>7}"]
    for r in report["rows"]:
        if r.get("error"):
            lines.append(f"{r['id']:44} {r['impl']:10} {r['harness_ms']:11.4f}  not measured: {r['error']}")
            continue
        lines.append(f"{r['id']:44} {r['impl']:10} {r['harness_ms']:11.4f} {r['kernel_sum_ms']:11.4f} "
                     f"{r.get('work_ms') or 0:10.4f} {r['span_ms']:10.4f} {_ratio(r.get('ratio_work'))} "
                     f"{_ratio(r.get('ratio_span'))} {_ratio(r.get('ratio_kernel_sum'))}")
    lines += [f"left out: {note}" for note in report["left_out"]]
    if report.get("timestamp_step_ns"):
        lines.append(f"CUPTI's timestamps here came in steps of {report['timestamp_step_ns']} ns")
    for key, what in (("work", "the work (the span less the front end's gaps, the harness's figure)"),
                      ("span", "the span (first kernel start to last kernel end)"),
                      ("kernel_sum", "the kernel sum")):
        summary = report["summary"].get(key)
        if summary is None:     # a report from before the work figure
            continue
        lines.append(f"harness / CUPTI, against {what}; met = all within ±5 % and median |ratio-1| <= 1 %:")
        for impl, s in list(summary["impls"].items()) + [("overall", summary["overall"])]:
            lines.append("  " + _summary_line(impl, s))
    return "\n".join(lines)


def _ratio(x):
    return f"{'n/a':>7}" if x is None else f"{x:7.3f}"


def _summary_line(impl, s):
    if not s["n"]:
        return f"{impl:10} no figures ({s['missing']} not measured)"
    return (f"{impl:10} {s['within']}/{s['n']} within ±5 %, median ratio {s['median_ratio']:.4f}, median "
            f"|ratio-1| {s['median_abs_dev'] * 100:.2f} %, worst {s['worst_ratio']:.4f} ({s['worst_id']})"
            + (f", {s['missing']} not measured" if s["missing"] else "") + ("  met" if s["met"] else "  NOT met"))


# -- what to measure -------------------------------------------------------------------------------
def plan(task, result, selector, impls=None):
    """[(scenario, {impl: harness ms})] for the selected scenarios that are ok in the result and have
    a harness figure, and notes on those left out; `impls` (names) keeps only those implementations."""
    by_id = {s["id"]: s for s in result.get("scenarios", [])}
    planned, left_out, absent = [], [], 0
    for sc in select_scenarios(task, selector):
        entry = by_id.get(sc.id)
        if entry is None:
            absent += 1
            continue
        if entry.get("status") != "ok":
            left_out.append(f"{sc.id}: {entry.get('status')}")
            continue
        times = {"candidate": entry.get("time_ms"), "baseline": entry.get("baseline_ms")}
        times.update({p: (entry.get("peer_ms") or {}).get(p) for p, _ in task.peers})
        times = {impl: ms for impl, ms in times.items() if ms and (impls is None or impl in impls)}
        if times:
            planned.append((sc, times))
        else:
            left_out.append(f"{sc.id}: no harness time")
    if absent:
        left_out.append(f"{absent} selected scenario(s) not in the result")
    return planned, left_out


def _read_result(path, task, candidate_source):
    try:
        result = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"--result {path}: {exc}") from None
    if result.get("task") != task.name:
        raise UsageError(f"--result {path} is for task {result.get('task')!r}, not {task.name!r}")
    digest = (result.get("candidate") or {}).get("sha256")
    if digest and digest != hashlib.sha256(candidate_source).hexdigest():
        raise UsageError(f"--result {path} was measured on another candidate (sha256 {digest[:12]}...)")
    return result


# -- on the GPU ------------------------------------------------------------------------------------
def _library(task, source, namespace, tmp):
    b = build(task, source, namespace=namespace)
    if not b.ok or b.refused:
        raise UsageError(f"the {namespace} does not build: {'; '.join(b.refused) or b.log[-2000:]}")
    path = Path(tmp) / f"{namespace}.so"
    b.write_library(path)
    fn = getattr(ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_LOCAL), task.entry)
    fn.restype = ctypes.c_int
    fn.argtypes = [_CTYPES[k] for k in argtypes(task)]     # as the executor declares them
    return fn


def _callers(task, ref, libs, sc, times, inputs, outs):
    """{impl: a function making one call}: the entry point on torch's current stream, or a peer."""
    scalars = task.scalar_values(sc)
    argv = []
    for a in task.args:
        if a.kind == "tensor":
            argv.append((inputs if a.role == "input" else outs)[a.name].data_ptr())
        elif a.kind == "stream":
            argv.append(torch.cuda.current_stream().cuda_stream)
        else:
            argv.append(scalars[a.name])
    peers, tensors = dict(task.peers), {**inputs, **outs}
    callers = {}
    for impl in times:
        if impl in libs:
            callers[impl] = lambda fn=libs[impl]: _native(fn, argv)
        else:
            callers[impl] = lambda fn=getattr(ref, peers[impl]): fn(tensors, dict(sc.params))
    return callers


def _native(fn, argv):
    rc = fn(*argv)
    if rc:
        raise FidelityError(f"returned {rc}")


def harness_slots(task, inputs, shapes, count, device="cuda", alloc=None):
    """(buffer, [{tensor name: tensor}] x count): the scenario's tensors laid out as the harness lays
    out a CUDA scenario's slots in an executor's arena (slots._specs over shm.layout: every
    tensor page-aligned in the order of the task's arguments, slot after slot), a multiple of 2 MiB
    apart from a 2 MiB boundary, so every slot's tensors sit at the same offsets within their 2 MiB
    pages. `alloc(nbytes)` (a uint8 tensor) gives the buffer: torch's allocator by default, or
    ArenaMemory (--memory arena)."""
    shapes_in = {k: tuple(v.shape) for k, v in inputs.items()}
    stride = packed_stride(task, shapes_in, shapes)
    lay, total = layout(_specs(task, shapes_in, shapes, count, stride))
    buf = (alloc or (lambda n: torch.empty(n, dtype=torch.uint8, device=device)))(total + SPREAD_ALIGN)
    base = -buf.data_ptr() % SPREAD_ALIGN
    names = [a.name for a in task.args if a.kind == "tensor"]
    slots = []
    for j in range(count):
        slot = {}
        for name in names:
            off, dtype, shape, _, nbytes = lay[f"{name}#{j}"]
            slot[name] = buf[base + off:base + off + nbytes].view(getattr(torch, dtype)).view(shape)
        slots.append(slot)
    return buf, slots


def packed_stride(task, shapes_in, shapes):
    """How far apart harness_slots lays consecutive slots: one slot's bytes, in whole 2 MiB pages
    (packed; the harness spreads its slots wider where the arena has room, memory.slot_stride)."""
    return -(-set_bytes(task, shapes_in, shapes) // SPREAD_ALIGN) * SPREAD_ALIGN


class ArenaMemory:
    """Memory as the harness's arena reaches an executor (memory.CudaArena, executor.cmd_cuda):
    one allocation made with cuMemCreate, exported as a file descriptor, imported and mapped again;
    not torch's allocator. Every scenario's slots are laid out in it from its start (the scenarios
    run one after another). The descriptor stays open for the other process (--refill-in other),
    which maps the same memory, as the harness's parent writes each round's inputs into the arena
    from its own context. Does where the inputs come from, or who writes them, set a peer's mode
    (docs/harness-lab.md "Ninth session")?"""

    def __init__(self, drv, size):
        self.drv = drv
        self.handle, self.fd, self.size = drv.create_shared(size)
        self.mine = drv.import_shared(self.fd)
        self.ptr = drv.map(self.mine, self.size)
        self.u8 = torch.as_tensor(DeviceRange(self.ptr, self.size), device="cuda")

    def __call__(self, nbytes):
        if nbytes > self.size:
            raise FidelityError(f"a scenario's slots need {nbytes} bytes, the arena holds {self.size} (--arena-gib)")
        return self.u8[:nbytes]

    def offset(self, t):
        """Where tensor `t` (in this arena) starts, in bytes from the arena's start."""
        return t.data_ptr() - self.ptr

    def close(self):
        """Unmap and release the allocation (after the calls on it have ended)."""
        torch.cuda.synchronize()
        self.u8 = None
        self.drv.unmap(self.ptr, self.size, self.mine)
        if self.handle != self.mine:
            self.drv.cu.cuMemRelease(self.handle)
        os.close(self.fd)


def measure(task, ref, libs, sc, times, calls, seed, pad_cycles, flush, placements=1, interleave=False, refill=False,
            busy=False, lay="tool", memory=None):
    """Rows for one scenario: warm-up calls (a peer that is Unsupported is left out), then under one
    profiler `calls` flushed and padded calls of each implementation in turn. With placements > 1
    (CUPTI read in-process only), that many copies of the inputs and outputs lie at different
    addresses and the calls take them in turn, as the harness's rounds draw theirs from slots spread
    over its arena (memory.slot_stride): what a kernel of a few microseconds costs depends
    on where its few lines lie. `lay` says where: "tool", 2-32 MiB apart wherever torch's allocator
    puts them; "harness", as the harness lays its slots out, one after another a multiple of 2 MiB
    apart from a 2 MiB boundary, each tensor page-aligned at the same offset in every slot
    (harness_slots). With interleave (CUPTI in-process only), the implementations take turns call
    by call, as in the harness's rounds. `memory` (an ArenaMemory, with lay "harness"): the slots'
    buffer made as the harness's arena reaches an executor; with it and `flush[0]` an OtherProcess
    mapping the same arena (--refill-in other), the refill is written by that process, as the
    harness's parent writes each round's inputs from its own context."""
    inputs = ref.make_inputs(dict(sc.params), seed, "cuda")
    shapes = ref.output_shapes(dict(sc.params))

    def outputs():
        return {a.name: torch.empty(tuple(shapes[a.name]), dtype=getattr(torch, a.dtype), device="cuda")
                for a in task.outputs()}
    spacers = []    # held until the scenario ends, so the copies stay apart
    rng = random.Random(seed)
    shapes_in = {k: tuple(v.shape) for k, v in inputs.items()}
    if placements > 1 and flush[3] is not None:
        # As many as half the free memory holds (r65536-c16384's 4 GiB input 32 times did not fit)
        copy = set_bytes(task, shapes_in, shapes) + (17 << 20)
        placements = max(1, min(placements, torch.cuda.mem_get_info()[0] // 2 // copy))
    elif flush[3] is None:
        placements = 1
    if lay == "harness":
        if memory is not None:      # as many slots as the arena holds
            placements = max(1, min(placements, (memory.size - SPREAD_ALIGN) // packed_stride(task, shapes_in, shapes)))
        buf, slots = harness_slots(task, inputs, shapes, placements, alloc=memory)
        spacers.append(buf)
        placed_inputs = [{k: t[k] for k in inputs} for t in slots]
        for mine in placed_inputs:
            for k, v in mine.items():
                v.copy_(inputs[k])
        placed = [_callers(task, ref, libs, sc, times, mine, {a.name: t[a.name] for a in task.outputs()})
                  for mine, t in zip(placed_inputs, slots)]
    else:
        placed_inputs = [inputs]
        placed = [_callers(task, ref, libs, sc, times, inputs, outputs())]
        for _ in range(1, placements):
            spacers.append(torch.empty(rng.randint(1, 16) * (2 << 20), dtype=torch.uint8, device="cuda"))
            placed_inputs.append({k: v.clone() for k, v in inputs.items()})
            placed.append(_callers(task, ref, libs, sc, times, placed_inputs[-1], outputs()))
    callers = placed[0]

    other = flush[0] if getattr(flush[0], "arena", None) is not None else None   # --refill-in other

    def fill(placement, i):
        """New values in a placement's inputs before call i (as each harness round writes its own), by
        this process or, with `other`, by the process that maps the same arena."""
        if other is not None:
            other.refill(dict(sc.params), seed * 1000003 + i + 1,
                         {k: [memory.offset(v), str(v.dtype).replace("torch.", ""), list(v.shape)]
                          for k, v in placed_inputs[placement].items()})
            return
        new = ref.make_inputs(dict(sc.params), seed * 1000003 + i + 1, "cuda")
        for k, v in placed_inputs[placement].items():
            v.copy_(new[k])
    rows, live = [], []
    for impl, call in callers.items():
        row = {"id": sc.id, "impl": impl, "harness_ms": times[impl]}
        try:
            call()
            torch.cuda.synchronize()
            live.append(impl)
        except Unsupported as exc:
            row["error"] = f"unsupported: {exc}"
        except Exception as exc:   # a failing implementation is reported, the others measured
            row["error"] = f"{type(exc).__name__}: {exc}"
        rows.append(row)
    src, dst, how, activity = flush
    if activity is not None:   # CUPTI read by the harness's own module: every call on its own
        try:
            figures = _own_calls({impl: [c[impl] for c in placed] for impl in live}, calls, flush, pad_cycles,
                                 interleave, seed, fill if refill else None, busy)
        except Exception as exc:
            figures = {impl: {"error": f"{type(exc).__name__}: {exc}"} for impl in live}
        return _rows(rows, figures)
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    try:
        with torch.profiler.profile(activities=activities) as prof:
            for impl in live:
                for _ in range(calls):
                    torch.cuda.synchronize()
                    _flush(src, dst, how)
                    torch.cuda.synchronize()
                    if pad_cycles:
                        torch.cuda._sleep(pad_cycles)
                    callers[impl]()
                    torch.cuda.synchronize()
        figures = per_impl(split_calls(device_activity(prof), len(live) * calls), live, calls)
    except Exception as exc:
        figures = {impl: {"error": f"{type(exc).__name__}: {exc}"} for impl in live}
    return _rows(rows, figures)


def _rows(rows, figures):
    for row in rows:
        row.update(figures.get(row["impl"], {}))
        for key in ("work_ms", "span_ms", "kernel_sum_ms"):
            if row.get(key):
                row[f"ratio_{key[:-3]}"] = row["harness_ms"] / row[key]
    return rows


def _flush(src, dst, how):
    """A cold L2 before a call: "write" copies a buffer of twice its size (the lines left dirty, as
    after the harness's own flush in its process), "read" reads one (the lines left clean); with
    `src` an OtherProcess, that process writes its buffer as the harness's parent does."""
    if isinstance(src, OtherProcess):
        src.flush()
    elif how == "read":
        src.view(torch.int64).sum()
    else:
        dst.copy_(src)


# The harness's parent flushes L2 from its own process, so every timed call runs in a context the GPU
# has just switched back to (contexts of two processes take turns): the same, in a process of ours.
# With an arena (--refill-in other) that process also maps it and writes each call's new inputs, as
# the parent writes each round's into the executors' arena.
_OTHER = """
import sys
sys.path.insert(0, sys.argv[1])
from tools.lab.cupti_fidelity import other_main
other_main(sys.argv[2:])
"""


def write_inputs(u8, ref, msg, device="cuda"):
    """The inputs of `msg` ({"params", "seed", "at": {name: [offset, dtype, shape]}}) made by the
    task's reference and written into `u8` (a byte view of the arena) at their offsets."""
    new = ref.make_inputs(dict(msg["params"]), int(msg["seed"]), device)
    for name, (off, dtype, shape) in msg["at"].items():
        t = new[name]
        n = t.numel() * t.element_size()
        u8[off:off + n].view(getattr(torch, dtype)).view(tuple(shape)).copy_(t)


def other_main(argv):
    """The other process: a buffer of argv[0] bytes to flush L2 with; with argv[1:] (an arena's
    inherited descriptor, its size, a task folder) that arena mapped and the task's reference loaded.
    On stdin: "f" flush, "b" a tiny kernel, "r" + a JSON line: write inputs (write_inputs); each
    answered "." once its work has ended."""
    buf = torch.empty(int(argv[0]) // 4, dtype=torch.float32, device="cuda")
    buf.zero_()
    torch.cuda.synchronize()
    u8 = ref = None
    if len(argv) > 1:
        drv = Driver(torch.cuda.current_device())
        fd, size = int(argv[1]), int(argv[2])
        ptr = drv.map(drv.import_shared(fd), size)
        os.close(fd)
        u8 = torch.as_tensor(DeviceRange(ptr, size), device="cuda")
        ref = load_reference(load_task(argv[3]))
    small = torch.zeros(1, device="cuda")
    out = sys.stdout.buffer
    out.write(b".")
    out.flush()
    while True:
        c = sys.stdin.buffer.read(1)
        if not c:
            break
        if c == b"r":
            write_inputs(u8, ref, json.loads(sys.stdin.buffer.readline()))
        elif c == b"b":
            small.add_(1)
        else:
            buf.zero_()
        torch.cuda.synchronize()
        out.write(b".")
        out.flush()


class OtherProcess:
    """An L2 flush made by another process (devices.CudaDevice.flush's write, from its own context);
    with `arena` (an ArenaMemory) and `task_dir`, that process also maps the arena and writes inputs
    into it (`refill`)."""

    def __init__(self, nbytes, arena=None, task_dir=None):
        import subprocess
        argv = [sys.executable, "-c", _OTHER, str(Path(__file__).resolve().parents[2]), str(nbytes)]
        if arena is not None:
            argv += [str(arena.fd), str(arena.size), str(task_dir)]
        self.arena = arena
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     pass_fds=(arena.fd,) if arena is not None else ())
        self._wait()

    def _wait(self):
        if self.proc.stdout.read(1) != b".":
            raise FidelityError(f"the flushing process ended ({self.proc.wait()})")

    def _ask(self, what):
        self.proc.stdin.write(what)
        self.proc.stdin.flush()
        self._wait()

    def flush(self):
        self._ask(b"f")

    def busy(self):
        """A tiny kernel from that process's context, run to its end (the parent's busy_ms probe)."""
        self._ask(b"b")

    def refill(self, params, seed, at):
        """New inputs for `params` from `seed`, written by that process at `at` ({name: [offset in the
        arena, dtype, shape]})."""
        self._ask(b"r" + json.dumps({"params": params, "seed": seed, "at": at}).encode() + b"\n")

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def _pad(pad, impl):
    """Queue the pad before a call: torch.cuda._sleep's one thread for `pad` cycles, or (pad a Pad)
    the harness's own pad, every SM's thread slots for the executors' time (native or a peer's)."""
    if isinstance(pad, int):
        if pad:
            torch.cuda._sleep(pad)
        return
    pad.launch(_pad_us(pad, impl) / 1e3)


def _pad_us(pad, impl):
    """How long the pad before a call of `impl` keeps the GPU busy (us): the sleep's cycles at the
    highest clock, or the harness's pad for a native call or a peer's."""
    if isinstance(pad, int):
        return pad / MAX_CLOCK_HZ * 1e6
    from harness.timing.cuda_loop import PAD_MS, PEER_PAD_MS
    return 1e3 * (PAD_MS if impl in ("candidate", "baseline") else PEER_PAD_MS)


# A call whose launches took the host longer than its pad is retaken, at most this many times the calls asked.
RETAKE_FACTOR = 2


def outran(fig, pad_us):
    """Whether a call's launches outran its pad (`host_us`, from the pad's launch to the call's return):
    the GPU then waited on the host inside the call, and its records hold the host's delay (a 9-kernel
    PyTorch call read 103-414 us of work for 17.5 us of kernels when this process's host ran 1.8-2.3 ms
    late, 3 of 32 calls on the H200). torch.profiler's kernel times leave that out; so does the tool:
    such a call is kept in the report (`outran`) but not in the figures, and another call is made."""
    return bool(pad_us) and fig.get("host_us") is not None and fig["host_us"] > pad_us


def records_us(raw):
    """CUPTI's records [(kind, start ns, end ns)] -> [(kind, kind, start us, end us)] in order, in us
    from the first: the stamps are ns since 1970, and a float of microseconds that large moves in
    0.25 us steps (every call read in 0.25 us steps until 2026-12-02)."""
    base = min((b for _, b, _ in raw), default=0)
    return sorted(((kind, kind, (b - base) / 1e3, (e - base) / 1e3) for kind, b, e in raw), key=lambda r: (r[2], r[3]))


def _own_calls(placed, calls, flush, pad_cycles, interleave=False, seed=0, refill=None, busy=False):
    """{impl: figures and calls} of `calls` flushed and padded calls of every implementation of
    `placed` ({impl: [a function making one call] per placement; call i runs on placement i mod
    their number}), each read from CUPTI on its own (harness/executor/cupti_activity.py): the records between
    two takes are the pad and the call. One implementation's calls after another's, or with
    `interleave` one call of each a round, in a random order each round, as the harness's rounds."""
    src, dst, how, act = flush
    # With the harness's pad, the harness's sequence: pad, start event, the call, end event (legacy stream)
    drv = None if isinstance(pad_cycles, int) else pad_cycles.drv
    start, end = (drv.event(), drv.event()) if drv else (None, None)
    impls, rng = list(placed), random.Random(seed)
    if interleave:
        plan = [(impl, i) for i in range(calls) for impl in rng.sample(impls, len(impls))]
    else:
        plan = [(impl, i) for impl in impls for i in range(calls)]
    mine, t0 = {impl: [] for impl in impls}, time.perf_counter()
    made, k = {impl: 0 for impl in impls}, 0
    while k < len(plan):
        impl, i = plan[k]
        placement = i % len(placed[impl])
        if refill is not None:     # `refill(placement, k)`: new input values, before the flush
            refill(placement, k)
        torch.cuda.synchronize()
        _flush(src, dst, how)
        torch.cuda.synchronize()
        act.take()
        t_pad = time.perf_counter()
        _pad(pad_cycles, impl)
        if drv:
            drv.record(start, 0x1)
        placed[impl][placement]()
        host_us = (time.perf_counter() - t_pad) * 1e6     # as the executors' host_ms
        if drv:
            drv.record(end, 0x1)
        torch.cuda.synchronize()
        raw = act.take()
        if busy:     # the harness's parent times a tiny kernel of its own after every call (busy_ms)
            src.busy()
        recs = records_us(raw)
        work = recs[1:] if pad_cycles else recs
        fig = dict(call_figure(work, i), step_ns=timestamp_step(raw), host_us=host_us,
                   at_ms=(t_pad - t0) * 1e3,     # when, from the scenario's first call
                   placement=placement,
                   # each record's (kind, start, end) in us from the call's first: modes, gaps
                   parts_us=[(k, round(b - work[0][2], 3), round(e - work[0][2], 3)) for k, _, b, e in work])
        # How the call lay on the GPU, as the executors report it (timing.lead_ms, idle_ms): the pad
        # (whatever its length: the first record here is it) to the first work, idle in the span.
        layout = call_layout(raw, 1e-6 if pad_cycles else 0.0)
        if layout is not None:
            fig.update(idle_us=layout["idle"] * 1e3, lead_us=None if layout["lead"] is None else layout["lead"] * 1e3)
        made[impl] += 1
        if outran(fig, _pad_us(pad_cycles, impl)):
            fig["outran"] = True
            if made[impl] < RETAKE_FACTOR * calls:
                plan.append((impl, made[impl]))     # another call on the next placement
        mine[impl].append(fig)
        k += 1
    return {impl: _figures(figs) for impl, figs in mine.items()}


def _step(rows):
    """The timestamps' step over every call read on its own: the finest any call's durations showed
    (a call's few durations may all fall on a coarser step by chance; None with torch.profiler)."""
    steps = [c["step_ns"] for r in rows for c in r.get("calls") or [] if c.get("step_ns")]
    return min(steps) if steps else None


def evaluate(args):
    """The report: rows per (scenario, implementation), the summaries, what was left out and why."""
    task = load_task(args.task_dir)
    ref = load_reference(task)
    try:
        source = Path(args.candidate).read_bytes()
    except OSError as exc:
        raise UsageError(f"--candidate: {exc}") from None
    result = _read_result(args.result, task, source)
    impls = None
    if args.impls:
        impls = [x.strip() for x in args.impls.split(",") if x.strip()]
        known = ["candidate", "baseline"] + [p for p, _ in task.peers]
        unknown = [x for x in impls if x not in known]
        if unknown or not impls:
            raise UsageError(f"--impls {args.impls}: not this task's implementations ({', '.join(known)})")
    if args.busy_after and args.flush_in != "other":
        raise UsageError("--busy-after needs --flush-in other (the tiny kernel runs in that process)")
    planned, left_out = plan(task, result, args.scenarios, impls)
    # CUPTI enabled before this process's CUDA runtime starts (on the H200 its steps are 32 ns whatever
    # the order, tools/cupti_step.py); timestamp_step_ns in the report says what this run saw.
    activity, cupti_error = None, None
    if args.profiler == "cupti":
        path = find_library()
        if path is None:
            raise EnvironmentProblem("--profiler cupti: no libcupti found (harness/executor/cupti_activity.py)")
        try:
            activity = Activity(path)
        except (OSError, RuntimeError) as exc:
            cupti_error = exc
    if not torch.cuda.is_available():
        raise EnvironmentProblem(f"CUDA is not available to PyTorch here (torch {torch.__version__}, "
                                 f"torch.cuda.is_available() is False): the kernels are profiled on "
                                 f"the GPU, run this on the GPU host")
    if cupti_error is not None:
        raise EnvironmentProblem(f"--profiler cupti: CUPTI cannot be enabled: {cupti_error}")
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    size = max(2 * (getattr(props, "L2_cache_size", 0) or 0), 64 * MIB)
    if args.flush_in == "other" or args.pad == "harness" or args.refill:
        if activity is None:
            raise UsageError("--flush-in other, --pad harness and --refill need --profiler cupti (every call read on its own)")
    drv = Driver(torch.cuda.current_device()) if args.memory == "arena" or args.pad == "harness" else None
    memory = ArenaMemory(drv, int(args.arena_gib * (1 << 30))) if args.memory == "arena" else None
    if args.flush_in == "other":
        other = OtherProcess(size, memory, task.dir) if args.refill_in == "other" else OtherProcess(size)
        flush = (other, None, "write", activity)
    else:
        other = None
        flush = tuple(torch.empty(size, dtype=torch.uint8, device="cuda") for _ in range(2)) + (args.flush, activity)
    if args.pad == "harness":
        pad_cycles = drv.pad_kernel()
    else:
        pad_cycles = int(MAX_CLOCK_HZ * args.pad_ms / 1e3)
    rows = []
    with tempfile.TemporaryDirectory(prefix="cupti-fidelity-") as tmp, \
            (contextlib.closing(memory) if memory else contextlib.nullcontext()), \
            (contextlib.closing(other) if other else contextlib.nullcontext()):
        # A library is loaded only when it is called: its CUDA runtime and kernels in this process are
        # a condition of their own (the harness's peers' executor holds none).
        libs = {}
        if any("candidate" in times for _, times in planned):
            libs["candidate"] = _library(task, source, "candidate", tmp)
        if any("baseline" in times for _, times in planned):
            libs["baseline"] = _library(task, task.baseline.read_bytes(), "baseline", tmp)
        for i, (sc, times) in enumerate(planned):
            print(f"[{i + 1}/{len(planned)}] {sc.id}", file=sys.stderr, flush=True)
            rows += measure(task, ref, libs, sc, times, args.calls, args.seed, pad_cycles, flush, args.placements,
                            args.interleave, args.refill, args.busy_after, args.layout, memory)
    return {"task": task.name, "candidate": str(args.candidate), "result": str(args.result),
            "calls": args.calls, "seed": args.seed, "pad_ms": args.pad_ms, "gpu": props.name,
            "profiler": args.profiler, "flush": args.flush, "flush_in": args.flush_in, "pad": args.pad,
            "placements": args.placements, "interleave": args.interleave, "impls": impls, "refill": args.refill,
            "busy_after": args.busy_after, "layout": args.layout, "memory": args.memory, "refill_in": args.refill_in,
            "torch": torch.__version__, "rows": rows, "left_out": left_out,
            "timestamp_step_ns": _step(rows),
            "summary": {"work": summarize(rows, "work_ms"), "span": summarize(rows, "span_ms"),
                        "kernel_sum": summarize(rows, "kernel_sum_ms")}}


def _parser():
    p = argparse.ArgumentParser(prog="python3 -m tools.lab.cupti_fidelity",
                                description=__doc__.split("\n")[0])
    p.add_argument("--task-dir", required=True)
    p.add_argument("--candidate", required=True)
    p.add_argument("--result", required=True, help="the harness's result JSON for this candidate")
    p.add_argument("--scenarios", default="all", help="all, quick, or comma-separated ids/substrings/globs")
    p.add_argument("--calls", type=int, default=5, help="profiled calls per implementation and scenario")
    p.add_argument("--seed", type=int, default=0, help="seed of make_inputs")
    p.add_argument("--pad-ms", type=float, default=1.0,
                   help="sleep queued before each call so that its launches are queued (0: none)")
    p.add_argument("--profiler", choices=["torch", "cupti"], default="torch",
                   help="torch: torch.profiler (its CUPTI times come in 0.25 us steps on torch 2.11); cupti: "
                        "CUPTI's records read as the harness reads them (32 ns steps), each call on its own")
    p.add_argument("--flush", choices=["write", "read"], default="write",
                   help="how L2 is made cold before each call: its lines left dirty (write) or clean (read)")
    p.add_argument("--flush-in", choices=["self", "other"], default="self",
                   help="other: the flush made by another process, from its own context, as the harness's parent "
                        "makes it (the call's context switched back in first); needs --profiler cupti")
    p.add_argument("--pad", choices=["sleep", "harness"], default="sleep",
                   help="harness: the harness's own pad (every SM's thread slots, its native or peer length) "
                        "and events around the call, as the executors make them, instead of torch.cuda._sleep's "
                        "one thread for --pad-ms; needs --profiler cupti")
    p.add_argument("--placements", type=int, default=1,
                   help="with --profiler cupti: copies of the inputs and outputs at different addresses, the calls "
                        "taking them in turn (as the harness's rounds draw spread slots)")
    p.add_argument("--layout", choices=["tool", "harness"], default="tool",
                   help="where --placements' copies lie: tool, 2-32 MiB apart wherever torch's allocator puts them; "
                        "harness, as the harness lays out its slots (2 MiB multiples apart from a 2 MiB boundary, "
                        "each tensor at the same page-aligned offset in every slot)")
    p.add_argument("--memory", choices=["torch", "arena"], default="torch",
                   help="with --layout harness, where the slots' buffer comes from: torch's allocator, or arena: "
                        "cuMemCreate'd, exported as a file descriptor, imported and mapped, as the harness's arena "
                        "reaches its executors")
    p.add_argument("--arena-gib", type=float, default=16.0,
                   help="--memory arena: its size (GiB); a scenario gets as many slots as it holds")
    p.add_argument("--refill-in", choices=["self", "other"], default="self",
                   help="who writes --refill's new inputs: this process, or other: the process that flushes "
                        "(--flush-in other), into the arena it maps too (--memory arena), as the harness's parent "
                        "writes each round's inputs from its own context")
    p.add_argument("--interleave", action="store_true",
                   help="with --profiler cupti: one call of each implementation a round, in a random order each round "
                        "(as the harness's rounds), instead of one implementation's calls after another's")
    p.add_argument("--refill", action="store_true",
                   help="with --profiler cupti: new input values before every call (outside its time), as each harness "
                        "round writes its own")
    p.add_argument("--busy-after", action="store_true",
                   help="with --flush-in other: that process runs a tiny kernel after every call, as the harness's "
                        "parent does (busy_ms)")
    p.add_argument("--impls", help="comma-separated implementations to call (candidate, baseline, the task's peers); "
                        "the rest are neither called nor loaded, e.g. the peers alone in this process, as in the "
                        "harness's peers' executor")
    p.add_argument("--json", help="write the report here")
    return p



def main(argv=None):
    args = _parser().parse_args(argv)
    if args.calls < 1 or args.placements < 1:
        print("cupti_fidelity: --calls and --placements must be at least 1", file=sys.stderr)
        return UsageError.exit_code
    if args.memory == "arena" and args.layout != "harness":
        print("cupti_fidelity: --memory arena lays out the harness's slots: it needs --layout harness", file=sys.stderr)
        return UsageError.exit_code
    if args.refill_in == "other" and not (args.refill and args.flush_in == "other" and args.memory == "arena"):
        print("cupti_fidelity: --refill-in other needs --refill, --flush-in other and --memory arena", file=sys.stderr)
        return UsageError.exit_code
    try:
        report = evaluate(args)
    except HarnessError as exc:
        print(f"cupti_fidelity: {exc}", file=sys.stderr)
        return exc.exit_code
    print(render(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
