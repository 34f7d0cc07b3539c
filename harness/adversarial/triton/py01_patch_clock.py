"""Adversarial (Triton): rebinds every clock Python can reach in its own process (time.perf_counter,
time.monotonic, time.process_time, time.thread_time, their _ns forms, time.time) to one that barely
moves, then does three times the baseline's work per call: a harness that read a clock inside the
candidate's process would see it as nearly free. The parent's clock (the kernel's account of this
process's CPU time, read from outside) is not in its reach: it gains nothing."""

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

_t = [0]


def _frozen(*_a):
    _t[0] += 1
    return _t[0] * 1e-9


for _name in ("perf_counter", "monotonic", "process_time", "thread_time", "time"):
    setattr(time, _name, _frozen)
    setattr(time, _name + "_ns", lambda *_a: int(_frozen() * 1e9))

_honest = softmax_rows


def softmax_rows(x, y, rows, cols):
    for _ in range(3):
        _honest(x, y, rows, cols)
