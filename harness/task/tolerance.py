"""The tolerance rule, the comparisons the parent makes on an executor's outputs, and the poison that
marks an output element never written.

Rule (FlashAttention-3's tests): max|cand - ref| <= factor * max|lowp - ref| + atol, where ref is the
task's higher-precision reference and lowp the same function computed by PyTorch in the inputs'
precision. NaN and Inf never pass. Outputs are poisoned before every call (through the parent's own
mapping of the executor's buffers, harness/executor/shm.py) with a signalling-NaN bit pattern no
arithmetic produces (arithmetic quiets a signalling NaN and never makes this payload), so an element
still holding it was never written and any other NaN/Inf came from the kernel's own arithmetic; the
two are reported apart.
"""

import torch

POISON_BITS = {torch.float32: (torch.int32, 0x7FA5A5A5), torch.float64: (torch.int64, 0x7FF4A5A5A5A5A5A5),
               torch.bfloat16: (torch.int16, 0x7FA5), torch.float16: (torch.int16, 0x7CA5),
               torch.int32: (torch.int32, -0x5A5A5A5A), torch.int64: (torch.int64, -0x5A5A5A5A),
               torch.uint8: (torch.uint8, 0xA5)}


def poison(t):
    as_int, bits = POISON_BITS[t.dtype]
    (t.view(as_int) if as_int != t.dtype else t).fill_(bits)


def poison_rows(t, rows):
    """poison() into rows `rows` (a long tensor on t's device) of a 2-D tensor, in one operation."""
    as_int, bits = POISON_BITS[t.dtype]
    (t.view(as_int) if as_int != t.dtype else t).index_fill_(0, rows, bits)


def unwritten(t):
    """Boolean mask of the elements that still hold the poison pattern."""
    as_int, bits = POISON_BITS[t.dtype]
    return (t.view(as_int) if as_int != t.dtype else t) == bits


def _common(a, ref):
    dtype = torch.float64 if ref.dtype == torch.float64 else torch.float32
    return a.to(device=ref.device, dtype=dtype), ref.to(dtype)


def max_abs_diff(a, ref):
    a, ref = _common(a, ref)
    if a.numel() == 0:
        return 0.0
    return float((a - ref).abs().max())


def nonfinite_count(t):
    if not t.is_floating_point():
        return 0
    return int((~torch.isfinite(t)).sum())


def tolerance(lowp_err, factor, atol):
    return factor * lowp_err + atol


def check_output(name, cand, ref, tol):
    """(ok, max_abs_err, reason or None) for one output tensor against the reference."""
    cand = cand.to(ref.device)   # outputs arrive on the host; compare where the reference lives
    if tuple(cand.shape) != tuple(ref.shape):
        return False, None, f"{name}: shape {tuple(cand.shape)} differs from the reference's {tuple(ref.shape)}"
    never = unwritten(cand)
    if bool(never.any()):
        first = int(never.reshape(-1).nonzero()[0])
        return False, None, (f"{name}: {int(never.sum())} of {cand.numel()} values were never written (they still "
                             f"hold the poison pattern written before the call; first at flat index {first})")
    bad = nonfinite_count(cand)
    if bad:
        first = int((~torch.isfinite(cand)).reshape(-1).nonzero()[0])
        return False, None, (f"{name}: {bad} of {cand.numel()} values are NaN/Inf that your kernel's own "
                             f"arithmetic produced (first at flat index {first}; unwritten elements would "
                             f"hold the poison pattern instead)")
    err = max_abs_diff(cand, ref)
    if not err <= tol:
        return False, err, f"{name}: max|cand-ref| = {err:.3g} exceeds the tolerance {tol:.3g}"
    return True, err, None
