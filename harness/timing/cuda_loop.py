"""Side-by-side timing of a CUDA task through executors; the parent bounds every figure it is told.

One round times every implementation once, in a shuffled order, each in its own executor (the
candidate's, its twin running the baseline, the peers'). Before each call the parent writes that
round's inputs (one new seed for all) and poison into one of the implementation's 2-4 sets in its
shared arena, flushes L2 from its own context and synchronises; then it reads its clock, sends
"call" and reads the clock again on "done".

What the executor does and reports (executor/process.py, `_timed_gpu`): the harness's pad (every SM's thread
slots held for PAD_MS) and a start event on the legacy stream, the call, an end event on the legacy
stream (which waits for every blocking stream's work), a synchronised device, the event time. That
time is the candidate's process speaking, so it only counts within what the parent sees itself:

- the tail: an event the executor records once the whole device is idle, after the end event; work
  that ran on past the end event (a stream that does not wait for the legacy stream) lengthens it.
  GPU-timed, it is steadier than the wall clock, so its margin is a few microseconds.
- `wall - event` (the request's own cost: the pad, Python, the socket, the synchronisation) is the
  same code for every executor; the candidate's median may exceed the baseline's by no more than a
  margin. Work outside the events (a stream that does not synchronise with the legacy one, a forged
  time, a patched clock) shows here, whatever its form.
- the GPU must be idle once the executor answered: the parent runs a tiny kernel of its own right
  after "done" and times it (`busy_ms`). Contexts of different processes do not run at once, so
  work the candidate left running delays it; its median may exceed the one after the baseline's
  calls by no more than a margin.
- outputs are read by the parent from its own mapping: poison left in any call is a failure, and a
  reservoir of calls drawn from a secret seed is value-checked after the loop.
- device-wide state a call leaves (persisting L2, class 9) is checked and reset after every call by
  the executor and reported; anything found rejects the candidate. The executor's check is the
  candidate's process speaking too: the parent resets persisting lines and reads the set-aside from
  its own context before every flush (l2_guard.py, through devices.CudaDevice).
- all of the above are bounds on what the executor says around its own figures; since issue 39 the
  figures themselves are bounded from below by the parent's clock around lean calls beside the
  baseline's (bound.py): a figure under that floor is raised to it, far under it rejected.
"""

import random
import time

from . import bound, nvml

from ..errors import EnvironmentProblem, fail
from ..executor.calls import device_findings
from ..executor.cupti_activity import FRONT_END_GAP_MS
from ..executor.handle import ChildFailure
from ..executor.lanes import merge, merged_ms
from ..executor.memory import SPREAD_ALIGN
from ..executor.shm import layout
from ..executor.slots import make_slots
from .event_offsets import corrected
from .laps import Laps
from .loop import (SET_BUDGET_BYTES, Rechecks, Timer, definite_failures, drop_unsupported_peers, executors, figures,
                   implementations, keep_samples, peer_processes, taken, timing_entry, _after_candidate, _executor,
                   _message)
from .rounds import Deck, Pinning, done
from .stats import TRIMMED_MEAN, median, median_ci

PAD_MS = 0.1
# How a CUDA scenario's rounds make each implementation's time: a span is the GPU's own record of a
# call, so its cost per call is a mean (stats.trimmed_mean); the stopping rules, the figures and the
# kept peers' figures (keyed by its name, evaluate.py) all take it from here.
FIGURE = TRIMMED_MEAN
# The peers' calls go through PyTorch's dispatch (SDPA picks and plans a backend) before their kernel
# is queued: on the H200 the flash peer's smallest scenarios read 2.8-5.4 us over CUPTI with a
# 0.1 ms pad, the kernel arriving after the pad had ended; a longer pad keeps that out of the time.
# 0.4 ms was not enough on 2026-12-02: cuDNN's SDPA calls took 345-357 us of the host from the pad's
# launch to their return (timing.host_ms), 1-3 calls of 20 outran the pad, and the GPU idled 0.8 us
# longer between cuDNN's memset and its kernel than in a plain process (tools/lab/cupti_fidelity.py).
# Only the peers' evaluations pay it (their figures are kept per GPU afterwards).
PEER_PAD_MS = 1.0
# How much more the candidate's requests may cost outside its events, and how much longer the GPU
# may stay busy after its answers, than the baseline's (median over the loop), with a margin
# relative to the kernel for long kernels. Measured on the H200 (2026-12-01, docs/harness-lab.md): a
# request costs 0.53-0.76 ms beyond its events and, for identical code, the two executors' medians
# differed by -186 to +187 us over 80 flash_attn_fwd scenarios of 10-60 calls; so the wall bound is
# coarse: it catches a forged or unmeasured time above 0.15 ms a call (and only once the interval of
# the paired differences is past it), the tail catches the other ways work escapes the events, and
# the roofline check flags what is faster than the GPU can be.
EXCESS_MARGIN_MS = 0.15
BUSY_MARGIN_MS = 0.02
# The tail (end event -> an event recorded once the host saw the device idle) is GPU-timed and so
# much steadier than the wall clock: a few microseconds of host wake-up for every executor.
TAIL_MARGIN_MS = 0.005
# With CUPTI's records as the figures: the events hold the span plus the launch and event latencies on
# either side (2.3 us on the H200, within 0.4 us whatever the kernel, docs/harness-lab.md); host work
# before the first launch or after the last, or a span written smaller than the GPU recorded, widens
# that gap. Paired with the baseline's, the candidate's may exceed it by this much.
GAP_MARGIN_MS = 0.003
# How much more of the gaps between its records the candidate's figure may leave out than the
# baseline's (_hold_excuse): one gap's allowance.
EXCUSED_MARGIN_MS = FRONT_END_GAP_MS
RELATIVE_MARGIN = 0.1
# Sets (slots) each implementation's rounds draw from at random, as many as SET_BUDGET_BYTES allows,
# each taking at least SPREAD_ALIGN of it: spread over the arena (memory.slot_stride), each is
# a placement of its own, and the more a round draws from, the less the placements an evaluation
# happens to get weigh in its median. On the H200 a one-block rmsnorm kernel's calls cost up to 8 %
# more or less on one placement than on another, the same in every process (cupti_fidelity's
# placements); with 32 slots two evaluations of the same code read up to 4 % apart on those
# scenarios (docs/harness-lab.md, "Fifth session"). 256 at most: 512 MiB an implementation for the
# smallest scenarios.
SETS_MIN, SETS_MAX = 2, 256


