"""A CUDA task's timing slots are spread over the room its arenas have left (memory.slot_stride):
each slot a round may draw lies on memory of its own, 2 MiB multiples apart, so that one placement's
cost (a tiny kernel's few lines, their DRAM banks and page walks, with L2 flushed) cannot hold for
every call of an implementation. Checked here on arenas whose memory is host memory (the layout is
the same arithmetic); the slots' views, poison and unwritten checks must see through the gaps."""

import random

import torch

from harness.executor.memory import SPREAD_ALIGN, CudaArena, slot_stride
from harness.executor.slots import make_slots
from harness.executor.shm import ALIGN
from harness.task.model import load_task

from .conftest import CPU_TASK

TASK = load_task(CPU_TASK)
SHAPES_IN = {"x": (7, 33)}
SHAPES_OUT = {"y": (7, 33)}


def _arena(size, zeros=True):
    arena = CudaArena.__new__(CudaArena)
    arena.drv, arena.size, arena.used, arena.live = None, size, 0, 0
    # (untouched pages of an empty one cost no memory: the larger arenas below are never written)
    arena.u8 = (torch.zeros if zeros else torch.empty)(size, dtype=torch.uint8)
    return arena


class _Ex:
    def __init__(self, arena):
        self.arena = arena


def _slots(executors, count):
    return make_slots(executors, TASK, SHAPES_IN, SHAPES_OUT, count, random.Random(0))


def test_slots_are_spread_as_far_as_every_arena_allows():
    cand, peers = _Ex(_arena(64 << 20)), _Ex(_arena(96 << 20))
    # the peers' arena holds two implementations' sets: 48 MiB each, 12 MiB a slot; the candidate's 16 MiB
    stride = slot_stride([cand, peers, peers], ALIGN * 2, 4)
    assert stride == 12 << 20 and stride % SPREAD_ALIGN == 0
    made = _slots({"candidate": cand, "peer:a": peers, "peer:b": peers}, 4)
    for slots in made.values():
        starts = [s.tensors["x"].data_ptr() for s in slots.slots]
        assert [b - a for a, b in zip(starts, starts[1:])] == [stride] * 3
    assert peers.arena.used <= peers.arena.size and cand.arena.used <= cand.arena.size


def test_outputs_are_poisoned_and_read_through_the_gaps():
    ex = _Ex(_arena(32 << 20))
    slots = _slots({"candidate": ex}, 3)["candidate"]
    slots.poison_outputs()
    assert slots.unwritten_outputs(slots.slots) == {0: ["y"], 1: ["y"], 2: ["y"]}
    slots.get(1).tensors["y"].fill_(1.0)
    assert slots.unwritten_outputs(slots.slots) == {0: ["y"], 2: ["y"]}
    gap = ex.arena.u8[slots.get(0).span[0] - ex.arena.u8.data_ptr() + ALIGN * 2:][:ALIGN]
    assert not gap.any()     # the gap after a slot is never written


def test_without_room_the_slots_are_packed():
    one = 2 * ALIGN
    ex = _Ex(_arena(4 * one))
    assert slot_stride([ex], one, 4) == one
    slots = _slots({"candidate": ex}, 4)["candidate"]
    starts = [s.tensors["x"].data_ptr() for s in slots.slots]
    assert [b - a for a, b in zip(starts, starts[1:])] == [one] * 3


def test_a_cpu_task_packs_its_slots():
    class _Cpu:
        arena = None
    assert slot_stride([_Cpu()], 8192, 16) == 8192


