"""Scenario expansion (grid, where, list, ids) and the --scenarios filters."""

import pytest

from harness.errors import UsageError
from harness.task.scenarios import select_scenarios
from harness.task.model import load_task


@pytest.fixture
def task(task_copy):
    return load_task(task_copy())


def test_grid_with_where_then_list_in_order(task):
    ids = [s.id for s in task.scenarios]
    # 3 x 2 grid minus 1024x1024 (where rows*cols <= 262144), then the six listed scenarios.
    assert ids[:5] == ["r64-c128", "r64-c1024", "r256-c128", "r256-c1024", "r1024-c128"]
    assert "r1024-c1024" not in ids
    assert ids[5:] == ["r1-c4096", "r7-c33", "r1000-c100", "r33-c4097", "r4096-c64", "r512-c512"]
    assert task.scenarios[6].params == {"rows": 7, "cols": 33}


def test_filters(task):
    assert [s.id for s in select_scenarios(task, "quick")] == ["r64-c128", "r256-c1024", "r7-c33"]
    assert len(select_scenarios(task, "all")) == 11
    assert [s.id for s in select_scenarios(task, "c4097")] == ["r33-c4097"]
    assert [s.id for s in select_scenarios(task, "r64-*")] == ["r64-c128", "r64-c1024"]
    assert [s.id for s in select_scenarios(task, "r7-c33, r1-*")] == ["r1-c4096", "r7-c33"]


def test_a_filter_matching_nothing_is_a_usage_error(task):
    with pytest.raises(UsageError, match="no scenario of task cpu_softmax matches 'r999'"):
        select_scenarios(task, "r999")


def test_scalar_values_and_metrics(task):
    s = task.scenarios[0]
    assert task.scalar_values(s) == {"rows": 64, "cols": 128}
    assert task.metric("flops", s) == 5 * 64 * 128
    assert task.metric("bytes", s) == 8 * 64 * 128


def test_grid_scalars_and_conditional_expressions(task_copy):
    folder = task_copy(edit=lambda t: t.replace(
        '- {rows: [64, 256, 1024], cols: [128, 1024], where: "rows * cols <= 262144"}',
        '- {rows: 8, cols: [16, 32], where: "cols if rows > 4 else 0"}').replace(
        "quick: [r64-c128, r7-c33, r256-c1024]", "quick: [r8-c16]"))
    task = load_task(folder)
    assert [s.id for s in task.scenarios][:2] == ["r8-c16", "r8-c32"]
