"""Shared fixtures: the repository root, a per-session compile cache, small task folders, CUDA gating."""

import contextlib
import io
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

CPU_TASK = REPO / "kernels" / "cpu_softmax"
HAS_CUDA = torch.cuda.is_available()
NO_CUDA_REASON = (f"no CUDA device (torch {torch.__version__}, torch.cuda.is_available() is False): "
                  f"CUDA tests run on the GPU host, see scripts/gpu/verify.sh")


def pytest_configure(config):
    # `npm test` (scripts/test.sh) runs the suite beside vitest without these, then these alone: their
    # figures are spreads of timings, which a machine busy with another suite widens past any limit
    # that still tells an attack from noise.
    config.addinivalue_line("markers", "quiet: timing statistics; run on a machine doing nothing else")


def cuda_task(name):
    """Path of a CUDA task folder, or a pytest skip saying why it cannot run here."""
    path = REPO / "kernels" / name
    if not path.is_dir():
        pytest.skip(f"kernels/{name} is not in this checkout")
    if not HAS_CUDA:
        pytest.skip(NO_CUDA_REASON)
    return path


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("compile-cache"))


@pytest.fixture
def run_cli(cache_dir, monkeypatch):
    """Run the harness command line in this process (torch is imported once per test session; the
    candidate still runs in its own child process). Returns (returncode, stdout, stderr) as attributes.
    test_cpu_eval.py runs `python -m harness` as a real subprocess."""
    from harness.cli import main

    def run(*args, cache=True):
        argv = list(args)
        if cache and argv and argv[0] == "eval":
            argv += ["--cache-dir", cache_dir]
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.chdir(REPO)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())
    return run


@pytest.fixture
def candidate(tmp_path):
    """Write a candidate source file: candidate("body", name="kernel.cpp") -> path."""
    def write(body, name="kernel.cpp"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(body))
        return path
    return write


@pytest.fixture
def task_copy(tmp_path):
    """A copy of the cpu task whose task.yaml text can be edited: task_copy(edit=fn) -> folder."""
    def make(edit=None, name="cpu_softmax"):
        dest = tmp_path / "tasks" / name
        shutil.copytree(CPU_TASK, dest)
        if edit:
            text = (dest / "task.yaml").read_text()
            (dest / "task.yaml").write_text(edit(text))
        return dest
    return make


def has_tool(name):
    return shutil.which(name) is not None
