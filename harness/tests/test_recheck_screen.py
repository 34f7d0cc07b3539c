"""The timed calls' value re-checks (executor_timing.figures): the first drawn call is checked against
the reference computed again; the rest are screened against the baseline's outputs of the same round
(same inputs, the baseline trusted) and checked against the reference whenever they fall outside the
screen's limit. The attack: wrong by a few tolerances on some timed calls only, the first drawn one
honest, so that only the screen stands between it and a correct verdict."""

import torch

from harness.correctness import max_abs_diff
from harness.executor_timing import Rechecks, SCREEN_FACTOR, figures, screen_limits, screened
from harness.oracle import Oracle
from harness.scenarios import select_scenarios
from harness.task import load_reference, load_task

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


def _figures(rechecks):
    entry = {"timing": {}}
    samples = {"candidate": {"ms": [1.0] * 10, "wall_ms": [1.0] * 10},
               "baseline": {"ms": [1.0] * 10, "wall_ms": [1.0] * 10}}
    figures(_Ctx(), entry, samples, {}, rechecks, SCENARIO, 0, 1)
    return entry


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
