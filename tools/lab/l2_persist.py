"""Does the parent's own context reach another process's persisting L2 lines? (issue 39, class 9)

    python3 -m tools.lab.l2_persist [--reps 12] [--json out.json]

A candidate owns its process, so the check of the persisting-L2 set-aside that its executor makes
(executor/cuda_state.py) can be answered with forged values; the defence must be the parent's, made
from the parent's own context before each flush. Which parent-side operation evicts lines another
context marked persisting can only be measured. Here one process (the "candidate") maps the
parent's shared arena (as an executor does: a VMM allocation passed as a descriptor), sets the
largest persisting set-aside, puts an access-policy window (hit ratio 1, persisting) over X_BYTES
of it on its own stream and reads them there; then the parent does one of ACTIONS from its own
context, and the candidate times a read of the same bytes on the same stream. Read from L2 the
read is several times faster than from memory. Per action, the median over `reps` rounds (the
actions interleaved), beside the same read with no window set (the cold figure) and with nothing
done in between (the warm one). The parent also times its own read of those bytes through its own
mapping after its flush (a parent-side probe: does it see the other context's surviving lines?),
and reads its persisting limit before and after the candidate set its own (device-wide or per
context?). Needs a GPU; GPU host only.
"""

import argparse
import ctypes
import json
import socket
import subprocess
import sys
from pathlib import Path

from harness.executor.cuda_driver import DeviceRange, Driver
from harness.executor.protocol import recv_frame, send_frame

X_BYTES = 24 << 20
ARENA_BYTES = 256 << 20
CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1
CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108
CU_ACCESS_PROPERTY_STREAMING, CU_ACCESS_PROPERTY_PERSISTING = 1, 2
ACTIONS = ("none", "flush", "reset+flush", "limit0+flush", "pflush+reset+flush", "guard", "guard-noevict")


class _L2:
    """The persisting-L2 controls of the current context, through the driver."""

    def __init__(self, drv):
        self.drv, self.cu = drv, drv.cu
        for name in ("cuCtxGetLimit", "cuCtxSetLimit", "cuCtxResetPersistingL2Cache", "cuStreamSetAttribute"):
            getattr(self.cu, name).restype = ctypes.c_int
        self.cu.cuCtxSetLimit.argtypes = [ctypes.c_int, ctypes.c_size_t]
        self.max_bytes = drv.attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)

    def limit(self):
        v = ctypes.c_size_t()
        self.drv._ok(self.cu.cuCtxGetLimit(ctypes.byref(v), CU_LIMIT_PERSISTING_L2_CACHE_SIZE), "cuCtxGetLimit")
        return v.value

    def set_limit(self, n):
        self.drv._ok(self.cu.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, n), "cuCtxSetLimit")

    def reset(self):
        self.drv._ok(self.cu.cuCtxResetPersistingL2Cache(), "cuCtxResetPersistingL2Cache")

    def window(self, stream, base, nbytes):
        value = (ctypes.c_ubyte * 64)()
        ctypes.c_uint64.from_buffer(value, 0).value = base
        ctypes.c_uint64.from_buffer(value, 8).value = nbytes
        ctypes.c_float.from_buffer(value, 16).value = 1.0 if nbytes else 0.0
        ctypes.c_int.from_buffer(value, 20).value = CU_ACCESS_PROPERTY_PERSISTING if nbytes else 0
        ctypes.c_int.from_buffer(value, 24).value = CU_ACCESS_PROPERTY_STREAMING if nbytes else 0
        self.drv._ok(self.cu.cuStreamSetAttribute(ctypes.c_void_p(stream), CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                                                  value), "cuStreamSetAttribute")


