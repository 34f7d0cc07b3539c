"""The timed calls' value re-checks (loop.figures): each is screened against the baseline's
outputs of the same round (same inputs, the baseline trusted) and checked against the reference
computed again whenever it falls outside the screen's limit. The screen comes from the correctness
seeds (the baseline's error there, correctness_stage.run_correctness) or, without one, from the first
drawn call checked in full. The attack: wrong by a few tolerances on some timed calls only (the first
drawn one honest, or the first itself), so that only the screen stands between it and a correct
verdict."""

import torch

from harness.task.tolerance import max_abs_diff
from harness.timing.loop import Rechecks, SCREEN_FACTOR, figures, screen_limits, screened
from harness.task.oracle import Oracle
from harness.task.scenarios import select_scenarios
from harness.task.model import load_reference, load_task

from .conftest import CPU_TASK

TASK = load_task(CPU_TASK)
ORACLE = Oracle(TASK, load_reference(TASK), torch.device("cpu"))
SCENARIO = select_scenarios(TASK, "quick")[0]
OUT = TASK.outputs()[0].name


class _InOrder:
    """The reservoir's secret order, fixed: the test decides which call is drawn first."""

    def shuffle(self, _):
        pass


class _Ctx:
    task, oracle = TASK, ORACLE


def _rechecks(errors):
    """A reservoir of timed calls on seeds 1.., each the reference plus `error` at one value (0.0:
    honest), each with the baseline's output of the same inputs (the reference, 1e-8 off)."""
    r = Rechecks(_Ctx(), SCENARIO.params)
    r.secret, r.reservoir = _InOrder(), []
    for i, err in enumerate(errors):
        _, ref, _ = ORACLE.expected(SCENARIO.params, i + 1)
        cand = ref[OUT].clone().float()
        cand.view(-1)[0] += err
        r.reservoir.append((i, i + 1, {OUT: cand}, {OUT: ref[OUT].float() + 1e-8}))
    return r


def _figures(rechecks, screens=None):
    entry = {"timing": {}}
    samples = {"candidate": {"ms": [1.0] * 10, "wall_ms": [1.0] * 10},
               "baseline": {"ms": [1.0] * 10, "wall_ms": [1.0] * 10}}
    ctx = _Ctx()
    if screens is not None:
        ctx.screens = screens
    figures(ctx, entry, samples, {}, rechecks, SCENARIO, 0, 1)
    return entry


def _correctness_screen():
    """The screen run_correctness leaves: from seed 1's tolerance and a baseline 1e-8 off there."""
    _, ref, tols = ORACLE.expected(SCENARIO.params, 1)
    return {SCENARIO.id: screen_limits(TASK, {OUT: ref[OUT].float() + 1e-8}, ref, tols)}


def test_with_the_correctness_seeds_screen_no_timed_call_needs_the_reference_again():
    entry = _figures(_rechecks([0.0] * 6), _correctness_screen())
    assert entry.get("status") != "incorrect", entry
    assert entry["rechecked_calls"] == [1, 2, 3, 4, 5, 6]
    assert entry["rechecks_screened"] == 6


def test_with_the_correctness_seeds_screen_a_first_drawn_call_wrong_by_a_few_tolerances_is_refused():
    _, _, tols = ORACLE.expected(SCENARIO.params, 1)
    entry = _figures(_rechecks([3 * tols[OUT][0], 0.0, 0.0]), _correctness_screen())
    assert entry["status"] == "incorrect" and "timed call #1 (re-checked after timing" in entry["reason"], entry


def test_honest_timed_calls_are_screened_after_the_first_full_check():
    entry = _figures(_rechecks([0.0] * 6))
    assert entry.get("status") != "incorrect", entry
    assert entry["rechecked_calls"] == [1, 2, 3, 4, 5, 6]
    assert entry["rechecks_screened"] == 5


def test_a_timed_call_wrong_by_a_few_tolerances_after_an_honest_first_is_refused():
    _, _, tols = ORACLE.expected(SCENARIO.params, 1)
    tol = tols[OUT][0]
    entry = _figures(_rechecks([0.0, 0.0, 0.0, 3 * tol, 0.0]))
    assert entry["status"] == "incorrect" and "timed call #4 (re-checked after timing" in entry["reason"], entry


def test_the_screen_admits_only_what_the_triangle_inequality_keeps_within_the_tolerance():
    _, ref, tols = ORACLE.expected(SCENARIO.params, 1)
    twin = {OUT: ref[OUT].float() + 2e-7}
    limits = screen_limits(TASK, twin, ref, tols)
    assert limits[OUT] == tols[OUT][0] - SCREEN_FACTOR * max_abs_diff(twin[OUT], ref[OUT])
    assert 0 < limits[OUT] < tols[OUT][0] - 2 * 2e-7
    near = {OUT: twin[OUT] + 0.5 * limits[OUT]}
    far = {OUT: twin[OUT].clone()}
    far[OUT].view(-1)[3] += 1.01 * limits[OUT]
    assert screened(TASK, near, twin, limits) and not screened(TASK, far, twin, limits)
    nan = {OUT: twin[OUT].clone()}
    nan[OUT].view(-1)[0] = float("nan")
    assert not screened(TASK, nan, twin, limits)
    # a baseline as far from the reference as the tolerance allows leaves no room: no screen at all
    assert screen_limits(TASK, {OUT: ref[OUT].float() + tols[OUT][0] / 2}, ref, tols) is None
    assert screen_limits(TASK, nan, ref, tols) is None
