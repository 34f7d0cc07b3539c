"""Adversarial (Triton): runs a shell command as it is imported (os.system: fork and exec), to reach
outside its process. The source check refuses the import; with it off, the seccomp filter installed
before the candidate's file is imported kills the process: rejected."""

import os

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

os.system("id > /tmp/owned")
