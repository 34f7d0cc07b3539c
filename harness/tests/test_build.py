"""Compiling: the content-addressed cache, nvcc's flags and its ptxas report."""

import shutil
import textwrap

import pytest

from harness.build import arch_flags, build
from harness.ptxas import parse_ptxas
from harness.task import load_task

from .conftest import CPU_TASK

PTXAS_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z1kILi256EEvPf' for 'sm_90a'
ptxas info    : Function properties for _Z1kILi256EEvPf
    256 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem
ptxas info    : Compiling entry function '_Z2k2Pf' for 'sm_90a'
ptxas info    : Function properties for _Z2k2Pf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 0 barriers
"""


def test_cache_hit_and_a_damaged_entry_rebuilt(tmp_path):
    task = load_task(CPU_TASK)
    source = (CPU_TASK / "baseline.cpp").read_bytes()
    first = build(task, source, tmp_path)
    assert first.ok and not first.cached and first.so_path.is_file()
    assert build(task, source, tmp_path).cached
    assert build(task, source + b"\n// changed\n", tmp_path).key != first.key
    (tmp_path / first.key / "meta.json").write_text("{not json")
    again = build(task, source, tmp_path)
    assert again.ok and not again.cached and again.so_path.is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".build-")]   # no temporary left


def test_a_failed_compile_is_cached_with_its_log(tmp_path):
    task = load_task(CPU_TASK)
    bad = build(task, b"this is not C++\n", tmp_path)
    assert not bad.ok and "error" in bad.log
    again = build(task, b"this is not C++\n", tmp_path)
    assert again.cached and not again.ok and again.log == bad.log


def test_ptxas_report_takes_the_worst_kernel():
    report = parse_ptxas(PTXAS_LOG)
    assert report["registers"] == 168 and report["smem_bytes"] == 1024 and report["spills"] == 12
    assert [k["name"] for k in report["kernels"]] == ["_Z1kILi256EEvPf", "_Z2k2Pf"]
    assert parse_ptxas("")["registers"] is None


def test_arch_flags():
    assert arch_flags(["sm_90"]) == ["-gencode=arch=compute_90a,code=sm_90a"]
    assert arch_flags(["sm_80", "sm_100"]) == ["-gencode=arch=compute_80,code=sm_80",
                                               "-gencode=arch=compute_100a,code=sm_100a"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_build_reports_registers(tmp_path):
    folder = tmp_path / "tiny_cuda"
    folder.mkdir()
    (folder / "baseline.cu").write_text('extern "C" int fill(float* y, cudaStream_t s) { return 0; }\n')
    (folder / "task.yaml").write_text(textwrap.dedent("""\
        schema: kernelseek.task/1
        name: tiny_cuda
        summary: a build test
        device: cuda
        architectures: [sm_90]
        kernel:
          language: cuda
          file: kernel.cu
          baseline: baseline.cu
          entry: fill
          args:
            - {name: y, kind: tensor, dtype: float32, role: output}
            - {name: s, kind: stream}
        scenarios: {params: [n], list: [{n: 1}], id: "n{n}"}
        tolerance: {rule: lowp_relative, factor: 2, atol: 0}
        """))
    task = load_task(folder)
    src = (b"__global__ void k(float* y) { y[threadIdx.x] = threadIdx.x * 2.0f; }\n"
           b'extern "C" int fill(float* y, cudaStream_t s) { k<<<1, 32, 0, s>>>(y); return 0; }\n')
    b = build(task, src, tmp_path / "cache")
    assert b.ok, b.log
    assert b.ptxas["registers"] > 0 and b.ptxas["kernels"][0]["arch"] == "sm_90a"
    assert "-gencode=arch=compute_90a,code=sm_90a" in b.commands[0]
    assert b.lib.exported() == ["fill"]