def test_a_small_scenario_gets_many_placements_each_2_mib_apart():
    # One placement costs a one-block kernel up to 8 % more or less than another (H200): with 32 slots
    # two evaluations of the same code read up to 4 % apart. A scenario of a few KiB now gets as many
    # slots as 2 MiB apiece allows in the budget (256 at most), and the arenas sized for them leave
    # room to keep every slot 2 MiB from the next.
    from harness.timing import cuda_loop as t
    ctx = type("Ctx", (), {})()
    ctx.task, ctx.with_peers, ctx.has_baseline, ctx.has_incumbent = TASK, False, True, False
    per_set = t.set_bytes(TASK, SHAPES_IN, SHAPES_OUT)
    pool = t.scenario_pool(ctx, per_set)
    assert pool == t.SETS_MAX == 256
    assert t.pool_size(per_set, 8) == (2 << 30) // (8 * SPREAD_ALIGN) == 128
    assert t.pool_size(64 << 20, 4) == 8 and t.pool_size(4 << 30, 4) == t.SETS_MIN
    ctx.oracle = type("O", (), {"inputs": lambda self, p, s: {"x": torch.zeros(SHAPES_IN["x"])},
                                "output_shapes": lambda self, p: SHAPES_OUT})()
    need = t.arena_bytes(ctx, [type("S", (), {"params": {}})()])
    assert need["cand"] == need["ref"] == pool * SPREAD_ALIGN
    cand, ref = _Ex(_arena(need["cand"], zeros=False)), _Ex(_arena(need["ref"], zeros=False))
    made = _slots({"candidate": cand, "baseline": ref}, pool)
    for slots in made.values():
        starts = [s.tensors["x"].data_ptr() for s in slots.slots]
        assert len(set(starts)) == pool and min(b - a for a, b in zip(starts, starts[1:])) >= SPREAD_ALIGN


class _TableEx(_Ex):
    """An executor with an arena that keeps the bound's tables it is sent."""

    def __init__(self, arena):
        super().__init__(arena)
        self.tables, self.running = [], None

    def request(self, msg):
        assert msg["cmd"] == "table"
        self.tables.append(msg["batch"])
        return {}


def test_the_bounds_batches_get_slots_of_their_own_where_the_rounds_had_few():
    # A large scenario's rounds get 3 sets an implementation (the budget over every implementation and
    # peer), while each arena is sized for a larger scenario's: the bound's batches (the candidate and
    # the baseline only) get as many slots as the arenas hold, up to what is wanted, and the rounds'
    # sets come back, the chain's cycle the same, once the bound is done.
    from harness.timing import bound, cuda_loop as t
    one = t.slot_footprint(t.set_bytes(TASK, SHAPES_IN, SHAPES_OUT))
    cand, ref = _TableEx(_arena(20 * one, zeros=False)), _TableEx(_arena(20 * one, zeros=False))
    ctx = type("Ctx", (), {})()
    ctx.task, ctx.cand, ctx.refx = TASK, cand, ref
    ctx.opts = type("O", (), {"bound_batch": True})()      # the bound's own slots are batch mode's
    timer = type("T", (), {"rng": random.Random(1), "scalars": {"rows": 7, "cols": 33}})()
    sets = _slots({"candidate": cand, "baseline": ref}, 3)
    chain = bound.send_tables(ctx, TASK, sets, ["candidate", "baseline"], timer.scalars)
    assert chain is not None and len(cand.tables[-1]) == 6, "3 slots and their chained argument lists"
    room = t.BoundRoom(ctx, sets, SHAPES_IN, SHAPES_OUT, timer, 3)
    job = bound.Job(ctx, timer, sets, None, None, None, 0, chain, room)
    assert room.room(["candidate", "baseline"]) == 20
    assert room.widen(job, ["candidate", "baseline"], 12)
    assert len(sets["candidate"].slots) == len(sets["baseline"].slots) == 12 and job.sets is sets
    assert len(job.chain.order) == 12 and len(cand.tables[-1]) == len(ref.tables[-1]) == 24
    starts = [s.tensors["x"].data_ptr() for s in sets["candidate"].slots]
    assert min(b - a for a, b in zip(starts, starts[1:])) >= one, "spread as the rounds' are"
    room.restore(job)
    assert len(sets["candidate"].slots) == 3 and job.chain.order == chain.order and len(cand.tables[-1]) == 6
    assert cand.arena.live == 1 and ref.arena.live == 1, "the bound's slots given back"
    # an arena that holds no more than the rounds' sets: nothing to widen
    small = _TableEx(_arena(3 * one, zeros=False))
    ctx.cand = small
    sets2 = _slots({"candidate": small, "baseline": ref}, 3)
    room2 = t.BoundRoom(ctx, sets2, SHAPES_IN, SHAPES_OUT, timer, 3)
    assert not room2.widen(bound.Job(ctx, timer, sets2, None, None, None, 0, None, room2), ["candidate", "baseline"], 12)
    assert len(sets2["candidate"].slots) == 3


