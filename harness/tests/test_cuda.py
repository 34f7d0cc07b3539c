"""CUDA path: the adversarial manifest over kernels/rmsnorm, the CUDA tasks' baselines, failure modes.

Candidates refused by the source or binary checks need only nvcc and run anywhere nvcc is installed.
Everything else needs a CUDA device and is skipped, with the reason, when there is none.
"""

import json
import shutil
from pathlib import Path

import pytest

from harness.adversarial.run import load_manifest, run_entry
from harness.build.compile import default_cache_dir
from harness.schema import validate_result

from .conftest import REPO, cuda_task

MANIFEST = REPO / "harness" / "adversarial" / "cuda" / "manifest.yaml"
TASK_DIR, ENTRIES = load_manifest(MANIFEST)
STATIC = [e for e in ENTRIES if e["stage"] in ("source", "binary")]
RUNTIME = [e for e in ENTRIES if e["stage"] == "runtime"]
# nvcc builds are slow; the compile cache is content-addressed (source, flags, compiler and harness
# versions), so the persistent default cache is as correct as a fresh one and spares minutes.
CUDA_CACHE = str(default_cache_dir())


def test_manifest_covers_all_thirteen_hacks():
    assert sorted({e["hack"] for e in ENTRIES if "hack" in e}) == list(range(1, 14))
    assert {e["file"] for e in ENTRIES} == {p.name for p in MANIFEST.parent.glob("*.cu")}


@pytest.mark.parametrize("entry", STATIC, ids=[e["file"] for e in STATIC])
def test_cuda_candidate_refused_before_running(entry, tmp_path):
    if not TASK_DIR.is_dir():
        pytest.skip("kernels/rmsnorm is not in this checkout")
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not installed: the CUDA candidates cannot be compiled here")
    out = run_entry(TASK_DIR, entry, Path(tmp_path), CUDA_CACHE)
    assert out["ok"], f"{entry['file']}: {out['why']}; first reason: {out['reason']}"


@pytest.mark.parametrize("entry", RUNTIME, ids=[e["file"] for e in RUNTIME])
def test_cuda_candidate_caught_at_run_time(entry, tmp_path):
    cuda_task("rmsnorm")
    out = run_entry(TASK_DIR, entry, Path(tmp_path), CUDA_CACHE)
    assert out["ok"], f"{entry['file']}: {out['why']}; first reason: {out['reason']}"


def _eval_cli(run_cli, task_dir, candidate, *extra):
    proc = run_cli("eval", "--task-dir", str(task_dir), "--candidate", str(candidate), "--json", "-",
                   "--cache-dir", CUDA_CACHE, *extra, cache=False)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert validate_result(result) == []
    return result


@pytest.mark.parametrize("task", ["rmsnorm", "flash_attn_fwd"])
def test_baseline_quick_eval(task, run_cli):
    task_dir = cuda_task(task)
    result = _eval_cli(run_cli, task_dir, task_dir / "baseline.cu", "--scenarios", "quick")
    assert result["status"] == "ok" and result["correct"], [s.get("reason") for s in result["scenarios"]]
    assert result["gpu"] and result["arch"] == "sm_90" and result["compile"]["registers"] > 0
    for s in result["scenarios"]:
        assert s["time_ms"] > 0 and s["baseline_ms"] > 0 and s["tflops"] > 0
        # every peer is either timed or says why not
        peers = set(s.get("peer_ms", {})) | set(s.get("peer_unsupported", {}))
        assert peers == set(result["summary"]["speedup_vs_peer_geomean"]) | set(s.get("peer_unsupported", {}))


@pytest.mark.parametrize("how", ["fresh", "first"])
def test_peers_measured_in_two_processes_read_as_the_mean_of_both(how, run_cli, tmp_path):
    # cuDNN's share of calls in its slower kernel mode is set per process (b2-h16-kv16-sq1000-sk113-d128-c0,
    # docs/harness-lab.md): the evaluation that measures the peers times each in two executors at once,
    # with --fresh-peers and as a host's first evaluation does (the peers kept, the candidate timed apart).
    task_dir = cuda_task("flash_attn_fwd")
    extra = ["--fresh-peers"] if how == "fresh" else ["--cache-dir", str(tmp_path / "data")]
    result = _eval_cli(run_cli, task_dir, task_dir / "baseline.cu", "--scenarios", "b2-h16-kv16-sq1000-sk113-d128-c0",
                       "--samples", *extra)
    assert result["status"] == "ok", [s.get("reason") for s in result["scenarios"]]
    assert {s["timing"]["peers"] for s in result["scenarios"]} == {"measured" if how == "fresh" else "measured apart"}
    executors = result["device_info"]["timing_clock"].get("executors", {})
    assert "peers" in executors and "peers-2" in executors, executors
    for s in result["scenarios"]:
        lanes = s["timing"]["peer_lanes_ms"]
        assert set(lanes) == set(s["peer_ms"]) and all(len(v) == 2 and all(x > 0 for x in v) for v in lanes.values())
        for p, (a, b) in lanes.items():     # the peer's figure lies between its two processes' figures
            assert min(a, b) * 0.99 <= s["peer_ms"][p] <= max(a, b) * 1.01, (p, a, b, s["peer_ms"][p])
        assert not any("~" in k for k in s["timing"].get("samples_ms", {})), "a lane left the timing loop"


RMS_SIG = ('#include <cuda_bf16.h>\n#include <cstdint>\n'
           'extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, '
           'int64_t rows, int64_t cols, float eps, cudaStream_t stream)')


def test_illegal_address_is_a_runtime_error(run_cli, candidate):
    task_dir = cuda_task("rmsnorm")
    path = candidate("#include <cuda_bf16.h>\n__global__ void bad(__nv_bfloat16* y) { y[-(1LL << 40)] = y[0]; }\n" + RMS_SIG +
                     " { bad<<<1, 1, 0, stream>>>(y); return 0; }\n", name="kernel.cu")
    result = _eval_cli(run_cli, task_dir, path, "--scenarios", "r128-c4096")
    assert result["status"] == "runtime_error"
    assert "illegal" in result["scenarios"][0]["reason"] or "CUDA" in result["scenarios"][0]["reason"]


def test_hanging_kernel_is_a_timeout(run_cli, candidate):
    task_dir = cuda_task("rmsnorm")
    path = candidate("__global__ void spin(int* f) { while (*(volatile int*)f == 0) {} }\n" + RMS_SIG +
                     " { static int* f = nullptr; if (!f) cudaMalloc(&f, 4); cudaMemsetAsync(f, 0, 4, stream);"
                     " spin<<<1, 1, 0, stream>>>(f); return 0; }\n", name="kernel.cu")
    result = _eval_cli(run_cli, task_dir, path, "--scenarios", "r128-c4096", "--call-timeout", "10")
    assert result["status"] == "timeout" and "no progress for 10 s" in result["scenarios"][0]["reason"]
