"""Python callables of the task's signature as a native task's baseline and peers (the team's
PyTorch op): each runs in a process of its own (the baseline's Python executor, the peers' process)
and is timed like any implementation; the native candidate is judged against them as usual."""

import json
import shutil

from .conftest import CPU_TASK

OPS = '''import torch


def softmax(x, y, rows, cols):
    """The team's op: the task's signature, writes y."""
    torch.softmax(x, dim=-1, out=y)


def softmax_twice(x, y, rows, cols):
    torch.softmax(x, dim=-1, out=y)
    torch.softmax(x, dim=-1, out=y)
'''


def _task(tmp_path, baseline, peers):
    dest = tmp_path / "tasks" / "cpu_softmax"
    shutil.copytree(CPU_TASK, dest)
    (dest / "ops.py").write_text(OPS)
    text = (dest / "task.yaml").read_text().replace("baseline: baseline.cpp", f"baseline: {baseline}")
    text = text.replace("  - {name: torch, fn: peer_torch}", peers)
    # the Python op uses torch: the task's denylist is for the candidate, and torch's own threads are one
    (dest / "task.yaml").write_text(text)
    return dest


def test_a_python_baseline_and_python_peers_beside_a_native_candidate(tmp_path, run_cli):
    task = _task(tmp_path, "python:ops.py:softmax",
                 "  - {name: torch, fn: peer_torch}\n  - {name: team_op, python: ops.py:softmax_twice}")
    out = tmp_path / "r.json"
    r = run_cli("eval", "--task-dir", str(task), "--candidate", str(CPU_TASK / "baseline.cpp"), "--scenarios",
                "r64-c128", "--json", str(out))
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    s = res["scenarios"][0]
    assert res["status"] == "ok", res["messages"]
    assert s["baseline_ms"] > 0 and s["verdict_vs_baseline"] in ("faster", "slower", "same")
    assert set(s["peer_ms"]) == {"torch", "team_op"}
    # the same op twice costs more than once: the peers' figures are the calls' own
    assert s["peer_ms"]["team_op"] > s["peer_ms"]["torch"]
    assert not any("no seccomp filter" in m for m in res["messages"])


def test_a_python_baseline_that_does_not_import_is_the_tasks_problem(tmp_path, run_cli):
    task = _task(tmp_path, "python:ops.py:softmax", "  - {name: torch, fn: peer_torch}")
    (task / "ops.py").write_text("import torch\nraise RuntimeError('needs its extension')\n\n"
                                 "def softmax(x, y, rows, cols):\n    pass\n")
    r = run_cli("eval", "--task-dir", str(task), "--candidate", str(CPU_TASK / "baseline.cpp"), "--scenarios",
                "r64-c128", "--no-peers", "--json", str(tmp_path / "r.json"))
    res = json.loads((tmp_path / "r.json").read_text()) if r.returncode == 0 else None
    # the candidate is not blamed: either the evaluation stops on the task, or the baseline is left out
    assert r.returncode == 3 and "the baseline does not load" in r.stderr and "needs its extension" in r.stderr, (r.stderr, res)