def slot_footprint(per_set):
    """What one slot takes of the budget and of an arena: its bytes, and at least SPREAD_ALIGN."""
    return max(per_set, SPREAD_ALIGN)


def set_bytes(task, shapes_in, shapes_out):
    specs = [(a.name, a.dtype, shapes_in[a.name] if a.role == "input" else shapes_out[a.name])
             for a in task.args if a.kind == "tensor"]
    return layout(specs)[1]


def pool_size(per_set, n_impls):
    return max(SETS_MIN, min(SETS_MAX, SET_BUDGET_BYTES["cuda"] // (slot_footprint(per_set) * n_impls)))


def scenario_pool(ctx, per_set, room=None):
    """How many sets each implementation cycles through on a scenario. Sized for every implementation
    the evaluation may time, even when fewer run (the peers' figures kept, an incumbent that did not
    start), so that the sets always fit the arenas sized before anything started (arena_bytes); no
    more than `room` (ctx.slot_room: bytes an implementation, where the GPU's free memory set one)
    holds, and 0 when not even one set fits in it."""
    n_impls = (1 + (1 if ctx.has_baseline else 0) + (1 if ctx.has_incumbent else 0) +
               (len(ctx.task.peers) if ctx.with_peers else 0))
    pool = pool_size(per_set, n_impls)
    room = getattr(ctx, "slot_room", None) if room is None else room
    return pool if room is None else min(pool, room // slot_footprint(per_set))


# What the executors' shared arenas may take of the GPU memory free when the evaluation starts. The
# rest is for what the parent computes (the references: on an H100, 22 GiB of PyTorch memory for
# rmsnorm's largest scenario, 5.5 times its set), the executors' contexts and allocator pools, and the
# peers' own temporaries (PyTorch in each peers' process). At two sets an implementation, rmsnorm's
# arenas took 48 GiB with the peers in two processes and the parent ran out of memory on the H100
# (2026-12-06): where they would take more than this share, each implementation gets fewer sets on
# the largest scenarios (one at least), the rest unchanged; on the H200 nothing changes. At half, the
# H100 ran out again with the peers in one process (2026-12-06, ceb3cad): 32 GiB of arenas, the parent
# 28 GiB held (16 in tensors) for r65536-c16384's reference, 3.8 GiB free when it asked for 4 more.
ARENA_SHARE = 0.35
GIB = float(1 << 30)


def arena_bytes(ctx, scenarios, free_bytes=None, peer_lanes=0):
    """How much shared GPU memory each executor needs for the largest scenario: the timing sets of
    every implementation it runs (the correctness trials need one set, which the timing reuses).
    `free_bytes`: the GPU's free memory now, `peer_lanes`: how many peers' executors will start (each
    gets a "peer" arena). Where the arenas would take more than ARENA_SHARE of `free_bytes`, sets a
    room per implementation (ctx.slot_room) that fits; raises EnvironmentProblem when a scenario's
    single set per implementation does not. ctx.arena_total: the arenas' bytes together."""
    per_sets = []
    for scenario in scenarios:
        inputs = ctx.oracle.inputs(scenario.params, 0)
        per_sets.append((scenario, set_bytes(ctx.task, {k: tuple(v.shape) for k, v in inputs.items()},
                                             ctx.oracle.output_shapes(scenario.params))))
        del inputs
    n_peers = len(ctx.task.peers) if ctx.with_peers else 0
    # Arenas of one implementation's room each: the candidate's, the baseline's, the incumbent's, and
    # each peers' executor's, which holds every peer's slots.
    rooms = 2 + (1 if ctx.has_incumbent else 0) + peer_lanes * max(1, n_peers)

    def total(need):
        return need["cand"] + need["ref"] + (need["inc"] if ctx.has_incumbent else 0) + peer_lanes * need["peer"]
    ctx.slot_room = None
    need = _arena_need(ctx, per_sets, n_peers, None)
    ctx.arena_total = total(need)
    if free_bytes is None or ctx.arena_total <= ARENA_SHARE * free_bytes:
        return need
    room = int(ARENA_SHARE * free_bytes) // rooms
    tight = sorted(((per_set, sc.id) for sc, per_set in per_sets if scenario_pool(ctx, per_set, room) < 1),
                   reverse=True)
    if tight:
        raise EnvironmentProblem(
            f"the GPU has {free_bytes / GIB:.1f} GiB free: the executors' shared memory may take "
            f"{ARENA_SHARE * 100:.0f} % of it ({room / GIB:.1f} GiB for each of {rooms} implementations' sets; "
            f"the rest is for the reference and the executors' own work), and {len(tight)} scenario(s) need "
            f"more for a single set: {', '.join(f'{sid} {b / GIB:.1f} GiB' for b, sid in tight[:5])}"
            f"{' ...' if len(tight) > 5 else ''}; select fewer scenarios (--scenarios), time the peers in fewer "
            f"processes (--peer-processes 1) or use a GPU with more free memory")
    usual, ctx.slot_room = ctx.arena_total, room
    need = _arena_need(ctx, per_sets, n_peers, room)
    ctx.arena_total = total(need)
    ctx.messages.append(f"timing: the executors' shared memory sized to {ARENA_SHARE * 100:.0f} % of the GPU's "
                        f"{free_bytes / GIB:.1f} GiB free ({ctx.arena_total / GIB:.1f} GiB, {usual / GIB:.1f} at the "
                        f"usual sets): fewer sets an implementation on the scenarios whose sets take over "
                        f"{room / GIB:.2f} GiB")
    return need


# Batch mode's bound requests (bound.measure_batch) want K + 1 slots of the candidate, the baseline and
# the incumbent on every scenario, K up to 2 ms of calls, where the rounds' sets give a large scenario
# two or three (SET_BUDGET_BYTES over every implementation and peer): on the H200 rmsnorm's quick set
# sized the arenas at 1 GiB, r4096-c8192 got 8 slots and r65536-c2048 two (single calls, a 0.1 ms
# margin), and a forger at 0.6 kept its gain there (docs/harness-lab.md, 2026-12-06, fourth run). So
# in batch mode those three arenas hold at least BOUND_BYTES of any scenario's slots (up to the K + 1
# of the largest batch, and at least 1 + BATCH_CALLS_MIN slots, or none past the rounds' where that is
# more than BOUND_BYTES), which cuda_loop.BoundRoom lends the bound: about 1 ms of memory-bound calls
# on an H200 (a slot read and written once a call). The peers' arenas are not the bound's.
BOUND_BYTES = 4 << 30


def bound_bytes(per_set, room=None):
    """The bytes of slots batch mode's bound wants of an arena on a scenario of `per_set` bytes, within
    `room` (bytes an implementation) where one is set."""
    one = slot_footprint(per_set)
    count = min(bound.BATCH_CALLS_MAX + 1, (BOUND_BYTES if room is None else min(BOUND_BYTES, room)) // one)
    return count * one if count >= 1 + bound.BATCH_CALLS_MIN else 0


def _arena_need(ctx, per_sets, n_peers, room):
    need = {"cand": 0, "ref": 0, "inc": 0, "peer": 0}
    batch = getattr(getattr(ctx, "opts", None), "bound_batch", False)
    for _, per_set in per_sets:
        room_s = scenario_pool(ctx, per_set, room) * slot_footprint(per_set)     # the slots, spread apart
        own = max(room_s, bound_bytes(per_set, room)) if batch else room_s
        need["cand"] = max(need["cand"], own)
        need["ref"] = max(need["ref"], own)
        need["inc"] = max(need["inc"], own)
        need["peer"] = max(need["peer"], room_s * max(1, n_peers))
    return need


def run_timing(ctx, scenario, entry, seed_base, rng):
    task = ctx.task
    impls = implementations(ctx)
    kept = getattr(ctx, "kept_peers", {}).get(scenario.id)
    if kept:      # the peers' figures from an earlier evaluation on this GPU (harness/timing/peer_figures.py)
        impls = [n for n in impls if not n.startswith("peer:")]
    timer = Timer(ctx, scenario, seed_base, rng)
    probe = ctx.oracle.inputs(scenario.params, seed_base)
    shapes_in = {k: tuple(v.shape) for k, v in probe.items()}
    shapes_out = ctx.oracle.output_shapes(scenario.params)
    del probe
    pool = scenario_pool(ctx, set_bytes(task, shapes_in, shapes_out))
    policy, unsupported, sets = dict(task.timing), dict(kept["unsupported"]) if kept else {}, {}
    policy["own_times"] = True    # rounds.done: the times themselves known before an early stop
    # rounds.done: a verdict settled before min_reps, every call inside the bounds, the kept peers' too
    policy["early"] = getattr(getattr(ctx, "opts", None), "early_stop", True)
    policy["early_guard"], policy["early_fixed"] = bounds_clear, _fixed(kept)
    policy["figure"] = FIGURE
    if getattr(ctx, "peer_figures", None) is not None and not kept:
        # The peers' figures measured here are kept for every later evaluation on this GPU: each is
        # measured to the target on its own figure too, for up to KEPT_FACTOR x the scenario's time.
        policy["kept"] = [n for n in impls if n.startswith("peer:")]
        policy["kept_seconds"] = KEPT_FACTOR * policy["max_seconds"]
    pin = Pinning([0] + [ex.pid for ex in executors(ctx)])
    try:
        sets.update(make_slots({name: _executor(ctx, name) for name in impls}, task, shapes_in, shapes_out, pool,
                               timer.rng))
        drop_unsupported_peers(ctx, timer, impls, sets, unsupported)
        # The slots' argument lists for the bound requests (harness/timing/bound.py), once.
        chain = bound.send_tables(ctx, task, sets, [n for n in impls if not n.startswith("peer:")], timer.scalars)
        room = BoundRoom(ctx, sets, shapes_in, shapes_out, timer, pool)
        # Lazy loading, clocks, caches: not counted, and so one request of warmup_reps calls an
        # implementation, with no flush or pad between them.
        pin.round(timer.rng)
        for name in impls:
            bs = sets[name].get(0)
            timer.fresh(bs)
            _call(ctx, name, bs, timer, pad=False, calls=max(1, policy["warmup_reps"]))
        def rounds(names, policy, unsupported, kept):
            out = _loop(ctx, timer, entry, names, sets, pool, policy, scenario, seed_base, pin, unsupported, False,
                        kept, chain, room)
            if out is not RECHECK:
                return out
            # A bound that fires on identical-looking noise (one executor's requests slower for a few
            # rounds) is confirmed by a second loop of its own; its figures are the ones reported.
            return _loop(ctx, timer, entry, names, sets, pool, policy, scenario, seed_base, pin, unsupported, True,
                         kept, chain, room)

        first = rounds(impls, policy, unsupported, kept)
        apart = _apart(ctx, scenario, impls, policy, entry)
        if apart is None:
            return first
        # --peers-apart: the candidate's figures from rounds of its own against the figures just kept
        own, kept_now, policy_now = apart
        policy_now["early_fixed"] = _fixed(kept_now)
        measured = peers_rounds(entry.get("timing"))
        out = rounds(own, policy_now, dict(kept_now["unsupported"]), kept_now)
        if isinstance(entry.get("timing"), dict):
            entry["timing"]["peers"] = "measured apart"
            for key, by in measured.items():     # the rounds and processes the kept figures were made of
                entry["timing"].setdefault(key, {}).update(by)
        return out
    finally:
        pin.restore()
        for s in sets.values():
            s.close()


class BoundRoom:
    """Slots of their own for the bound's batches (bound.judge), where the rounds' sets hold fewer than a
    batch wants: on a large scenario the rounds get a few sets (SET_BUDGET_BYTES over every
    implementation, the peers' too), while each arena is sized for the largest scenario's sets and the
    bound pairs only the candidate, the baseline and the incumbent. widen() gives those implementations'
    round sets back to their arenas and makes as many slots as the arenas hold, up to what is wanted,
    spread as the rounds' are; restore() makes the rounds' sets again (their values are always fresh
    before a call) with the same chain's cycle, for a confirming loop. The bound's tables are sent
    again each time (bound.send_tables)."""

    def __init__(self, ctx, sets, shapes_in, shapes_out, timer, pool):
        self.ctx, self.sets, self.shapes_in, self.shapes_out = ctx, sets, shapes_in, shapes_out
        self.timer, self.pool, self.widened, self.order = timer, pool, None, None
        self.one = slot_footprint(set_bytes(ctx.task, shapes_in, shapes_out))     # a slot's bytes in an arena

    def room(self, names):
        """Slots each of `names` could hold once its rounds' set is given back (0 without an arena)."""
        free = []
        for n in names:
            arena = getattr(_executor(self.ctx, n), "arena", None)
            if arena is None:
                return 0
            # an arena is carved in order and reused whole once no set is live: with the rounds' set the
            # only one live, all of it; else what lies past the sets
            free.append(arena.size if arena.live <= 1 else arena.size - arena.used)
        return min(free) // self.one

    def widen(self, job, names, want):
        """Whether `names` now have more slots than the rounds' (job.sets and job.chain follow)."""
        count = min(want, self.room(names))
        if count <= min(len(self.sets[n].slots) for n in names):
            return False
        self.order = job.chain.order if job.chain is not None else None
        self._make(job, names, count, None)
        self.widened = names
        return True

    def restore(self, job):
        if self.widened:
            names, self.widened = self.widened, None
            self._make(job, names, self.pool, self.order)

    def _make(self, job, names, count, order):
        for n in names:
            self.sets.pop(n).close()
        self.sets.update(make_slots({n: _executor(self.ctx, n) for n in names}, self.ctx.task, self.shapes_in,
                                    self.shapes_out, count, self.timer.rng))
        job.chain = bound.send_tables(self.ctx, self.ctx.task, self.sets, names, self.timer.scalars, order)


def _fixed(kept):
    """{peer:NAME: kept figure, ms}: what the candidate's rounds are paired with after the loop."""
    return {f"peer:{p}": ms for p, ms in (kept or {}).get("ms", {}).items()}


def _apart(ctx, scenario, impls, policy, entry):
    """(`impls` without the peers, the peers' figures the loop just kept, the policy for rounds against
    them) when --peers-apart asks for the candidate's rounds again: the loop measured the peers and
    kept them, and the scenario is still ok. None otherwise."""
    if not getattr(ctx, "peers_apart", False) or not policy.get("kept") or entry.get("status") != "ok":
        return None
    kept_now = ctx.peer_figures.get(scenario, [p for p, _ in ctx.task.peers])
    if kept_now is None:      # not kept (a peer failed, or another clock): the loop's figures stand
        return None
    policy_now = {k: v for k, v in policy.items() if k not in ("kept", "kept_seconds")}
    return [n for n in impls if not n.startswith("peer:")], kept_now, policy_now


def peers_rounds(timing):
    """What a scenario's timing kept of its peers, by key: their rounds (`eval --samples`: samples_ms
    and the rest) and each of their processes' figures (peer_lanes_ms). An evaluation that times the
    candidate apart keeps what its peers' figures were made of."""
    if not isinstance(timing, dict):
        return {}
    out = {}
    for key in ("samples_ms", "samples_slot", "samples_idle_ms", "samples_span_ms"):
        by = {name: v for name, v in (timing.get(key) or {}).items() if name.startswith("peer:")}
        if by:
            out[key] = by
    if timing.get("peer_lanes_ms"):
        out["peer_lanes_ms"] = dict(timing["peer_lanes_ms"])
    return out


# How long the rounds may go on, in the task's max_seconds, for a peer's figure that will be kept
# (rounds.done): only the first evaluation on a host pays it.
KEPT_FACTOR = 2

RECHECK = object()
# A throttled sample counts as capped below this fraction of the GPU's maximum SM clock.
CAPPED_CLOCK = 0.97


def capped(sample, dev):
    """Whether an NVML sample says the GPU ran held well below its clock (power, thermal)."""
    if not nvml.throttled(sample.get("reasons") or ()):
        return False
    top = getattr(dev, "max_sm_mhz", None)
    return not (top and sample.get("sm_mhz")) or sample["sm_mhz"] < CAPPED_CLOCK * top


def _call(ctx, name, bs, timer, pad=True, calls=1, costs=None):
    """(reply, wall ms, busy ms) of one call: flushed, synchronised, timed from here. pad=False: the
    warm-up's `calls` calls, in one request. `costs` (a Laps) adds the parent's time by phase."""
    ex = _executor(ctx, name)
    tf = time.perf_counter_ns()
    ctx.device.flush()
    ctx.device.sync()
    ex.running = name
    t0 = time.perf_counter_ns()
    # The CPU loop's request (one set here, `calls` times), with the pad before the call's events.
    pad_ms = _pad_ms(name) if pad else 0.0
    reply = ex.request(dict(_message(ctx, name, [bs] * calls, timer.scalars, timer.params), pad_ms=pad_ms))
    t1 = time.perf_counter_ns()
    ex.running = None
    busy = ctx.device.busy_ms()
    if costs is not None:
        costs.add("flush", (t0 - tf) / 1e6)
        costs.add("request", (t1 - t0) / 1e6)
        costs.add("busy", (time.perf_counter_ns() - t1) / 1e6)
    return reply, (t1 - t0) / 1e6, busy


def _event_ms(reply, name, key="ms"):
    ms = reply.get(key)
    if not isinstance(ms, list) or len(ms) != 1 or not isinstance(ms[0], (int, float)) or not ms[0] >= 0:
        raise ChildFailure("forged", f"a reply with a malformed time ({key}: {str(ms)[:80]})", name)
    return float(ms[0])


def _loop(ctx, timer, entry, impls, sets, pool, policy, scenario, seed_base, pin, unsupported, confirming, kept,
          chain=None, room=None):
    task, rng = ctx.task, timer.rng
    rcs = {}
    samples = {n: {"ms": [], "event_ms": [], "span_ms": [], "work_ms": [], "wall_ms": [], "excess_ms": [], "busy_ms": [],
                   "tail_ms": [], "lead_ms": [], "idle_ms": [], "host_ms": [], "before_ms": [], "slot": []}
               for n in impls}
    offsets = getattr(ctx, "event_offsets", None) or {}
    rechecks = Rechecks(ctx, timer.params)
    cand_reps = 0
    clocks, dropped = [], 0
    t_start = time.monotonic()
    decks = {name: Deck(rng, pool) for name in impls}
    costs, rounds = Laps(), 0
    lanes = peer_processes(ctx)
    while True:
        rounds += 1
        chosen = {name: sets[name].get(decks[name].draw()) for name in impls}
        seed = timer.fresh(*chosen.values())
        order = list(impls)
        rng.shuffle(order)
        pin.round(rng)      # every implementation of a round on the same core (as on the CPU)
        costs.lap("inputs")
        for name in order:
            reply, wall, busy = _call(ctx, name, chosen[name], timer, costs=costs)
            costs.lap()
            if not taken(reply, name, 1, impls, samples, unsupported, rcs):
                continue
            found = device_findings(reply)
            if name == "candidate":
                # The parent's own reading of the device's persisting-L2 set-aside (l2_guard.py): the
                # executor's report above is the candidate's process speaking.
                changed = getattr(ctx.device, "persisting_changed", lambda: None)()
                found += [changed] if changed else []
            if found and name == "candidate":
                return fail(entry, "rejected", "during timing: " + "; ".join(found))
            ms = _event_ms(reply, name)
            s = samples[name]
            span = _span_ms(reply)
            work = _work_ms(reply, span)
            s["event_ms"].append(ms)
            s["span_ms"].append(span)
            s["work_ms"].append(work)
            # The stopping rule's figure; the scenario's are chosen from one clock at the end (choose_clock).
            s["ms"].append(work if work is not None else _event_figure(offsets, name, ms))
            s["wall_ms"].append(wall)
            s["excess_ms"].append(wall - ms)
            s["busy_ms"].append(busy)
            s["tail_ms"].append(_event_ms(reply, name, "tail_ms"))
            s["lead_ms"].append(_span_ms(reply, "lead_ms", zero=True))
            s["idle_ms"].append(_span_ms(reply, "idle_ms", zero=True))
            s["host_ms"].append(_span_ms(reply, "host_ms"))
            s["before_ms"].append(_span_ms(reply, "before_ms"))
            s["slot"].append(chosen[name].j)      # which placement (timing.samples_slot, with --samples)
            costs.lap("replies")
        sample = ctx.device.clocks()
        if sample is not None:
            clocks.append(sample)
            # A round the GPU ran capped (power, thermal) well below its clock is not the kernels at
            # full speed: dropped, at most min_reps of them a scenario (a GPU capped throughout is
            # timed as it is, and says so). On the H200 the 16k-token flash scenarios draw 620-640 W
            # and read SwPowerCap at 1950-1965 of 1980 MHz: that is the kernel's own speed, kept.
            if capped(sample, getattr(ctx.device, "nvml", None)) and dropped < policy["min_reps"]:
                dropped += 1
                for name in samples:
                    for v in samples[name].values():
                        v.pop()
        costs.lap("clocks")
        if "candidate" in samples:
            cand_reps = rechecks.record(task, [(chosen["candidate"], seed)], cand_reps,
                                        [chosen["baseline"]] if "baseline" in chosen else None)
            costs.lap("rechecks")
            found = _after_candidate(ctx, ctx.cand)
            if found:
                return fail(entry, "rejected", "during timing: " + found)
            costs.lap("watch")
        if ctx.deadline is not None and time.monotonic() > ctx.deadline:
            raise ChildFailure("timeout", "the evaluation's time limit was reached during this scenario")
        stop = done(merged_ms(samples, lanes), policy, time.monotonic() - t_start)
        costs.lap("rule")
        if stop:
            break
    summary = dict(nvml.summarise(clocks), dropped_rounds=dropped) if clocks else None
    pin.restore()     # the figures and re-checks are the parent's own work: every core again
    # Each peer's round is the mean of its calls in every peers' executor (harness/executor/lanes.py).
    samples, by_lane = merge(samples, lanes)
    job = (bound.Job(ctx, timer, sets, decks, pin, scenario, seed_base, chain, room)
           if getattr(ctx.opts, "bound", True) else None)
    out = _judge(ctx, entry, samples, rcs, unsupported, rechecks, pool, time.monotonic() - t_start,
                 scenario, seed_base, confirming, summary, kept, job)
    if isinstance(entry.get("timing"), dict):
        entry["timing"]["loop_ms"] = costs.report(rounds=rounds)
        if by_lane:   # each process's own figure of each peer: how far apart its processes read
            entry["timing"]["peer_lanes_ms"] = {p: [round(FIGURE.of(ms), 6) if ms else None for ms in rows]
                                                for p, rows in by_lane.items()}
    return out


def _span_ms(reply, key="span_ms", zero=False):
    """The call's span from CUPTI's records (executor/process.py), or None: absent, unreadable or not a time;
    `key` lead_ms or idle_ms (zero=True: 0 is a time): how the span lay on the GPU."""
    spans = reply.get(key)
    if not isinstance(spans, list) or len(spans) != 1:
        return None
    v = spans[0]
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and (0 <= v if zero else 0 < v) and v < 1e6
    return float(v) if ok else None


def _work_ms(reply, span):
    """The call's figure (cupti_activity.call_layout's `work`: its span less up to FRONT_END_GAP_MS of
    each gap inside it), or None: absent, not a time, or more than its span."""
    work = _span_ms(reply, "work_ms")
    return work if work is not None and span is not None and work <= span else None


def _medians_read(samples, key):
    """{implementation: median of the calls' `key` that read as a time}, where any did."""
    read = {k: [x for x in s[key] if x is not None] for k, s in samples.items()}
    return {k: median(v) for k, v in read.items() if v}


def _pad_ms(name):
    return PEER_PAD_MS if name.startswith("peer:") else PAD_MS


def _event_figure(offsets, name, ms):
    """An event time less what the harness's events add on its implementation's path (the peers' or
    the native one), as the parent measured it against CUPTI (harness/timing/event_offsets.py)."""
    return corrected(ms, offsets.get("peers" if name.startswith("peer:") else "native"))


def choose_clock(ctx, samples):
    """Every implementation's figures from one clock: CUPTI's records when every call of every one
    has them (each call's `work_ms`, its span less up to FRONT_END_GAP_MS of each gap inside it; the
    candidate's and the incumbent's held by _hold_excuse), else the event times less what the
    harness's events add on each path (measured by the parent against CUPTI,
    harness/timing/event_offsets.py). With CUPTI, `gap_ms` (event time - span: what ran inside the events but
    outside the GPU's records) is kept for the bounds. Returns the clock's name."""
    timed = {n: s for n, s in samples.items() if s.get("event_ms")}
    asked = getattr(ctx, "clock", "events") == "cupti"
    missing = sorted(n for n, s in timed.items() if None in s["work_ms"] or len(s["work_ms"]) != len(s["event_ms"]))
    spans = asked and bool(timed) and not missing
    offsets = getattr(ctx, "event_offsets", None) or {}
    for name, s in timed.items():
        if spans:
            s["ms"] = list(s["work_ms"])
            s["gap_ms"] = [e - sp for e, sp in zip(s["event_ms"], s["span_ms"])]
        else:
            s["ms"] = [_event_figure(offsets, name, e) for e in s["event_ms"]]
    if spans:
        _hold_excuse(timed)
    if spans or not asked or not missing:
        return "cupti" if spans else "events"
    if not getattr(ctx, "clock_fallback_said", False):
        ctx.clock_fallback_said = True
        ctx.messages.append(f"timing: CUPTI's records were missing for {', '.join(missing)}: scenarios like that are "
                            f"timed by their events (timing.clock)")
    return "events"


def _hold_excuse(samples):
    """The gaps an untrusted implementation's figure leaves out are its own process's report, like
    its span: the candidate's and the incumbent's calls leave out no more than the baseline's calls
    do (the median of their span - work) plus one gap's allowance (EXCUSED_MARGIN_MS; without a
    baseline, that alone). A reply that claims more (forged, or many more kernels than the
    baseline's) has the rest counted, as the span counted it, and `excused_held` says how many calls."""
    base = samples.get("baseline")
    allowed = EXCUSED_MARGIN_MS + (median([sp - w for sp, w in zip(base["span_ms"], base["work_ms"])])
                                   if base and base.get("work_ms") else 0.0)
    for name in ("candidate", "incumbent"):
        s = samples.get(name)
        if not s:
            continue
        held = [max(w, sp - allowed) for sp, w in zip(s["span_ms"], s["work_ms"])]
        s["excused_held"] = sum(h > w for h, w in zip(held, s["work_ms"]))
        s["ms"] = held


def _judge(ctx, entry, samples, rcs, unsupported, rechecks, pool, seconds, scenario, seed_base, confirming, clocks,
           kept, job=None):
    clock = choose_clock(ctx, samples)
    cand = timing_entry(entry, samples, unsupported, seconds, pool, 1, FIGURE)
    keep_samples(ctx, entry, samples)
    timing = entry["timing"]
    timing["pad_ms"] = PAD_MS
    timing["clock"] = clock
    if clocks is not None:   # NVML after every round (harness/timing/nvml.py); throttled rounds dropped
        timing["clocks"] = clocks
    timing["excess_ms"] = {k: median(s["excess_ms"]) for k, s in samples.items() if s["excess_ms"]}
    timing["busy_ms"] = {k: median(s["busy_ms"]) for k, s in samples.items() if s["busy_ms"]}
    timing["tail_ms"] = {k: median(s["tail_ms"]) for k, s in samples.items() if s["tail_ms"]}
    if clock == "cupti":
        # Each call's figure is its span less up to this much of each gap between its records.
        timing["front_end_gap_ms"] = FRONT_END_GAP_MS
        timing["gap_ms"] = {k: median(s["gap_ms"]) for k, s in samples.items() if s.get("gap_ms")}
        timing["excused_held"] = {k: s["excused_held"] for k, s in samples.items() if s.get("excused_held")}
        # How the spans lay on the GPU (the executors' own reading, shown, not judged): from the pad's
        # end to the call's first work (what the pad did not cover), and the GPU idle inside the span.
        for key in ("lead_ms", "idle_ms"):
            timing[key] = _medians_read(samples, key)
    # The host's queueing of each call, as the executor read it: `host_ms` from the pad's launch to the
    # call's return, `before_ms` the pad's launch and the start event alone (with CUPTI on, the first
    # launch after a take costs the host 0.25-0.35 ms on the H200, before the pad runs). A call whose
    # own launches took longer than its pad (`pad_outrun`) had part of them inside its time.
    for key in ("host_ms", "before_ms"):
        timing[key] = _medians_read(samples, key)
    timing["pad_outrun"] = {k: sum(1 for h, b in zip(s["host_ms"], s["before_ms"])
                                   if h is not None and b is not None and h - b > _pad_ms(k))
                            for k, s in samples.items()}
    if definite_failures(ctx, entry, rcs, rechecks, scenario):
        return None
    if cand and "baseline" in samples and samples["baseline"]["ms"]:
        found = bounds(timing, samples, seed_base)
        if found and not confirming:
            timing["first_loop"] = {"bounds": timing.pop("bounds"), "reason": found}
            return RECHECK
        if found:
            return fail(entry, "rejected", "during timing: " + found)
        # The parent's own clock around lean calls beside the baseline's: every untrusted figure raised
        # to the floor it gives (harness/timing/bound.py).
        if job is not None:
            found = bound.judge(ctx, timing, samples, FIGURE, job)
            if found:
                return fail(entry, *found)
        else:
            timing["bound"] = {"skipped": "turned off (Options.bound)"}
    elif cand:
        timing["bound"] = {"skipped": "no baseline to pair the candidate's calls with"}
        ctx.messages.append(f"{scenario.id}: timed without a baseline: the candidate's event times were not checked "
                            f"against the wall clock")
    if kept and clock != getattr(ctx, "clock", clock):
        ctx.messages.append(f"{scenario.id}: the peers' kept figures are {ctx.clock} times and this scenario's are "
                            f"{clock} times: no comparison with the peers")
        kept, timing["peers"] = None, "kept, another clock"
    elif kept:   # every round of the candidate against the kept figure
        n = len(samples["candidate"]["ms"])
        for p, ms in kept["ms"].items():
            samples[f"peer:{p}"] = {"ms": [ms] * n}
    out = figures(ctx, entry, samples, rcs, rechecks, scenario, seed_base, 1, FIGURE)
    if any(n.startswith("peer:") for n in samples):    # how the peers' figures were had (--fresh-peers too)
        timing.setdefault("peers", "kept" if kept else "measured")
    if getattr(ctx, "peer_figures", None) is not None and not kept and clock == getattr(ctx, "clock", clock):
        _keep_peers(ctx, scenario, samples, unsupported)
    return out


def _keep_peers(ctx, scenario, samples, unsupported):
    """The scenario's peers' times for later evaluations, when every peer was timed or is unsupported
    (a peer that failed during timing is not kept: that may not happen again)."""
    names = [p for p, _ in ctx.task.peers]
    ms = {p: FIGURE.of(samples[f"peer:{p}"]["ms"]) for p in names if samples.get(f"peer:{p}", {}).get("ms")}
    left = {p: unsupported[p] for p in names if p not in ms and p in unsupported}
    if set(ms) | set(left) == set(names) and not any(r.startswith("failed") for r in left.values()):
        ctx.peer_figures.put(scenario, ms, left)


def bound_limits(kernel):
    """{bound: its limit, ms} for a kernel of `kernel` ms (bounds() below)."""
    return {"tail_ms": max(TAIL_MARGIN_MS, RELATIVE_MARGIN / 2 * kernel),
            "busy_ms": max(BUSY_MARGIN_MS, RELATIVE_MARGIN * kernel),
            "excess_ms": max(EXCESS_MARGIN_MS, RELATIVE_MARGIN * kernel),
            "gap_ms": max(GAP_MARGIN_MS, RELATIVE_MARGIN / 2 * kernel)}


def bounds_clear(samples):
    """rounds.done's guard before an early stop: no round's paired difference past any bound's limit.
    A bound judged on fewer rounds has less power (its interval is over them), so a scenario where
    any call came near one goes on to min_reps."""
    cand, base = samples.get("candidate"), samples.get("baseline")
    if not cand or not base:
        return base is None          # no baseline, no bounds (--no-baseline)
    if not cand.get("ms") or not all(k in cand and k in base for k in ("tail_ms", "busy_ms", "excess_ms")):
        return False                 # not there to look at (the peers' lanes fold them away): no early stop
    for key, limit in bound_limits(median(cand["ms"])).items():
        if key in cand and key in base:
            if any(c is None or b is None or c - b > limit for c, b in zip(cand[key], base[key])):
                return False
    return True


def bounds(timing, samples, seed_base):
    """The reason the candidate's calls escaped the events, or None; records each bound in `timing`.

    Each bound compares the candidate's call with the baseline's of the same round (paired
    differences) and speaks only when the whole 95 % interval of their median is past it: identical
    code reads the same up to noise, work outside the events shifts every call."""
    kernel, rng = median(samples["candidate"]["ms"]), random.Random(f"{seed_base}:bounds")
    limits = bound_limits(kernel)
    checks = (("tail_ms", limits["tail_ms"],
               "the candidate's work ran on {d} us past the end event, compared with the baseline's calls "
               "(median of {n} paired calls, 95 % interval from {lo} us; limit {limit} us): work on a stream that "
               "does not wait for the legacy stream (a non-blocking stream) or deferred; launch on the stream "
               "you are given"),
              ("busy_ms", limits["busy_ms"],
               "the GPU stayed busy {d} us longer after the candidate's executor answered than after the "
               "baseline's (median of {n} paired calls, 95 % interval from {lo} us; limit {limit} us): work still "
               "running after the call returned; finish before returning"),
              ("excess_ms", limits["excess_ms"],
               "the candidate's requests took {d} us longer than their GPU time (events) compared with the "
               "baseline's (median of {n} paired calls, 95 % interval from {lo} us; limit {limit} us): work "
               "outside the timed window (a stream that does not wait for the legacy stream, host work after the "
               "end event) or a time that was not measured; launch on the stream you are given and finish before "
               "returning"),
              ("gap_ms", limits["gap_ms"],
               "the candidate's calls spent {d} us more inside their events but outside the GPU work CUPTI recorded "
               "than the baseline's (median of {n} paired calls, 95 % interval from {lo} us; limit {limit} us): host "
               "work before the first launch or after the last, or a record of the work that does not match it; "
               "launch the work and return"))
    timing["bounds"] = {}
    for key, limit, text in checks:
        if key not in samples["candidate"] or key not in samples["baseline"]:
            continue       # gap_ms: only when the figures are CUPTI's spans
        diffs = [c - b for c, b in zip(samples["candidate"][key], samples["baseline"][key])]
        ci = median_ci(diffs, rng)
        timing["bounds"][key] = {"median": median(diffs), "ci": ci, "limit": limit}
        if ci is not None and ci[0] > limit:
            return text.format(d=f"{median(diffs) * 1e3:.1f}", n=len(diffs), lo=f"{ci[0] * 1e3:.1f}",
                               limit=f"{limit * 1e3:.1f}")
    return None
