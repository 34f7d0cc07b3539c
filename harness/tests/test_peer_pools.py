"""A peer's own allocations (outputs, workspace) come from a pool per slot (harness/peer_pools.py).

Before: every call of a peer in the peers' executor took the block the caching allocator kept for
it, so the whole evaluation's calls wrote to the same memory, and the cuDNN peer's share of slow
calls (a placement costs about 10 % on a few-microsecond kernel on the H200) was the process's:
0.00, 0.50 and 0.00 in three evaluations of one scenario (docs/harness.md "Ninth session")."""

import types

import pytest
import torch

from harness.executor_timing import _message
from harness.peer_pools import PeerPools
from harness.task import load_task

from .conftest import CPU_TASK, HAS_CUDA, NO_CUDA_REASON

cuda = pytest.mark.skipif(not HAS_CUDA, reason=NO_CUDA_REASON)
HAS_POOLS = hasattr(torch.cuda, "use_mem_pool")


def test_a_peers_request_names_each_calls_slot():
    task = load_task(CPU_TASK)
    names = [a.name for a in task.args if a.kind == "tensor"]

    class Slot:
        def __init__(self, j):
            self.j = j

        def spec(self, name):
            return {"buf": 0, "off": 4096 * self.j, "dtype": "float32", "shape": [4], "name": name}
    ctx = types.SimpleNamespace(task=task)
    msg = _message(ctx, "peer:torch", [Slot(3), Slot(7)], {}, {"rows": 1})
    assert msg["places"] == [3, 7]
    assert [sorted(b) for b in msg["batch"]] == [sorted(names)] * 2


def test_without_use_mem_pool_calls_allocate_as_before():
    pools = PeerPools(torch)
    if HAS_POOLS:     # the GPU host's torch (2.11): the pools are there
        assert pools.active
        return
    # Debian's torch 1.13 here has no use_mem_pool: nothing is set up and the call is made as it is
    assert not pools.active
    assert pools.before("k", "p", 3, lambda: pytest.fail("no untimed call without pools")) is False
    assert pools.run(3, lambda: 42) == 42
    assert pools.placement(3) is None


def _alloc(nbytes, seen):
    def call():
        t = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        t.fill_(1)
        seen.append(t.data_ptr())
    return call


@cuda
def test_each_slot_allocates_from_a_pool_of_its_own():
    assert HAS_POOLS, f"torch {torch.__version__} has no torch.cuda.use_mem_pool"
    pools, made, seen = PeerPools(torch, count=8), [], []
    call = _alloc(1 << 20, seen)
    for place in range(16):
        made.append(pools.before("s1", "cudnn", place, call))
    assert made == [True] * 8 + [False] * 8      # one untimed call per pool, the first measuring
    assert pools.n == 8
    ptrs = {}
    for place in list(range(16)) * 2:
        seen.clear()
        pools.run(place, call)
        ptrs.setdefault(place % 8, set()).add(seen[0])
    # a pool keeps its block for its own calls, and no two pools share one
    assert all(len(v) == 1 for v in ptrs.values())
    assert len({next(iter(v)) for v in ptrs.values()}) == 8
    # the process's own allocator would have handed every call the same block
    plain = set()
    for _ in range(8):
        seen.clear()
        call()
        plain.add(seen[0])
    assert len(plain) == 1


@cuda
def test_a_second_peer_warms_each_pool_once_and_a_new_scenario_gets_new_pools():
    pools, seen = PeerPools(torch, count=4), []
    call = _alloc(1 << 20, seen)
    assert [pools.before("s1", "cudnn", p, call) for p in range(4)] == [True] * 4
    assert [pools.before("s1", "flash", p, call) for p in range(4)] == [True] * 4
    assert [pools.before("s1", "flash", p, call) for p in range(4)] == [False] * 4
    old = dict(pools.pools)
    assert pools.before("s2", "cudnn", 0, call) is True
    assert set(pools.pools) == {0} and pools.pools[0] is not old[0]


@cuda
def test_the_budget_bounds_how_many_pools_a_large_call_gets():
    pools, seen = PeerPools(torch, count=32, budget=64 << 20), []
    pools.before("big", "cudnn", 0, _alloc(24 << 20, seen))
    assert pools.n == 2     # 64 MiB hold two calls of 24 MiB
    assert pools.placement(5) == 1
