"""Adversarial (Triton): patches the executor's protocol so that the requests the parent uses to
measure a request's own cost ("null" requests: everything but the calls) burn 3 ms of CPU each. The
parent subtracts the smallest null request's cost from every timed request of this executor, so
inflating it would make the candidate's calls look 3 ms a request cheaper. The candidate's
calibration is checked against its twin's (the baseline's executor runs the same code): it gains
nothing."""

import sys
import time

import triton
import triton.language as tl


@triton.jit
def _softmax_row(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax_rows(x, y, rows, cols):
    _softmax_row[(rows,)](x, y, cols, BLOCK=triton.next_power_of_2(cols))

_proc = sys.modules.get("harness.executor.process")
if _proc is not None:
    _recv = _proc.recv_frame
    _cpu = time.thread_time

    def _slow_recv(sock, fds, *a, **k):
        msg = _recv(sock, fds, *a, **k)
        if msg.get("cmd") == "call" and msg.get("null"):
            t0 = _cpu()
            while _cpu() - t0 < 0.003:
                pass
        return msg

    _proc.recv_frame = _slow_recv
