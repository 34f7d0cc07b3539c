"""Python peers of the task's signature (`peers: - {name, python: peers.py:fn}`), timed in the peers'
process like every peer: torch.compile of the reference's formula, compiled once for every shape
(dynamic), on its first call."""

import torch

_compiled = None


def _softmax(x):
    xf = x.float()
    e = torch.exp(xf - xf.amax(dim=-1, keepdim=True))
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)


def compiled(x, y, rows, cols):
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_softmax, dynamic=True)
    y.copy_(_compiled(x))
