"""A peer allocates inside its call (its output, cuDNN's workspace) from torch's caching allocator,
which hands back the same address every call: one process's placement held for a whole evaluation.
The parent draws, for every timed call of a peer, a block for the peers' executor to hold across
the call (executor_cuda_timing.SHIFT_PAGES; executor.py `_spacer`), so the peer's allocations lie
elsewhere each round; the native implementations allocate nothing of the harness's and get none."""

import random
from types import SimpleNamespace

from harness import executor_cuda_timing as ect
from harness.executor import SPACER_MAX


class _Ex:
    def __init__(self):
        self.sent, self.running = [], None

    def request(self, msg):
        self.sent.append(msg)
        return {"rc": [0]}


def _ctx():
    dev = SimpleNamespace(flush=lambda: None, sync=lambda: None, busy_ms=lambda: 0.0)
    task = SimpleNamespace(args=[], peers=[("cudnn", "peer_cudnn")])
    return SimpleNamespace(cand=_Ex(), refx=_Ex(), peerx=_Ex(), device=dev, task=task)


def test_each_timed_peer_call_carries_a_block_of_its_own_and_native_calls_none():
    ctx = _ctx()
    timer = SimpleNamespace(rng=random.Random(3), scalars={}, params={})
    for _ in range(40):
        ect._call(ctx, "peer:cudnn", None, timer)
        ect._call(ctx, "candidate", None, timer)
    ect._call(ctx, "peer:cudnn", None, timer, pad=False, calls=3)       # the warm-up: no block
    shifts = [m.get("shift") for m in ctx.peerx.sent]
    assert shifts[-1] is None and all(m.get("shift") is None for m in ctx.cand.sent)
    drawn = shifts[:-1]
    assert all(d % 4096 == 0 and 4096 <= d <= ect.SHIFT_PAGES << 12 for d in drawn)
    assert len(set(drawn)) > 30                          # a placement of its own nearly every round
    assert ect.SHIFT_PAGES << 12 <= SPACER_MAX           # within what the executor accepts


def test_every_padded_call_carries_a_rotation_of_the_pad_drawn_anew():
    ctx = _ctx()
    timer = SimpleNamespace(rng=random.Random(5), scalars={}, params={})
    for _ in range(40):
        ect._call(ctx, "candidate", None, timer)
        ect._call(ctx, "peer:cudnn", None, timer)
    ect._call(ctx, "candidate", None, timer, pad=False, calls=3)        # the warm-up: no pad, no rotation
    drawn = [m["rotate"] for m in ctx.cand.sent[:-1]] + [m["rotate"] for m in ctx.peerx.sent]
    assert "rotate" not in ctx.cand.sent[-1]
    assert all(0 <= r < ect.ROTATE_RANGE for r in drawn) and len({r % 265 for r in drawn}) > 60
