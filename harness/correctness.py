"""The tolerance rule and the comparisons the parent makes on the child's outputs.

Rule (FlashAttention-3's tests): max|cand - ref| <= factor * max|lowp - ref| + atol, where ref is the
task's higher-precision reference and lowp the same function computed by PyTorch in the inputs'
precision. NaN and Inf never pass (the outputs are poisoned with NaN before every call, so an
unwritten element is a NaN).
"""

import torch


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
    bad = nonfinite_count(cand)
    if bad:
        nan = int(torch.isnan(cand).sum()) if cand.is_floating_point() else 0
        return False, None, (f"{name}: {bad} of {cand.numel()} values are NaN/Inf ({nan} NaN: NaN is the "
                             f"poison written before the call, so those elements were never written)")
    err = max_abs_diff(cand, ref)
    if not err <= tol:
        return False, err, f"{name}: max|cand-ref| = {err:.3g} exceeds the tolerance {tol:.3g}"
    return True, err, None
