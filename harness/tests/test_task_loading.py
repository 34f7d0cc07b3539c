"""task.yaml / reference.py validation: every broken field is named with its file."""

import pytest

from harness.errors import TaskError
from harness.task.model import load_reference, load_task


def _err(path):
    with pytest.raises(TaskError) as info:
        load_reference(load_task(path))
    return str(info.value)


def test_the_cpu_task_loads(task_copy):
    task = load_task(task_copy())
    assert task.name == "cpu_softmax" and task.device == "cpu"
    assert len(task.scenarios) == 11 and task.quick == ["r64-c128", "r7-c33", "r256-c1024"]
    assert [a.name for a in task.inputs()] == ["x"] and [a.name for a in task.outputs()] == ["y"]


@pytest.mark.parametrize("old,new,expected", [
    ("schema: kernelseek.task/1", "schema: kernelseek.task/9", "schema: expected 'kernelseek.task/1'"),
    ("name: cpu_softmax", "name: other", "name: 'other' must equal the folder name"),
    ("device: cpu", "device: tpu", "device: 'tpu' is not one of cpu, cuda"),
    ("dtype: float32, role: output", "dtype: f32, role: output", "kernel.args[1].dtype: 'f32' is not one of"),
    ("kind: int64, value: \"rows\"", "kind: int64, value: \"rowz\"", "unknown name 'rowz'"),
    ("baseline: baseline.cpp", "baseline: missing.cpp", "kernel.baseline: 'missing.cpp' is not a file"),
    ("entry: softmax_rows", "entry: 9bad", "kernel.entry: '9bad' is not a C identifier"),
    ("factor: 2.0", "factor: -1", "tolerance.factor: must be > 0"),
    ("quick: [r64-c128, r7-c33, r256-c1024]", "quick: [r64-c128, r9-c9]", "quick[1]: 'r9-c9' is not a scenario id"),
    ('where: "rows * cols <= 262144"', 'where: "rows * colz <= 1"', "grid[0].where: unknown name 'colz'"),
    ('id: "r{rows}-c{cols}"', 'id: "r{rows}"', "scenario id 'r64' is produced by both"),
    ("- {rows: 7, cols: 33}", "- {rows: 7}", "list[1]: missing param(s) cols"),
    ('flops: "5 * rows * cols"', 'flops: "__import__(1)"', "metrics.flops: unknown name '__import__'"),
    ("{name: torch, fn: peer_torch}", "{name: torch, fn: peer_missing}", "function peer_missing() is missing"),
    ("max_reps: 200", "max_reps: 5", "timing.max_reps: must be >= min_reps"),
])
def test_broken_fields_are_named(task_copy, old, new, expected):
    folder = task_copy(edit=lambda text: text.replace(old, new, 1))
    message = _err(folder)
    assert "task.yaml" in message or "reference.py" in message
    assert expected in message


def test_invalid_yaml_is_reported_with_the_file(task_copy):
    folder = task_copy(edit=lambda text: text + "\n  bad: [unclosed\n")
    assert "task.yaml: invalid YAML" in _err(folder)


def test_missing_task_folder_and_files(tmp_path, task_copy):
    assert "task folder not found" in _err(tmp_path / "nope")
    folder = task_copy()
    (folder / "reference.py").unlink()
    assert "reference.py: file not found" in _err(folder)


def test_reference_import_error_is_a_task_error(task_copy):
    folder = task_copy()
    (folder / "reference.py").write_text("import not_a_module_anywhere\n")
    assert "reference.py: import failed: ModuleNotFoundError" in _err(folder)


def test_unknown_fields_warn_with_a_suggestion(task_copy):
    task = load_task(task_copy(edit=lambda t: t + "tolerence: {factor: 3}\n"))
    assert any("tolerence: unknown field ignored (did you mean 'tolerance'?)" in w for w in task.warnings)


def test_upstream_is_a_known_field(task_copy):
    """`upstream` (where the kernel lives in the team's repository, docs/export.md) is the TS side's, not a typo."""
    task = load_task(task_copy(edit=lambda t: t + "upstream: {repo: 'https://github.com/team/kernels.git', path: k.cpp}\n"))
    assert not [w for w in task.warnings if "upstream" in w]


def test_expressions_cannot_call_arbitrary_code(task_copy):
    folder = task_copy(edit=lambda t: t.replace('flops: "5 * rows * cols"', 'flops: "(1).__class__"'))
    assert "metrics.flops" in _err(folder)


def test_the_shape_is_checked_against_the_shared_schema_file(task_copy):
    """The same JSON Schema file as the TypeScript side (src/harness/task-schema.ts) decides the shape."""
    from harness.task.schema import SCHEMA_PATH, problems
    assert SCHEMA_PATH.name == "task.schema.json" and SCHEMA_PATH.parent.name == "schema"
    # float64 is no harness dtype, and a pattern failure is worded by the schema's x-message.
    folder = task_copy(edit=lambda t: t.replace("dtype: float32, role: output", "dtype: float64, role: output"))
    assert "kernel.args[1].dtype: 'float64' is not one of float32, float16, bfloat16, int32, int64" in _err(folder)
    assert problems({"name": "Bad-Name"}, {"properties": {"name": {"type": "string", "pattern": "^[a-z]+$",
                                                                   "x-message": "must be lower case"}}}) \
        == [("name", "'Bad-Name' must be lower case")]
    assert problems(True, {"type": "integer"}) == [("", "expected an integer, got a boolean")]
