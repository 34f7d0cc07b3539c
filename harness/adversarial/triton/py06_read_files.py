"""Adversarial (Triton): reads the task's reference.py and the harness's files from its process (to
learn the inputs' generator or the tolerance). The source check refuses open(); with it off, the
sandbox shows the executor nothing of the checkout or the task folder: the import fails and the
candidate does not load."""

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

for _path in ("/work", "kernels/triton_softmax_cpu/reference.py", "/kernelseek/task/reference.py"):
    with open(_path) as _fh:
        _fh.read()
