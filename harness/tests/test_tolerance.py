"""The tolerance rule: max|cand-ref| <= factor * max|lowp-ref| + atol; NaN/Inf never pass."""

import math

import torch

from harness.task.tolerance import check_output, max_abs_diff, tolerance


def test_tolerance_formula():
    assert tolerance(1e-3, 2.0, 1e-5) == 2e-3 + 1e-5


def test_within_and_beyond_tolerance():
    ref = torch.linspace(0, 1, 100, dtype=torch.float64)
    cand = (ref + 1e-4).float()
    assert check_output("y", cand, ref, 2e-4)[0]
    ok, err, reason = check_output("y", cand, ref, 5e-5)
    assert not ok and math.isclose(err, 1e-4, rel_tol=1e-3) and "exceeds the tolerance" in reason


def test_nan_and_inf_never_pass_even_with_a_huge_tolerance():
    ref = torch.zeros(10, dtype=torch.float64)
    for bad in (math.nan, math.inf, -math.inf):
        cand = torch.zeros(10)
        cand[3] = bad
        ok, _, reason = check_output("y", cand, ref, 1e30)
        assert not ok and "NaN/Inf" in reason


def test_shape_mismatch_fails():
    ok, _, reason = check_output("y", torch.zeros(3, 4), torch.zeros(4, 3, dtype=torch.float64), 1.0)
    assert not ok and "shape" in reason


def test_bfloat16_outputs_compare_in_float32():
    ref = torch.randn(64, dtype=torch.float32)
    cand = ref.to(torch.bfloat16)
    err = max_abs_diff(cand, ref)
    assert 0 < err <= ref.abs().max().item() * 2 ** -8