def test_in_batch_mode_the_bounds_arenas_hold_its_slots_on_every_scenario():
    # rmsnorm's quick set on the H200: the arenas were sized by r65536-c2048's two rounds' sets (1 GiB),
    # so r4096-c8192's bound had 8 slots and r65536-c2048's two. In batch mode the candidate's, the
    # baseline's and the incumbent's arenas hold BOUND_BYTES of a scenario's slots; the peers' do not.
    from harness.timing import cuda_loop as t
    ctx = type("Ctx", (), {})()
    ctx.task, ctx.with_peers, ctx.has_baseline, ctx.has_incumbent = TASK, True, True, False
    ctx.task = type("T", (), {"peers": [("a", None), ("b", None)], "args": TASK.args})()
    ctx.messages = []
    big = 512 << 20
    per_sets = [(None, big)]
    plain = t._arena_need(ctx, per_sets, 2, None)
    ctx.opts = type("O", (), {"bound_batch": True})()
    batch = t._arena_need(ctx, per_sets, 2, None)
    assert plain["cand"] == t.SETS_MIN * big
    assert batch["cand"] == batch["ref"] == t.BOUND_BYTES and batch["peer"] == plain["peer"]
    assert t.BOUND_BYTES // big >= 1 + 7, "r65536-c2048: K = 7 at least"
    # a room (the GPU's free memory shared out) caps it; a scenario whose three slots pass BOUND_BYTES
    # keeps the rounds' sets (its bound makes single calls)
    capped = t._arena_need(ctx, per_sets, 2, 3 * big)
    assert capped["cand"] == 3 * big
    assert t.bound_bytes(4 << 30) == 0 and t._arena_need(ctx, [(None, 4 << 30)], 2, None)["cand"] == 2 * (4 << 30)


def test_one_seeds_inputs_go_into_many_slots_at_once():
    # Timer.fresh_slots (the bound's batches): one copy per input over the slots' stacked copies, through
    # the gaps between spread slots; the outputs poisoned; the slots not chosen untouched
    from harness.task.tolerance import unwritten
    from harness.timing.loop import Timer
    ex = _Ex(_arena(64 << 20))
    slots = _slots({"candidate": ex}, 6)["candidate"]
    for s in slots.slots:
        s.tensors["x"].fill_(-5.0)
        s.tensors["y"].fill_(1.0)
    x = torch.randn(SHAPES_IN["x"])
    oracle = type("O", (), {"inputs": lambda self, p, seed: {"x": x * seed}})()
    ctx = type("Ctx", (), {"task": TASK, "oracle": oracle})()
    ctx.task = type("T", (), {"inputs": TASK.inputs, "scalar_values": lambda self, sc: {}})()
    timer = Timer(ctx, type("S", (), {"params": {}})(), 3, random.Random(0))
    chosen = [slots.get(j) for j in (4, 1, 2)]
    assert timer.fresh_slots({"candidate": chosen}) == 3 and timer.seed_next == 4
    for s in chosen:
        assert torch.equal(s.tensors["x"], x * 3) and bool(unwritten(s.tensors["y"]).all())
    for j in (0, 3, 5):
        assert bool((slots.get(j).tensors["x"] == -5.0).all()) and bool((slots.get(j).tensors["y"] == 1.0).all())
