"""The "team's op" for triton_softmax_cpu: a Python callable of the task's signature, timed as a peer."""

import torch


def softmax(x, y, rows, cols):
    torch.softmax(x, dim=-1, out=y)
