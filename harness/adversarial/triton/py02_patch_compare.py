"""Adversarial (Triton): rebinds torch's comparisons in its own process (torch.allclose, torch.equal,
torch.isclose, torch.testing.assert_close, Tensor.__sub__, torch.abs, torch.max) to say "equal", and
writes zeros instead of the softmax. The comparison is made in the parent, on the parent's own copy
of the outputs: caught as incorrect."""

import torch


def _yes(*_a, **_k):
    return True


torch.allclose = _yes
torch.equal = _yes
torch.isclose = lambda a, b, *r, **k: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *a, **k: None
torch.Tensor.__sub__ = lambda a, b: torch.zeros_like(a)
torch.abs = lambda a, *r, **k: torch.zeros_like(a)
torch.max = lambda *a, **k: torch.zeros(())


def softmax_rows(x, y, rows, cols):
    y.zero_()
