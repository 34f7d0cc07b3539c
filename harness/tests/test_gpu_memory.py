"""The executors' shared GPU memory sized to what the GPU has free, and the parent's running out of GPU
memory said as an error of the machine, never a traceback.

Seen on an H100 (80 GB, 2026-12-06): rmsnorm's first evaluation with the peers in two processes made
arenas of 48 GiB (two 4 GiB sets an implementation on r65536-c16384: the candidate's, the baseline's,
and each peers' executor two peers' worth), and the parent's reference of that scenario (4 GiB more,
22 GiB of PyTorch memory in all) ran out of memory, with a traceback. The free-memory figure is a
stand-in here (the planner takes it as an argument); on the GPU it is cudaMemGetInfo's."""

import pytest
import torch

from harness.errors import EnvironmentProblem
from harness.executor.memory import SPREAD_ALIGN
from harness.task.model import load_task
from harness.timing import cuda_loop
from harness.timing.devices import out_of_memory

from .conftest import CPU_TASK, REPO

GIB = 1 << 30
RMSNORM = load_task(REPO / "kernels" / "rmsnorm")


class _Shape:
    def __init__(self, *shape):
        self.shape = shape


class _RmsOracle:
    """rmsnorm's shapes without making its inputs (only shapes size the arenas)."""

    def inputs(self, params, seed):
        return {"x": _Shape(params["rows"], params["cols"]), "w": _Shape(params["cols"])}

    def output_shapes(self, params):
        return {"y": (params["rows"], params["cols"])}


def _ctx():
    ctx = type("Ctx", (), {})()
    ctx.task, ctx.oracle, ctx.messages = RMSNORM, _RmsOracle(), []
    ctx.with_peers, ctx.has_baseline, ctx.has_incumbent = True, True, False
    return ctx


def _per_set(params):
    o = _RmsOracle()
    return cuda_loop.set_bytes(RMSNORM, {k: v.shape for k, v in o.inputs(params, 0).items()}, o.output_shapes(params))


def _total(need, lanes):
    return need["cand"] + need["ref"] + lanes * need["peer"]


def test_rmsnorm_on_an_h100_with_two_peers_processes_leaves_half_the_free_memory():
    ctx = _ctx()
    usual = cuda_loop.arena_bytes(ctx, RMSNORM.scenarios)
    assert ctx.slot_room is None
    free = 77 * GIB                     # an H100 once the parent's context and the peers' are made
    assert _total(usual, 2) > cuda_loop.ARENA_SHARE * free      # 48 GiB: what ran out of memory
    need = cuda_loop.arena_bytes(ctx, RMSNORM.scenarios, free, peer_lanes=2)
    assert _total(need, 2) <= cuda_loop.ARENA_SHARE * free
    assert ctx.slot_room is not None and f"sized to {cuda_loop.ARENA_SHARE * 100:.0f} %" in ctx.messages[-1]
    # Every scenario still gets a set an implementation, and its sets fit the arenas made for them.
    largest = max(RMSNORM.scenarios, key=lambda s: _per_set(s.params))
    assert largest.id == "r65536-c16384"
    for sc in RMSNORM.scenarios:
        per_set = _per_set(sc.params)
        pool = cuda_loop.scenario_pool(ctx, per_set)
        assert pool >= 1 and pool * cuda_loop.slot_footprint(per_set) <= need["cand"]
        assert pool * cuda_loop.slot_footprint(per_set) * len(RMSNORM.peers) <= need["peer"]
        # Only where the usual sets do not fit are there fewer of them.
        usual_pool = cuda_loop.scenario_pool(ctx, per_set, room=1 << 62)
        assert pool == usual_pool or usual_pool * cuda_loop.slot_footprint(per_set) > ctx.slot_room
    assert cuda_loop.scenario_pool(ctx, _per_set(largest.params)) == 1
    small = next(s for s in RMSNORM.scenarios if s.id == "r1-c1024")
    assert cuda_loop.scenario_pool(ctx, _per_set(small.params)) == cuda_loop.SETS_MAX


