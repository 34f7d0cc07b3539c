"""Triton candidates through the harness on the CPU (TRITON_INTERPRET=1, set by the harness for a CPU
task): the same scenarios, correctness, timing and JSON result as a native candidate, Python peers
and baselines of the task's signature, and the adversarial Triton candidates that try to decide
their verdict from inside their own process.

Triton needs PyTorch 2.x, and Debian's python3 has 1.13: these tests run the harness with the
Python that scripts/setup.sh prepares (KERNELSEEK_TRITON_PYTHON, default
~/.local/share/kernelseek/triton-venv/bin/python). Without it they fail, saying so: a missing
Triton is a broken set-up, not a reason to skip."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.schema import validate_result

from .conftest import REPO

TASK = REPO / "kernels" / "triton_softmax_cpu"
DEFAULT = Path.home() / ".local" / "share" / "kernelseek" / "triton-venv" / "bin" / "python"


@pytest.fixture(scope="module")
def triton_python():
    py = os.environ.get("KERNELSEEK_TRITON_PYTHON")
    if not py:
        has = subprocess.run([sys.executable, "-c", "import torch, triton; assert int(torch.__version__[0]) >= 2"],
                             capture_output=True)
        venv = os.environ.get("KERNELSEEK_TRITON_VENV")
        py = sys.executable if has.returncode == 0 else str(Path(venv) / "bin" / "python") if venv else str(DEFAULT)
    probe = subprocess.run([py, "-c", "import torch, triton, yaml; print(torch.__version__, triton.__version__)"],
                           capture_output=True, text=True) if Path(py).exists() else None
    if probe is None or probe.returncode != 0:
        pytest.fail(f"no Python with PyTorch 2.x and Triton at {py} (set KERNELSEEK_TRITON_PYTHON, or run "
                    f"scripts/setup.sh, which makes it): {probe.stderr[-300:] if probe else 'not found'}",
                    pytrace=False)
    return py


def _eval(py, candidate, tmp_path, *extra):
    out = tmp_path / "result.json"
    proc = subprocess.run([py, "-m", "harness", "eval", "--task-dir", str(TASK), "--candidate", str(candidate),
                           "--json", str(out), "--cache-dir", str(tmp_path / "cache"), *extra],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def test_a_triton_candidate_evaluates_with_the_same_result_shape(triton_python, tmp_path):
    result = _eval(triton_python, TASK / "baseline.py", tmp_path, "--scenarios", "quick", "--no-peers")
    assert validate_result(result) == []
    assert result["status"] == "ok" and result["correct"], result["messages"]
    assert [s["id"] for s in result["scenarios"]] == ["r4-c64", "r3-c33"]
    for s in result["scenarios"]:
        assert s["status"] == "ok" and s["time_ms"] > 0 and s["baseline_ms"] > 0
        assert s["verdict_vs_baseline"] in ("faster", "slower", "same") and len(s["speedup_vs_baseline_ci"]) == 2
        assert s["max_abs_err"] <= s["tolerance"]
    assert result["compile"]["kernels"] == [{"name": "_softmax_row", "jit": "triton"}]
    # the candidate's executor ran under its seccomp filter, in bubblewrap where this host has it
    assert not any("no seccomp filter" in m for m in result["messages"]), result["messages"]


def test_python_peers_of_the_tasks_signature_are_timed_beside_it(triton_python, tmp_path):
    result = _eval(triton_python, TASK / "baseline.py", tmp_path, "--scenarios", "r3-c33")
    s = result["scenarios"][0]
    assert result["status"] == "ok", result["messages"]
    assert set(s["peer_ms"]) == {"torch", "team_op"} and all(v > 0 for v in s["peer_ms"].values())
    assert set(s["verdict_vs_peer"]) == {"torch", "team_op"}


def test_a_wrong_triton_kernel_is_incorrect(triton_python, tmp_path):
    wrong = TASK / "baseline.py"
    src = wrong.read_text().replace("e / tl.sum(e, axis=0)", "e / (tl.sum(e, axis=0) + 1.0)")
    cand = tmp_path / "kernel.py"
    cand.write_text(src)
    result = _eval(triton_python, cand, tmp_path, "--scenarios", "r3-c33", "--no-peers")
    assert result["status"] == "incorrect" and "exceeds the tolerance" in result["scenarios"][0]["reason"]


def test_a_syntax_error_or_a_missing_entry_is_a_compile_error(triton_python, tmp_path):
    cand = tmp_path / "kernel.py"
    cand.write_text("import triton\n\ndef softmax_rows(x, y, rows, cols)\n    pass\n")
    result = _eval(triton_python, cand, tmp_path, "--scenarios", "r3-c33", "--no-peers")
    assert result["status"] == "compile_error" and "SyntaxError" in result["compile"]["log"]
    cand.write_text("import triton\n\ndef softmax(x, y, rows, cols):\n    pass\n")
    result = _eval(triton_python, cand, tmp_path, "--scenarios", "r3-c33", "--no-peers")
    assert result["status"] == "compile_error" and "no top-level function softmax_rows" in result["compile"]["log"]


def test_the_adversarial_triton_candidates_are_caught(triton_python, tmp_path):
    # Each tries to decide its verdict from inside its own process (clocks, torch's comparisons, the
    # executor's protocol and calibration) or to reach out of it; harness/adversarial/triton/manifest.yaml.
    out = tmp_path / "adv.json"
    proc = subprocess.run([triton_python, "-m", "harness.adversarial.run",
                           str(REPO / "harness" / "adversarial" / "triton" / "manifest.yaml"), "--json", str(out),
                           "--cache-dir", str(tmp_path / "cache")], cwd=REPO, capture_output=True, text=True,
                          timeout=1200)
    outcomes = json.loads(out.read_text())
    missed = [f"{o['file']}: {o['why']}" for o in outcomes if not o["ok"]]
    assert proc.returncode == 0 and not missed, "\n".join(missed) + proc.stdout[-2000:]
    assert len(outcomes) == 7
    # the comparison patch would have passed had the parent compared in the candidate's process
    assert next(o for o in outcomes if o["file"] == "py02_patch_compare.py")["status"] == "incorrect"


def test_with_the_source_check_on_the_cheats_are_refused_before_they_run(triton_python, tmp_path):
    for name in ("py01_patch_clock.py", "py03_patch_protocol.py", "py05_os_system.py", "py06_read_files.py"):
        result = _eval(triton_python, REPO / "harness" / "adversarial" / "triton" / name, tmp_path,
                       "--scenarios", "r3-c33", "--no-peers")
        assert result["status"] == "rejected" and any(m.startswith("source check:") for m in result["messages"]), name
