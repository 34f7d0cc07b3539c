"""`check-task --json`: every problem of a broken task at once, each with its file, line, field and fix."""

import json
import shutil

from .conftest import CPU_TASK


def _broken(tmp_path):
    dest = tmp_path / "tasks" / "cpu_softmax"
    shutil.copytree(CPU_TASK, dest)
    text = (dest / "task.yaml").read_text()
    for old, new in [
        ("- {name: x, kind: tensor, dtype: float32, role: input}", "- {name: x, kind: tensor, dtype: f32, role: input}"),
        ("- {name: cols, kind: int64, value: \"cols\"}", "- {name: cols, kind: int64, value: \"colz\"}"),
        ('where: "rows * cols <= 262144"', 'where: "rows * * cols"'),
        ("factor: 2.0", "factor: 0.5"),
        ("entry: softmax_rows", "entry: softmax_rows\n  include_dirs: [missing_headers]"),
    ]:
        assert old in text, old
        text = text.replace(old, new)
    (dest / "task.yaml").write_text(text)
    # The baseline's signature no longer matches the task: cols is a float.
    base = (dest / "baseline.cpp").read_text()
    (dest / "baseline.cpp").write_text(base.replace("int64_t rows, int64_t cols)", "int64_t rows, float cols)", 1))
    ref = (dest / "reference.py").read_text()
    (dest / "reference.py").write_text(ref.replace("def lowp(inputs, scenario):", "def low_p(inputs, scenario):"))
    return dest


def test_every_problem_is_reported_at_once_with_a_fix(tmp_path, run_cli):
    task_dir = _broken(tmp_path)
    proc = run_cli("check-task", "--task-dir", str(task_dir), "--json")
    assert proc.returncode == 3
    report = json.loads(proc.stdout)
    probs = report["problems"]
    by = {(p["file"], p["field"]): p for p in probs}
    dtype = by[("task.yaml", "kernel.args[0].dtype")]
    assert "'f32' is not one of" in dtype["message"] and dtype["fix"] == "did you mean 'float32'?"
    assert dtype["line"] == (task_dir / "task.yaml").read_text().splitlines().index(
        next(l for l in (task_dir / "task.yaml").read_text().splitlines() if "dtype: f32" in l)) + 1
    colz = by[("task.yaml", "kernel.args[3].value")]
    assert "unknown name 'colz'" in colz["message"] and colz["fix"] == "did you mean 'cols'?"
    assert "scenarios.grid[0].where" in {p["field"] for p in probs}
    assert "less error than PyTorch" in by[("task.yaml", "tolerance.factor")]["message"]
    assert "not a folder inside the task folder" in by[("task.yaml", "kernel.include_dirs[0]")]["message"]
    sig = by[("baseline.cpp", "kernel.args[3]")]
    assert "float cols" in sig["message"] and sig["fix"].startswith("declare it as int64_t cols") and sig["line"]
    lowp = next(p for p in probs if p["file"] == "reference.py")
    assert "lowp() is missing" in lowp["message"] and lowp["fix"] == "did you mean 'low_p'?"
    assert all(p["fix"] for p in probs)


def test_reference_syntax_and_expressions_are_found_without_running_anything(tmp_path, run_cli):
    dest = tmp_path / "tasks" / "cpu_softmax"
    shutil.copytree(CPU_TASK, dest)
    (dest / "reference.py").write_text((dest / "reference.py").read_text().replace(
        "def output_shapes(scenario):", "def output_shapes(scenario)"))
    text = (dest / "task.yaml").read_text().replace('flops: "5 * rows * cols"', 'flops: "5 * rows * cols.size"')
    (dest / "task.yaml").write_text(text.replace("name: cpu_softmax", "name: cpu_softmaxx"))
    report = json.loads(run_cli("check-task", "--task-dir", str(dest), "--json").stdout)
    found = {(p["file"], p["field"]): p for p in report["problems"]}
    syntax = found[("reference.py", "")]
    assert "SyntaxError" in syntax["message"] and syntax["line"] == (dest / "reference.py").read_text().splitlines().index(
        "def output_shapes(scenario)") + 1
    assert ("task.yaml", "metrics.flops") in found
    assert found[("task.yaml", "name")]["fix"].startswith("name: cpu_softmax")


def test_a_good_task_has_no_problem_and_its_reference_runs(run_cli):
    report = json.loads(run_cli("check-task", "--task-dir", str(CPU_TASK), "--json").stdout)
    assert report["ok"] and report["problems"] == []


def test_reference_that_returns_the_wrong_dtype_is_caught_by_running_it(tmp_path, run_cli):
    dest = tmp_path / "tasks" / "cpu_softmax"
    shutil.copytree(CPU_TASK, dest)
    (dest / "reference.py").write_text((dest / "reference.py").read_text().replace(
        'return {"x": x.to(device).contiguous()}', 'return {"x": x.double().to(device).contiguous()}'))
    report = json.loads(run_cli("check-task", "--task-dir", str(dest), "--json").stdout)
    assert any("torch.float64, task.yaml says float32" in p["message"] for p in report["problems"])


def test_a_python_baseline_with_the_wrong_signature(tmp_path, run_cli):
    dest = tmp_path / "tasks" / "cpu_softmax"
    shutil.copytree(CPU_TASK, dest)
    (dest / "ops.py").write_text("import torch\n\n\ndef softmax(x, y):\n    torch.softmax(x, -1, out=y)\n")
    (dest / "task.yaml").write_text((dest / "task.yaml").read_text().replace(
        "baseline: baseline.cpp", "baseline: python:ops.py:softmax"))
    report = json.loads(run_cli("check-task", "--task-dir", str(dest), "--json").stdout)
    prob = next(p for p in report["problems"] if p["file"] == "ops.py")
    assert "takes 2 argument(s)" in prob["message"] and prob["fix"] == "def softmax(x, y, rows, cols)"
