"""Adversarial (Triton): patches the executor's own protocol in its process: every request the
parent sends is read through a wrapper (harness.executor.process.recv_frame) that answers "done" for
the calls itself, computing nothing, so that a timed request costs no time. The parent owns the
outputs (poisoned before every call) and reads them from its own mapping: caught as incorrect (or
the replies it forges are refused)."""

import sys

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
    _recv, _send = _proc.recv_frame, _proc.send_frame

    def _fake_recv(sock, fds, *a, **k):
        while True:
            msg = _recv(sock, fds, *a, **k)
            if msg.get("cmd") != "call" or msg.get("null"):
                return msg
            n = len(msg.get("idx") or msg.get("batch") or [1])
            _send(sock, {"type": "done", "seq": msg.get("seq"), "rc": [0] * n})

    _proc.recv_frame = _fake_recv