def _timed_read(torch, x, stream):
    """ms of one read of `x` (a sum) on `stream`, by events on it."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        e0.record(stream)
        x.sum()
        e1.record(stream)
    e1.synchronize()
    return e0.elapsed_time(e1)


def child(fd):
    import torch
    sock = socket.socket(fileno=fd)
    fds = []
    msg = recv_frame(sock, fds)
    torch.zeros(1, device="cuda")
    drv = Driver(0)
    size = int(msg["size"])
    base = drv.map(drv.import_shared(fds[0]), size)
    u8 = torch.as_tensor(DeviceRange(base, size), device="cuda")
    x = u8[:X_BYTES].view(torch.bfloat16)
    raw = drv.stream()
    stream = torch.cuda.ExternalStream(raw)
    l2 = _L2(drv)
    send_frame(sock, {"limit_at_start": l2.limit(), "max_bytes": l2.max_bytes})
    while True:
        cmd = recv_frame(sock)["cmd"]
        if cmd == "exit":
            return 0
        if cmd == "pin":
            l2.set_limit(l2.max_bytes)
            l2.window(raw, base, X_BYTES)
            with torch.cuda.stream(stream):
                for _ in range(3):
                    x.sum()
            torch.cuda.synchronize()
            send_frame(sock, {"limit": l2.limit()})
        elif cmd == "unpin":
            l2.window(raw, 0, 0)
            l2.set_limit(0)
            l2.reset()
            torch.cuda.synchronize()
            send_frame(sock, {"limit": l2.limit()})
        elif cmd == "touch":      # what a candidate's call does: its inputs read again under its window
            with torch.cuda.stream(stream):
                x.sum()
            torch.cuda.synchronize()
            send_frame(sock, {})
        elif cmd == "read":
            send_frame(sock, {"ms": _timed_read(torch, x, stream), "limit": l2.limit()})


def _median(xs):
    s = sorted(xs)
    return s[len(s) // 2] if s else None


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m tools.lab.l2_persist")
    p.add_argument("--reps", type=int, default=12)
    p.add_argument("--json")
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is not None:
        return child(args.child)
    import torch
    dev = torch.device("cuda")
    torch.zeros(1, device=dev)
    drv = Driver(0)
    l2 = _L2(drv)
    handle, fd, size = drv.create_shared(ARENA_BYTES)
    ptr = drv.map(handle, size)
    mine = torch.as_tensor(DeviceRange(ptr, size), device=dev)[:X_BYTES].view(torch.bfloat16)
    ours, theirs = socket.socketpair()
    proc = subprocess.Popen([sys.executable, "-m", "tools.lab.l2_persist", "--child", str(theirs.fileno())],
                            pass_fds=[theirs.fileno()])
    theirs.close()
    send_frame(ours, {"size": size}, [fd])

    def ask(cmd):
        send_frame(ours, {"cmd": cmd})
        return recv_frame(ours)

    l2_bytes = torch.cuda.get_device_properties(dev).L2_cache_size
    flush_buf = torch.empty(max(2 * l2_bytes, 64 << 20) // 4, dtype=torch.float32, device=dev)
    pbuf = torch.empty(2 * l2.max_bytes // 4 + 1, dtype=torch.float32, device=dev)
    praw = drv.stream()
    pstream = torch.cuda.ExternalStream(praw)
    parent_default = l2.limit()

    def flush():
        flush_buf.zero_()
        torch.cuda.synchronize()

    from harness.timing.l2_guard import PersistingGuard

    def make_buffer(nbytes, stream):
        buf = torch.empty(max(1, nbytes // 4), dtype=torch.float32, device=dev)
        ext = torch.cuda.ExternalStream(stream, device=dev)

        def write():
            with torch.cuda.stream(ext):
                buf.zero_()
            ext.synchronize()
        return buf.data_ptr(), buf.numel() * 4, write
    guards = {"guard": PersistingGuard(drv, make_buffer, True), "guard-noevict": PersistingGuard(drv, make_buffer, False)}

    def act(name):
        if name in guards:       # harness/timing/l2_guard.py as the parent runs it, then the flush
            guards[name].before_flush()
            flush()
        elif name == "flush":
            flush()
        elif name == "reset+flush":
            l2.reset()
            flush()
        elif name == "limit0+flush":
            l2.set_limit(0)
            flush()
            l2.set_limit(parent_default)
        elif name == "pflush+reset+flush":
            l2.set_limit(l2.max_bytes)
            l2.window(praw, pbuf.data_ptr(), pbuf.numel() * 4)
            with torch.cuda.stream(pstream):
                pbuf.zero_()
            torch.cuda.synchronize()
            l2.window(praw, 0, 0)
            l2.reset()
            l2.set_limit(parent_default)
            flush()

    report = {"start": recv_frame(ours), "parent_limit_at_start": parent_default, "l2_bytes": l2_bytes,
              "x_bytes": X_BYTES}
    cold, parent_cold = [], []
    ask("unpin")
    for _ in range(args.reps):
        ask("touch")
        flush()
        parent_cold.append(_timed_read(torch, mine, torch.cuda.current_stream()))
        ask("touch")
        flush()
        cold.append(ask("read")["ms"])
    report["pin"] = ask("pin")
    report["parent_limit_after_pin"] = l2.limit()
    report["guard_check_after_pin"] = guards["guard-noevict"].check()
    report["parent_limit_after_check"] = l2.limit()
    reads = {a: [] for a in ACTIONS}
    costs = {a: [] for a in ACTIONS}
    parent_reads, limits = [], {}
    import time
    for _ in range(args.reps):
        for a in ACTIONS:
            ask("touch")
            t0 = time.perf_counter()
            act(a)
            costs[a].append((time.perf_counter() - t0) * 1e3)
            got = ask("read")
            reads[a].append(got["ms"])
            limits[a] = got["limit"]
        ask("touch")
        flush()
        parent_reads.append(_timed_read(torch, mine, torch.cuda.current_stream()))
    ask("unpin")
    ask("exit")
    proc.wait(timeout=60)
    report["cold_ms"] = _median(cold)
    report["read_ms"] = {a: _median(v) for a, v in reads.items()}
    report["candidate_limit_after"] = limits
    report["action_cost_ms"] = {a: _median(v) for a, v in costs.items()}
    report["guards"] = {k: g.describe() for k, g in guards.items()}     # whether "guard" kept its eviction
    report["parent_read_after_flush_ms"] = {"unpinned": _median(parent_cold), "pinned": _median(parent_reads)}
    warm = report["read_ms"]["none"]
    # An action reaches the other context's lines when its read is as slow as the cold read.
    report["reaches"] = {a: (ms - warm) > 0.5 * (report["cold_ms"] - warm) for a, ms in report["read_ms"].items()}
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
