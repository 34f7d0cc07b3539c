"""The order of an evaluation's stages: correctness on every scenario before anything is timed, and
the peers' executor starting meanwhile (its failure is the task's, never the candidate's)."""

import pytest

from harness.executor import handle
from harness.errors import TaskError
from harness.evaluate import Options, evaluate

from .conftest import CPU_TASK

# The baseline's softmax, except that on 7-row inputs it also writes its input (hack 6).
WRITES_INPUT_ON_7_ROWS = (CPU_TASK / "baseline.cpp").read_text().replace(
    "  return 0;\n}", "  if (rows == 7) const_cast<float*>(x)[0] += 1.0f;\n  return 0;\n}")
assert "rows == 7" in WRITES_INPUT_ON_7_ROWS


@pytest.fixture
def no_executor_left():
    """Every executor this test starts is closed by the end of its evaluation."""
    before = set(handle._LIVE)
    yield
    assert not handle._LIVE - before


def test_a_candidate_refused_on_its_last_scenario_is_refused_before_anything_is_timed(candidate, cache_dir,
                                                                                       no_executor_left):
    # r64-c128 comes first (the grid before the list) and is correct; r7-c33 is where the candidate cheats.
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(candidate(WRITES_INPUT_ON_7_ROWS)),
                              scenarios="r7-c33,r64-c128", cache_dir=cache_dir))
    first, last = result["scenarios"]
    assert first["id"] == "r64-c128" and last["id"] == "r7-c33"
    assert result["status"] == "rejected" and "modified its input" in last["reason"]
    # The first scenario passed its correctness stage and stays correct, but nothing was timed.
    assert first["status"] == "ok" and first["correct"] and "timing" not in first["stage_seconds"]
    assert first.get("time_ms") is None and result["summary"]["timed"] == 0


def test_a_peers_executor_that_does_not_start_is_the_tasks_error(task_copy, cache_dir, no_executor_left):
    folder = task_copy()
    # reference.py loads in the harness (inputs, reference) and fails only in the peers' executor.
    (folder / "reference.py").write_text((folder / "reference.py").read_text() + (
        "\nimport sys\n"
        "if sys.argv[0].endswith('executor/process.py'):\n"
        "    raise RuntimeError('this reference.py cannot run its peers')\n"))
    with pytest.raises(TaskError) as info:
        evaluate(Options(task_dir=str(folder), candidate=str(CPU_TASK / "baseline.cpp"), scenarios="r7-c33",
                         cache_dir=cache_dir))
    assert "the peers' executor did not start" in str(info.value)
    assert "this reference.py cannot run its peers" in str(info.value)


def test_the_peers_executor_started_by_the_command_line_is_the_one_used(run_cli, monkeypatch, no_executor_left):
    import json

    from harness.executor import pair
    made = []
    original = pair.spawn_peers

    def counted(*args, **kwargs):
        made.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(pair, "spawn_peers", counted)
    proc = run_cli("eval", "--task-dir", str(CPU_TASK), "--candidate", str(CPU_TASK / "baseline.cpp"),
                   "--json", "-", "--scenarios", "r7-c33")
    result = json.loads(proc.stdout)
    assert proc.returncode == 0 and result["status"] == "ok"
    assert result["scenarios"][0]["peer_ms"]["torch"] > 0
    assert len(made) == 1        # the command line's, taken up by evaluate(): none started again


def test_one_burst_of_cpu_after_return_is_confirmed_before_it_rejects(cache_dir, monkeypatch, no_executor_left):
    # The executor's main thread is billed 0.6 ms once, in the first watched call's look after
    # return, as an interrupt on its core would be: an honest kernel is not rejected for it.
    from harness import correctness_stage
    from harness.executor.handle import ExecutorProcess
    import time
    from types import SimpleNamespace
    jump = {"armed": True, "ns": 0}
    real_cpu = ExecutorProcess.cpu_ns

    def sleep(seconds):     # the watched call's wait before its look after return
        time.sleep(seconds)
        if jump["armed"]:
            jump["armed"], jump["ns"] = False, 600_000

    monkeypatch.setattr(correctness_stage, "time", SimpleNamespace(sleep=sleep))
    # On the executor's main thread: its process clock and that thread's own account both move.
    real_other = ExecutorProcess.other_threads_cpu_ns
    monkeypatch.setattr(ExecutorProcess, "cpu_ns", lambda self: real_cpu(self) + jump["ns"])
    monkeypatch.setattr(ExecutorProcess, "other_threads_cpu_ns", lambda self: max(0, real_other(self) - jump["ns"]))
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), scenarios="r7-c33",
                              cache_dir=cache_dir, with_peers=False))
    assert not jump["armed"]
    assert result["status"] == "ok", result["messages"]
    assert any("after the call returned once; the same call again did not" in m for m in result["messages"])


def test_the_longest_scenarios_are_timed_first_by_the_tasks_roofline():
    from harness.evaluate import timing_order
    from harness.task.scenarios import select_scenarios
    from harness.task.model import load_task
    task = load_task(CPU_TASK.parent / "rmsnorm")
    scenarios = select_scenarios(task, "all")
    order = [scenarios[i].id for i in timing_order(task, scenarios, range(len(scenarios)))]
    assert order[:2] == ["r65536-c16384", "r65536-c8192"] and order[-1] == "r1-c1024"
    assert sorted(order) == sorted(s.id for s in scenarios)
    # Only those asked for, and in the task's order where the roofline says nothing.
    assert timing_order(task, scenarios, [3, 1]) == [3, 1]
    task.metrics = {}
    assert timing_order(task, scenarios, [5, 2, 7]) == [5, 2, 7]


def test_an_evaluation_times_its_scenarios_longest_first(cache_dir, no_executor_left):
    import io
    import json
    from harness.progress import Progress
    out = io.StringIO()
    # The task's order: r64-c128 (8k elements), r256-c1024 (256k), r7-c33 (231).
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), scenarios="quick",
                              cache_dir=cache_dir, progress=Progress("jsonl", out)))
    assert result["status"] == "ok" and [e["id"] for e in result["scenarios"]] == ["r64-c128", "r256-c1024", "r7-c33"]
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    checked = [e["id"] for e in events if e["event"] == "phase" and e["phase"] == "correctness"]
    timed = [e["id"] for e in events if e["event"] == "phase" and e["phase"] == "timing"]
    assert checked == ["r64-c128", "r256-c1024", "r7-c33"] and timed == ["r256-c1024", "r64-c128", "r7-c33"]
    # What a progress line shows: each stage's place in its own order, and how many are reported so far.
    assert [e["i"] for e in events if e["event"] == "phase" and e["phase"] == "timing"] == [0, 1, 2]
    reported = [e for e in events if e["event"] == "scenario"]
    assert [e["id"] for e in reported] == timed and [e["i"] for e in reported] == [0, 1, 2]
