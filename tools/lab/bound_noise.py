"""How far apart two identical executors' lean requests read on the parent's clock (issue 39).

    python3 -m tools.lab.bound_noise [--pairs 256] [--kernel-us 2 20 200] [--json out.json]

The bound of a CUDA candidate's figures (harness/timing/bound.py) is the parent's wall clock around
one lean request (send, call, synchronise, answer, the parent's read of a few outputs) in the
candidate's executor, paired with the same request in the baseline's. Its margin must cover what
identical code shows in that difference. Two processes here each serve requests the way the
executors' Python path does (a frame read, the harness's pad kernel for `kernel-us` as the call on a
blocking stream, the device synchronised, a frame written); the parent flushes L2, times each
request to the end of its own read of 16 elements of a buffer, and pairs the two processes' requests
of a round (the order drawn per round, all three processes on one core drawn per round, as the
timing loop pins them). Printed per kernel length: the paired differences' median, spread, tails,
and the bootstrap interval of their median at 16, 32, 64, 128 and 256 pairs. Needs a GPU.
"""

import argparse
import json
import random
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from harness.executor.cuda_driver import Driver


def child(fd):
    sock = socket.socket(fileno=fd)
    drv = Driver(0)
    pad = drv.pad_kernel()
    stream = drv.stream()
    pad.launch(0.001, stream)
    drv.synchronize()
    while True:
        data = b""
        while len(data) < 8:
            got = sock.recv(8 - len(data))
            if not got:
                return 0
            data += got
        ns, = struct.unpack("<q", data)
        if ns < 0:
            return 0
        pad.launch(ns / 1e6, stream)
        drv.synchronize()
        sock.sendall(data)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m tools.lab.bound_noise")
    p.add_argument("--pairs", type=int, default=256)
    p.add_argument("--kernel-us", type=float, nargs="+", default=[2.0, 20.0, 200.0])
    p.add_argument("--json")
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is not None:
        return child(args.child)
    import torch

    from harness.timing.rounds import Pinning
    from harness.timing.stats import median, median_ci, percentile
    dev = torch.device("cuda")
    torch.zeros(1, device=dev)
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    flush_buf = torch.empty(max(2 * l2, 64 << 20) // 4, dtype=torch.float32, device=dev)
    out = torch.zeros(1 << 20, dtype=torch.bfloat16, device=dev)
    socks, procs = [], []
    for _ in range(2):
        ours, theirs = socket.socketpair()
        procs.append(subprocess.Popen([sys.executable, "-m", "tools.lab.bound_noise", "--child",
                                       str(theirs.fileno())], pass_fds=[theirs.fileno()]))
        theirs.close()
        socks.append(ours)
    pin = Pinning([0] + [pr.pid for pr in procs])
    rng, secret = random.Random(1), random.Random(2)
    report = {}

    def request(sock, ns):
        flush_buf.zero_()
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        sock.sendall(struct.pack("<q", ns))
        data = b""
        while len(data) < 8:
            data += sock.recv(8 - len(data))
        idx = torch.tensor([secret.randrange(out.numel()) for _ in range(16)], device=dev)
        out[idx].cpu()
        return (time.perf_counter_ns() - t0) / 1e6

    try:
        for us in args.kernel_us:
            ns = int(us * 1e3)
            for _ in range(8):      # warm
                for s in socks:
                    request(s, ns)
            for pinned in (True, False):
                walls = [[], []]
                for _ in range(args.pairs):
                    if pinned:
                        pin.round(rng)
                    order = [0, 1]
                    rng.shuffle(order)
                    for k in order:
                        walls[k].append(request(socks[k], ns))
                pin.restore()
                d = [a - b for a, b in zip(*walls)]
                row = {"wall_ms": [median(w) for w in walls], "d_median_ms": median(d),
                       "d_p05_ms": percentile(d, 0.05), "d_p95_ms": percentile(d, 0.95),
                       "d_mad_ms": median([abs(x - median(d)) for x in d])}
                for n in (16, 32, 64, 128, 256):
                    if n <= len(d):
                        ci = median_ci(d[:n], random.Random(n))
                        row[f"ci{n}_ms"] = ci
                key = f"{us:g}us-{'pinned' if pinned else 'free'}"
                report[key] = row
                print(key, json.dumps(row), flush=True)
    finally:
        pin.restore()
        for s in socks:
            s.sendall(struct.pack("<q", -1))
        for pr in procs:
            pr.wait(timeout=30)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
