"""Cheap bit-level fingerprints of tensors, computed on the tensor's own device.

Used to tell whether a buffer changed (inputs after the call, outputs after "return" versus a moment
later) without copying it: the raw bits are read as integers, so NaN payloads and -0.0 count too.
"""

import torch

INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_CHUNK = 1 << 24
_MOD = 1_000_003


def fingerprint(t):
    """[numel, sum of words, position-weighted sum of words] of the tensor's bits (int64 wrap-around)."""
    flat = t.detach().contiguous().view(-1)
    words = flat.view(INT_OF_SIZE[flat.element_size()])
    total = torch.zeros((), dtype=torch.int64, device=t.device)
    weighted = torch.zeros((), dtype=torch.int64, device=t.device)
    for start in range(0, words.numel(), _CHUNK):
        chunk = words[start:start + _CHUNK].to(torch.int64)
        pos = torch.arange(start, start + chunk.numel(), device=t.device, dtype=torch.int64)
        total += chunk.sum()
        weighted += (chunk * (pos % _MOD + 1)).sum()
    return [flat.numel(), int(total), int(weighted)]


def fingerprints(tensors):
    return {name: fingerprint(t) for name, t in tensors.items()}
