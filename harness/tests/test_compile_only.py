"""`eval --compile-only` (no device needed) and what a CUDA evaluation says on a machine without a GPU."""

import json
import os

import pytest
import torch

from harness.build.headers import CUTLASS_VERSION

from .conftest import CPU_TASK, REPO

RMSNORM = REPO / "kernels" / "rmsnorm"
GEMM = REPO / "kernels" / "gemm_cute"


def _compile_only(run_cli, task, candidate):
    proc = run_cli("eval", "--task-dir", str(task), "--candidate", str(candidate), "--compile-only")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_compile_only_reports_the_build_of_a_cpu_candidate_and_its_refusals(run_cli, candidate):
    res = _compile_only(run_cli, CPU_TASK, CPU_TASK / "baseline.cpp")
    assert res["schema"] == "kernelseek.compile/1" and res["status"] == "ok" and res["compile"]["log"]
    bad = candidate((CPU_TASK / "baseline.cpp").read_text().replace("#include <cstdint>", "#include <cstdint>\n#include <thread>"))
    res = _compile_only(run_cli, CPU_TASK, bad)
    assert res["status"] == "rejected" and any("#include <thread>" in m for m in res["messages"])
    broken = candidate("extern \"C\" int softmax_rows(const float* x) { return }\n")
    assert _compile_only(run_cli, CPU_TASK, broken)["status"] == "compile_error"


@pytest.mark.skipif(not any(os.access(os.path.join(d, "nvcc"), os.X_OK) for d in
                            os.environ.get("PATH", "").split(":") + ["/usr/local/cuda/bin"]),
                    reason="no nvcc on this machine")
def test_compile_only_gives_ptxas_figures_for_a_cuda_task_without_a_gpu(run_cli):
    res = _compile_only(run_cli, RMSNORM, RMSNORM / "baseline.cu")
    assert res["status"] == "ok", res["messages"]
    c = res["compile"]
    assert c["registers"] > 0 and c["spills"] == 0 and c["smem_bytes"] is not None
    assert c["kernels"] and c["kernels"][0]["arch"] == "sm_90a"


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here: the message is for machines without one")
def test_a_cuda_evaluation_without_a_gpu_says_so_and_names_compile_only(run_cli):
    proc = run_cli("eval", "--task-dir", str(RMSNORM), "--candidate", str(RMSNORM / "baseline.cu"))
    assert proc.returncode == 4
    assert "no CUDA GPU on this machine" in proc.stderr and "--compile-only" in proc.stderr


def test_a_cuda_task_with_cutlass_without_the_headers_says_where_to_get_them(run_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("KERNELSEEK_CUTLASS_DIR", str(tmp_path / "nowhere"))
    proc = run_cli("eval", "--task-dir", str(GEMM), "--candidate", str(GEMM / "baseline"), "--compile-only")
    assert proc.returncode == 4 and "scripts/setup.sh" in proc.stderr and CUTLASS_VERSION in proc.stderr


def _cutlass_found():
    from harness.build.headers import cutlass_root
    from harness.errors import EnvironmentProblem
    try:
        return cutlass_root() is not None
    except EnvironmentProblem:
        return False


@pytest.mark.skipif(not _cutlass_found(), reason="no CUTLASS v4.7.0 headers here (scripts/setup.sh fetches them into "
                                                 "third_party/cutlass; or set KERNELSEEK_CUTLASS_DIR)")
def test_the_multi_file_cute_example_compiles_and_passes_every_check(run_cli):
    res = _compile_only(run_cli, GEMM, GEMM / "baseline")
    assert res["status"] == "ok", res["messages"]
    assert res["candidate"]["files"] == ["gemm.cu", "tile.cuh"]
    assert res["compile"]["spills"] == 0 and res["compile"]["registers"] <= 255
