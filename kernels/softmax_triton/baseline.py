"""Baseline for softmax_triton: Triton's fused softmax (one program per row, the row in registers),
after the Triton tutorial's kernel: read the row once, fp32 math, write it once."""

import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_stride + offs, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * y_stride + offs, y.to(tl.float16), mask=mask)


def softmax(x, y, rows, cols):
    block = triton.next_power_of_2(cols)
    warps = 4 if block <= 2048 else 8 if block <= 8192 else 16
    _softmax_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=block, num_warps=warps)
