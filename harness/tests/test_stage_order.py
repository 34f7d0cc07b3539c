"""The order of an evaluation's stages: correctness on every scenario before anything is timed, and
the peers' executor starting meanwhile (its failure is the task's, never the candidate's)."""

import pytest

from harness import executor_proc
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
    before = set(executor_proc._LIVE)
    yield
    assert not executor_proc._LIVE - before


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
        "if sys.argv[0].endswith('executor.py'):\n"
        "    raise RuntimeError('this reference.py cannot run its peers')\n"))
    with pytest.raises(TaskError) as info:
        evaluate(Options(task_dir=str(folder), candidate=str(CPU_TASK / "baseline.cpp"), scenarios="r7-c33",
                         cache_dir=cache_dir))
    assert "the peers' executor did not start" in str(info.value)
    assert "this reference.py cannot run its peers" in str(info.value)


def test_the_peers_executor_started_by_the_command_line_is_the_one_used(run_cli, monkeypatch, no_executor_left):
    import json

    from harness import executor_pair
    made = []
    original = executor_pair.spawn_peers

    def counted(*args, **kwargs):
        made.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(executor_pair, "spawn_peers", counted)
    proc = run_cli("eval", "--task-dir", str(CPU_TASK), "--candidate", str(CPU_TASK / "baseline.cpp"),
                   "--json", "-", "--scenarios", "r7-c33")
    result = json.loads(proc.stdout)
    assert proc.returncode == 0 and result["status"] == "ok"
    assert result["scenarios"][0]["peer_ms"]["torch"] > 0
    assert len(made) == 1        # the command line's, taken up by evaluate(): none started again


def test_one_burst_of_cpu_after_return_is_confirmed_before_it_rejects(cache_dir, monkeypatch, no_executor_left):
    # The executor's main thread is billed 0.6 ms once, in the first watched call's look after
    # return, as an interrupt on its core would be: an honest kernel is not rejected for it.
    from harness import executor_eval
    from harness.executor_proc import ExecutorProcess
    import time
    from types import SimpleNamespace
    jump = {"armed": True, "ns": 0}
    real_cpu = ExecutorProcess.cpu_ns

    def sleep(seconds):     # the watched call's wait before its look after return
        time.sleep(seconds)
        if jump["armed"]:
            jump["armed"], jump["ns"] = False, 600_000

    monkeypatch.setattr(executor_eval, "time", SimpleNamespace(sleep=sleep))
    # On the executor's main thread: its process clock and that thread's own account both move.
    real_other = ExecutorProcess.other_threads_cpu_ns
    monkeypatch.setattr(ExecutorProcess, "cpu_ns", lambda self: real_cpu(self) + jump["ns"])
    monkeypatch.setattr(ExecutorProcess, "other_threads_cpu_ns", lambda self: max(0, real_other(self) - jump["ns"]))
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), scenarios="r7-c33",
                              cache_dir=cache_dir, with_peers=False))
    assert not jump["armed"]
    assert result["status"] == "ok", result["messages"]
    assert any("after the call returned once; the same call again did not" in m for m in result["messages"])