def test_where_the_usual_sets_fit_nothing_changes():
    ctx = _ctx()
    usual = cuda_loop.arena_bytes(ctx, RMSNORM.scenarios)
    # An H200 (139 GiB free) with two peers' processes; an H100 with the peers kept (no peers'
    # executor: 24 GiB).
    for free, lanes in ((139 * GIB, 2), (77 * GIB, 0)):
        assert cuda_loop.arena_bytes(ctx, RMSNORM.scenarios, free, lanes) == usual
        assert ctx.slot_room is None and not ctx.messages
    # An H100 with one peers' process: the usual 32 GiB ran the parent out of memory there (2026-12-06,
    # ceb3cad), so it gets fewer sets on the largest scenarios.
    assert _total(cuda_loop.arena_bytes(ctx, RMSNORM.scenarios, 77 * GIB, 1), 1) < _total(usual, 1)


def test_a_scenario_whose_single_set_does_not_fit_is_said_before_anything_starts():
    ctx = _ctx()
    with pytest.raises(EnvironmentProblem) as info:
        cuda_loop.arena_bytes(ctx, RMSNORM.scenarios, 40 * GIB, peer_lanes=2)
    text = str(info.value)
    assert "40.0 GiB free" in text and "1 scenario(s)" in text and "r65536-c16384" in text and "--scenarios" in text
    # A selection without it fits.
    rest = [s for s in RMSNORM.scenarios if not s.id.startswith("r65536-c16384")]
    assert cuda_loop.arena_bytes(ctx, rest, 40 * GIB, peer_lanes=2)["cand"] >= SPREAD_ALIGN


def test_out_of_memory_is_recognised_from_pytorch_and_from_the_driver():
    from harness.executor.cuda_driver import CudaError
    assert out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 4.00 GiB."))
    assert out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 2.00 MiB"))
    assert out_of_memory(CudaError("cuMemCreate failed: CUDA driver error 2 (out of memory)"))
    assert not out_of_memory(CudaError("cuMemCreate failed: CUDA driver error 1 (invalid argument)"))
    assert not out_of_memory(RuntimeError("shape mismatch"))
    assert not out_of_memory(ValueError("CUDA out of memory"))


@pytest.fixture
def oom_on(monkeypatch):
    """The correctness stage runs out of GPU memory on the scenario named; each stage's release counted."""
    from harness import correctness_stage
    from harness.timing import devices
    released, real = [], correctness_stage.run_correctness

    def run(ctx, scenario, entry, seeds):
        if scenario.id == oom_on.id:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has ...")
        return real(ctx, scenario, entry, seeds)

    monkeypatch.setattr(correctness_stage, "run_correctness", run)
    monkeypatch.setattr(devices.CpuDevice, "release", lambda self: released.append(1), raising=False)
    oom_on.released = released
    return oom_on


def test_running_out_of_memory_in_a_scenario_ends_the_evaluation_with_a_clear_error(oom_on, cache_dir):
    from harness.evaluate import Options, evaluate
    from harness.executor import handle
    before = set(handle._LIVE)
    oom_on.id = "r7-c33"
    with pytest.raises(EnvironmentProblem) as info:
        evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), scenarios="r64-c128,r7-c33",
                         cache_dir=cache_dir, with_peers=False))
    text = str(info.value)
    assert "ran out of memory in the harness's own process during the correctness of scenario r7-c33" in text
    assert "Tried to allocate 4.00 GiB" in text and "--scenarios" in text
    assert len(oom_on.released) == 2          # after each scenario's stage, the failed one too
    assert not handle._LIVE - before          # every executor closed


def test_the_command_line_says_it_and_exits_4_without_a_traceback(oom_on, run_cli):
    oom_on.id = "r7-c33"
    proc = run_cli("eval", "--task-dir", str(CPU_TASK), "--candidate", str(CPU_TASK / "baseline.cpp"),
                   "--scenarios", "r7-c33", "--no-peers", "--json", "-")
    assert proc.returncode == EnvironmentProblem.exit_code == 4
    assert proc.stderr.startswith("harness: error: the GPU ran out of memory") and "Traceback" not in proc.stderr
    assert proc.stdout == ""
