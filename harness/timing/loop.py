"""Side-by-side timing through executors, measured by the trusted parent.

Each round times every implementation once, in a shuffled order. One timed call: the parent writes
fresh inputs (new seed) and poison into one of 2-4 sets through its own mapping, flushes the cache
(every line of the round's buffers written back and evicted from every core's caches, CLFLUSHOPT
from harness/native/flush.c; without it, 2 x the last-level cache written), then reads its clock and the kernel's account of the executor's CPU time (every thread,
exited ones included), sends "call", waits for "done" and reads both again. The time of a call is
the executor's CPU time over the request minus the calibrated request overhead: a null request
(all of a call but the call itself) is measured the same way in every round, for candidate and
reference executor alike, and the smallest is subtracted (a lower bound of the overhead). CPU
time, not wall time: on a shared machine the wall time of a request includes waiting to be
scheduled (milliseconds on a loaded 2-core VM), which the kernel does not count as CPU time; a
CPU-task kernel cannot get work done without CPU time of its own (processes, io_uring and the like
are forbidden), and its wall time is recorded beside it (wall_ms). The same CPU clock is read
between requests: an executor is idle between "done" and the next request, so CPU used there is
work the clock did not see (after return, on another thread, in a signal handler) -> rejected.

Which candidate calls are value-checked is drawn in this process over the whole loop (a reservoir
sample from a secret seed); the executor cannot know, and every call's outputs are checked for
leftover poison anyway.
"""

import math
import random
import secrets
import time

import torch

from ..errors import fail
from ..executor.calls import OTHER_THREADS_CPU_MS, call_args, fill, other_threads_finding, outputs_of
from ..executor.handle import ChildFailure
from ..executor.lanes import lane_names, peer_executors, peer_of
from ..executor.slots import make_slots, slot_bytes
from ..task.tolerance import check_output, max_abs_diff, nonfinite_count, unwritten
from . import bound
from .rounds import Deck, Pinning, done, executor_of, paired_ratios
from .stats import MEDIAN, median, ratio_ci, verdict

# How much memory a scenario's buffer sets (slots) may take, all its implementations together.
SET_BUDGET_BYTES = {"cuda": 2 << 30, "cpu": 64 << 20}
GAP_MARGIN_MS = 0.05
RECHECK_MIN, RECHECK_MAX, RECHECK_BYTES = 4, 32, 32 << 20


class Timer:
    def __init__(self, ctx, scenario, seed_base, rng):
        self.ctx, self.task, self.scenario = ctx, ctx.task, scenario
        self.params, self.scalars = scenario.params, ctx.task.scalar_values(scenario)
        self.rng, self.seed_next = rng, seed_base
        self.last_cpu = {}

    def _next(self):
        """(seed, inputs) of the next seed."""
        seed, self.seed_next = self.seed_next, self.seed_next + 1
        return seed, self.ctx.oracle.inputs(self.params, seed)

    def fresh(self, *sets, poison=True):
        """New inputs (the next seed) and poison into each of `sets`: the calls of one index of a
        round get the same values, each in its own implementation's buffers. poison=False: the
        caller poisons the outputs itself (fresh_round)."""
        seed, inputs = self._next()
        for bs in sets:
            fill(self.task, bs, inputs, outputs=poison)
        return seed

    def fresh_slots(self, chosen):
        """fresh() for many slots ({name: [slots]}, all of one Slots each, bound.measure_batch): one new
        seed's inputs into every one, a copy per input and implementation over the slots' stacked
        copies, and their outputs poisoned likewise. Returns the seed."""
        seed, inputs = self._next()
        for slots in chosen.values():
            owner = slots[0].owner
            rows = torch.tensor([s.j for s in slots], dtype=torch.long)
            for arg in self.task.inputs():
                view = owner.stacked(arg.name)
                value = inputs[arg.name].reshape(1, -1).to(view.device)
                view.index_copy_(0, rows.to(view.device), value.expand(len(slots), -1))
            owner.poison_slots(rows)
        return seed

    def fresh_round(self, chosen):
        """fresh() for a round ({name: [slots]}, all of one Slots each): call index i of every
        implementation gets the i-th new inputs, and each implementation's outputs are poisoned at once."""
        seeds = [self.fresh(*slots, poison=False) for slots in zip(*chosen.values())]
        for slots in chosen.values():
            slots[0].owner.poison_outputs()
        return seeds

    def timed(self, ex, msg):
        """(reply, wall ms, cpu ms during the request, cpu ms since the last reply)."""
        cpu0 = ex.cpu_ns()
        gap = (cpu0 - self.last_cpu[ex.pid]) / 1e6 if ex.pid in self.last_cpu else None
        t0 = time.perf_counter_ns()
        reply = ex.request(msg)
        t1 = time.perf_counter_ns()
        cpu1 = ex.cpu_ns()
        self.last_cpu[ex.pid] = cpu1
        return reply, (t1 - t0) / 1e6, (cpu1 - cpu0) / 1e6, gap


# Time the value re-checks after a scenario's loop may take once RECHECK_MIN are done.
RECHECK_SECONDS = 0.03
# CPU a request should spend in calls, so that the request's own cost (0.16-0.22 ms of the executor's
# Python after the flush, docs/harness-lab.md) is about a tenth of it; at most MAX_BATCH calls a request.
TARGET_BATCH_MS = 1.0
# ... and at least this much, whatever the parent's own work per call costs.
MIN_BATCH_MS = 0.5
MAX_BATCH = 512
ROLES = (("candidate", "cand"), ("reference", "ref"), ("incumbent", "inc"), ("peers", "peer"))   # result key, executor


def run_timing(ctx, scenario, entry, seed_base, rng):
    task = ctx.task
    impls = implementations(ctx)
    # Every implementation has its own slots: all of a round's inputs are written before its one flush.
    room = max(2, SET_BUDGET_BYTES[ctx.device_kind] //
               (slot_bytes(ctx.oracle.set_bytes(scenario.params), task) * len(impls)))
    timer = Timer(ctx, scenario, seed_base, rng)
    probe = ctx.oracle.inputs(scenario.params, seed_base)
    shapes_in = {k: tuple(v.shape) for k, v in probe.items()}
    shapes_out = ctx.oracle.output_shapes(scenario.params)
    policy, unsupported, sets = dict(task.timing), {}, {}
    policy["early"] = getattr(getattr(ctx, "opts", None), "early_stop", True)   # rounds.done: settled before min_reps
    pin = Pinning([0] + [ex.pid for ex in executors(ctx)])
    try:
        sets.update(_slots(ctx, impls, shapes_in, shapes_out, 1, timer))
        est = _warm_up(ctx, timer, impls, sets, policy, unsupported)
        # What the parent spends per call of a round, outside the clock: fresh inputs (make_inputs)
        # written for every implementation, and poison. Its CPU time, the smallest of three: on a
        # loaded machine the wall time includes waiting for a core.
        parent_ms = math.inf
        for _ in range(3):
            t0 = time.thread_time()
            timer.fresh_round({name: [sets[name].get(0)] for name in impls})
            parent_ms = min(parent_ms, (time.thread_time() - t0) * 1e3)
        for name in list(sets):
            sets.pop(name).close()
        # One batch size for every implementation, from the fastest: the same number of calls a request.
        # Capped so that min_reps rounds of the parent's work fit in max_seconds (r7-c33: fresh inputs
        # cost the parent 0.1 ms a call, 25 times the call), but never below MIN_BATCH_MS of calls: a
        # request whose calls take little more than its own cost reads that cost's noise (a CI run
        # under load read identical code 1.45x faster).
        fastest = min(est.values())
        budget = 1e3 * policy["max_seconds"] / max(1, policy["min_reps"])
        calls = max(math.ceil(MIN_BATCH_MS / fastest),
                    min(math.ceil(TARGET_BATCH_MS / fastest), int(budget // max(parent_ms, 1e-3))))
        batch = max(1, min(MAX_BATCH, room, calls))
        pool = max(batch, min(4, room))      # slots per implementation; each batch draws `batch` of them
        sets.update(_slots(ctx, impls, shapes_in, shapes_out, pool, timer))
        job = None
        if getattr(ctx.opts, "bound", True) and "baseline" in impls:
            # Bound requests after the rounds (timing/bound.py, issue 39): the slots' argument lists, once.
            native = [n for n in impls if not n.startswith("peer:")]
            chain = bound.send_tables(ctx, task, sets, native, timer.scalars)
            job = bound.Job(ctx, timer, sets, {n: Deck(rng, pool) for n in native}, pin, scenario, seed_base, chain)
        return _loop(ctx, timer, entry, impls, sets, (pool, batch), policy, scenario, seed_base, pin, unsupported,
                     job)
    finally:
        pin.restore()
        for s in sets.values():
            s.close()


def _slots(ctx, impls, shapes_in, shapes_out, count, timer):
    """Every implementation's slots, made together (make_slots); native implementations are called
    by slot index (a table of their argument lists), the peers take tensors."""
    return make_slots({name: _executor(ctx, name) for name in impls}, ctx.task, shapes_in, shapes_out, count,
                      timer.rng, {name: timer.scalars for name in impls if not name.startswith("peer:")})


def implementations(ctx):
    """What a scenario's timing loop times: the candidate, the baseline, the incumbent (the run's best
    so far), the peers."""
    lanes = peer_processes(ctx)
    return (["candidate"] + (["baseline"] if ctx.has_baseline else []) +
            (["incumbent"] if ctx.has_incumbent and getattr(ctx, "incx", None) is not None else []) +
            ([n for p, _ in ctx.task.peers for n in lane_names(f"peer:{p}", lanes)] if ctx.with_peers else []))


def peer_processes(ctx):
    """How many processes each peer is timed in at once (harness/executor/lanes.py): the peers' executors
    that started, one where only the first did (or none)."""
    return max(1, len(peer_executors(ctx)))


def executors(ctx):
    """Every executor of the evaluation that is up: the candidate's, the baseline's, the incumbent's,
    each of the peers'."""
    return [ex for ex in (ctx.cand, ctx.refx, getattr(ctx, "incx", None), *peer_executors(ctx)) if ex is not None]


def _executor(ctx, name):
    return executor_of(ctx, name)


def _side(name):
    """Which executor: the candidate's, its twin running the baseline, the incumbent's, or the peers'."""
    return {"candidate": "cand", "baseline": "ref", "incumbent": "inc"}.get(name, "peer")


def _message(ctx, name, sets, scalars, params, null=False):
    if name.startswith("peer:"):
        return {"cmd": "call", "peer": peer_of(name), "params": dict(params),
                "batch": [{a.name: bs.spec(a.name) for a in ctx.task.args if a.kind == "tensor"} for bs in sets]}
    if all(getattr(bs, "table", None) is not None and bs.table == sets[0].table for bs in sets):
        return {"cmd": "call", "table": sets[0].table, "idx": [bs.j for bs in sets], "null": null}
    return {"cmd": "call", "batch": [call_args(ctx.task, bs, scalars) for bs in sets], "null": null}


def drop_unsupported_peers(ctx, timer, impls, sets, unsupported):
    """One call of each peer: a peer that cannot run the scenario is left out, with its reason."""
    for name in impls[:]:
        if name.startswith("peer:"):
            bs = sets[name].get(0)
            timer.fresh(bs)
            ctx.device.sync()
            reply = _executor(ctx, name).request(_message(ctx, name, [bs], timer.scalars, timer.params))
            if reply.get("peer_error"):
                unsupported[peer_of(name)] = (str(reply.get("message")) if reply["peer_error"] == "unsupported"
                                              else f"failed: {reply.get('message')}")
                impls.remove(name)


def _warm_up(ctx, timer, impls, sets, policy, unsupported):
    """Drops the peers that cannot run the scenario; warms caches, lazy loading and clocks; returns
    each implementation's smallest CPU per call minus its executor's smallest null request."""
    drop_unsupported_peers(ctx, timer, impls, sets, unsupported)
    cost = {}
    for name in impls:
        for _ in range(max(1, policy["warmup_reps"])):   # warm: no flush; caches, lazy loading, clocks
            cost[name] = min(cost.get(name, math.inf), _per_call(ctx, timer, name, sets[name].get(0), 1))
    # One call's figure is mostly the request's own cost when the call takes microseconds (r7-c33:
    # 50 us read for a 4 us call, batches of 12-44 calls, and per-round ratios of identical code from
    # 0.4 to 3.1 because the request's overhead varies by tens of us). So the estimate is repeated
    # over more calls of one slot until the calls' own CPU dominates that noise.
    for name in impls:
        repeats, est = 1, cost[name]
        while est * repeats < WARM_ESTIMATE_MS and repeats < MAX_BATCH:
            repeats = min(MAX_BATCH, max(2 * repeats, math.ceil(WARM_ESTIMATE_MS / est)))
            est = _per_call(ctx, timer, name, sets[name].get(0), repeats)
        cost[name] = min(cost[name], est)
    return cost


# The batch estimate's calls take at least this much CPU (or MAX_BATCH calls): several times the
# tens of microseconds a request's own cost varies by.
WARM_ESTIMATE_MS = 0.5


def _per_call(ctx, timer, name, bs, repeats):
    """CPU per call of `repeats` back-to-back warm calls of `name` on slot `bs`, less its executor's
    null request of as many calls (at least 1 us)."""
    ex = _executor(ctx, name)
    timer.fresh(bs)
    cpu = timer.timed(ex, _message(ctx, name, [bs] * repeats, timer.scalars, timer.params))[2]
    null = timer.timed(ex, _message(ctx, "candidate", [bs] * repeats, timer.scalars, timer.params, null=True))[2]
    return max(1e-3, (cpu - null) / repeats)


def _loop(ctx, timer, entry, impls, sets, sizes, policy, scenario, seed_base, pin, unsupported, job=None):
    task, rng = ctx.task, timer.rng
    pool, batch = sizes
    rcs = {}
    samples = {n: {"ms": [], "wall_ms": [], "cpu_ms": []} for n in impls}
    null, null_wall, gaps = ({"cand": [], "ref": [], "inc": [], "peer": []} for _ in range(3))
    rechecks = Rechecks(ctx, timer.params)
    cand_reps, rounds = 0, 0
    t_start = time.monotonic()
    while True:
        rounds += 1
        # Inputs (fresh seeds) and poison for every request of the round, then one flush: each call
        # starts with its data out of the cache, whatever runs before it. Request overheads ("null",
        # all of a batch but the calls) take shuffled places among the calls. The round's core is
        # drawn first, so that the parent writes on it: a flush that writes over the cache evicts
        # only its own core's L2, and what the parent wrote on the previous round's core stayed in
        # that core's L2 (1 MiB on the VM then), the last-written implementation's outputs most of
        # all (identical code read 1.63x on r4096-c64: the baseline's outputs, poisoned after the
        # candidate's, fetched from the other core). The line flush evicts the round's buffers from
        # every core's caches, but the order costs nothing and keeps the fallback honest.
        pin.round(rng)
        chosen = {name: [sets[name].get(j) for j in rng.sample(range(pool), batch)] for name in impls}
        seeds = timer.fresh_round(chosen)
        drawn = {name: list(zip(chosen[name], seeds)) for name in impls}
        owners = _null_owners(impls)
        order = impls + [f"null:{side}" for side in owners]
        rng.shuffle(order)
        ctx.device.flush([slot.span for slots in chosen.values() for slot in slots])
        for name in order:
            if name.startswith("null:"):
                side = name[5:]
                msg = _message(ctx, "candidate", [bs for bs, _ in drawn[owners[side]]], timer.scalars, timer.params,
                               null=True)
                _, wall, cpu, gap = timer.timed(_executor(ctx, owners[side]), msg)
                null[side].append(cpu)
                null_wall[side].append(wall)
                if gap is not None:
                    gaps[side].append(gap)
                continue
            side = _side(name)
            ex = _executor(ctx, name)
            ex.running = name
            reply, wall, cpu, gap = timer.timed(ex, _message(ctx, name, [bs for bs, _ in drawn[name]],
                                                             timer.scalars, timer.params))
            ex.running = None
            if not taken(reply, name, batch, impls, samples, unsupported, rcs):
                continue
            s = samples[name]
            s["wall_ms"].append(wall)
            s["cpu_ms"].append(cpu)
            if gap is not None:
                gaps[side].append(gap)
        # The candidate's outputs and process are looked at once the round is over: parent work between
        # two requests would evict the caches of whichever request comes next, only after the candidate.
        if "candidate" in samples:
            cand_reps = rechecks.record(task, drawn["candidate"], cand_reps,
                                        [bs for bs, _ in drawn["baseline"]] if "baseline" in drawn else None)
            found = _after_candidate(ctx, ctx.cand)
            if found:
                return fail(entry, "rejected", "during timing: " + found)
        # The smallest request overhead seen: a lower bound, so a call's figure is never made smaller
        # than what the call itself took (and the same rule for every implementation); an untrusted
        # executor's no more than its twin's allows (calibrated(), twin_capped()).
        over = twin_capped(calibrated(null, twin=getattr(ctx.opts, "bound", True) and _same_executor_code(ctx)), ctx)
        for name, s in samples.items():
            o = over[_side(name)]
            s["ms"] = [max(0.0, c - o) / batch for c in s["cpu_ms"]]
        if ctx.deadline is not None and time.monotonic() > ctx.deadline:
            raise ChildFailure("timeout", "the evaluation's time limit was reached during this scenario")
        if done(samples, policy, time.monotonic() - t_start):
            break
    if getattr(ctx.opts, "bound", True) and calibration_finding(null):
        _confirm_nulls(ctx, timer, impls, sets, batch, null, null_wall)
    return _judge(ctx, entry, samples, rcs, unsupported, rechecks, gaps, (null, null_wall), sizes,
                  time.monotonic() - t_start, scenario, seed_base, job)


def _null_owners(impls):
    """{executor side: the implementation whose slots its null requests borrow}: the first it runs."""
    owners = {}
    for name in impls:
        owners.setdefault(_side(name), name)
    return owners


# Null requests added, alternately, before a calibration finding is judged (calibration_finding).
CONFIRM_NULLS = 24


def _confirm_nulls(ctx, timer, impls, sets, batch, null, null_wall):
    """More null requests from the candidate's and the baseline's executors, one after the other, joined
    to the rounds' before a calibration finding rejects: work a hook puts into null requests is in every
    one of them, a moment of load on a shared machine is not (the Triton task's own baseline, judged
    against itself, was once rejected so on a saturated CI machine, with as few as 5 rounds' worth).
    The figures are not touched: each round subtracted what was known then."""
    owners = _null_owners(impls)
    sides = [side for side in ("cand", "ref") if side in owners]
    for _ in range(CONFIRM_NULLS):
        for side in sides:
            owner = owners[side]
            msg = _message(ctx, "candidate", [sets[owner].get(0)] * batch, timer.scalars, timer.params, null=True)
            _, wall, cpu, _ = timer.timed(_executor(ctx, owner), msg)
            null[side].append(cpu)
            null_wall[side].append(wall)

# Issue 39: the null requests run in the executor, whose process the candidate owns: work it puts
# into them (a hook on the executor's request path that spins when a request carries no call) was
# subtracted from every call of its. The native executors (the candidate's, the baseline's, which
# never ran the candidate's code, the incumbent's) run the same request code, so each subtracts the
# smallest null request of all of them: what one executor adds to its own null requests moves
# nothing (and what it takes away raises every figure alike). Twins' smallest null requests read
# 42-124 us apart for identical code on the loaded development VM, so only an executor whose null
# requests cost more than CAL_REJECT_FACTOR x the baseline's + CAL_REJECT_MS is a finding.
CAL_REJECT_FACTOR, CAL_REJECT_MS = 3.0, 0.2
NATIVE_SIDES = ("cand", "ref", "inc")


def calibrated(null, twin=True):
    """{executor side: the null overhead its figures subtract}: the smallest of its null requests, for
    the native executors the smallest of theirs all (not with `twin` off, Options.bound)."""
    over = {side: min(v) for side, v in null.items() if v}
    native = [over[s] for s in NATIVE_SIDES if s in over]
    if twin and "ref" in over and native:
        for side in NATIVE_SIDES:
            if side in over:
                over[side] = min(native)
    return over


def calibration_finding(null):
    """The reason to reject the candidate when its executor's null requests cost far more than its
    twin's, else None."""
    if not null.get("cand") or not null.get("ref"):
        return None
    cand, ref = min(null["cand"]), min(null["ref"])
    if cand <= CAL_REJECT_FACTOR * ref + CAL_REJECT_MS:
        return None
    return (f"during timing: the candidate's executor spent {cand * 1e3:.0f} us of CPU on its cheapest null "
            f"request (a request's own work, without the calls), the baseline's executor, the same code, "
            f"{ref * 1e3:.0f} us: the calibration subtracted from every call was tampered with (work put into "
            f"requests that carry no call)")


def _same_executor_code(ctx):
    """Whether the candidate's and the baseline's executors run the same request code (both native, or
    both the Python executor): only then is one's null request a measure of the other's."""
    roles = getattr(ctx, "python_entries", None) or {}
    return ("candidate" in roles) == ("baseline" in roles)


# How far an untrusted executor's request cost may exceed its twin's before it is held to it.
TWIN_MARGIN_MS, TWIN_MARGIN = 0.05, 0.25


def twin_capped(over, ctx):
    """The request costs to subtract, the candidate's and the incumbent's held to at most the
    baseline's twin's (plus a margin) when both run the same executor code: their null requests are
    measured in processes whose code the candidate may own (a Python candidate by construction; see
    harness/adversarial/triton/py04_inflate_null.py), and an inflated one would be subtracted from
    every timed request."""
    ref = over.get("ref")
    if ref is None or not getattr(ctx, "has_baseline", False) or not getattr(ctx.opts, "bound", True):
        return over    # (Options.bound off: the controls show what the cheats gain without it)
    roles = getattr(ctx, "python_entries", None) or {}
    if ("candidate" in roles) != ("baseline" in roles):
        return over    # different executor code (a native candidate, a Python baseline): no twin
    limit = ref + max(TWIN_MARGIN_MS, TWIN_MARGIN * ref)
    capped, held = dict(over), set()
    for side in ("cand", "inc"):
        if side in capped and capped[side] > limit:
            capped[side] = limit
            held.add(side)
    ctx.capped_overhead = held    # the last round's: the figures are made of its costs
    return capped


class Rechecks:
    """Which of the candidate's timed calls are value-checked after the loop: a reservoir sample drawn
    from a secret seed in this process (every call so far equally likely to be kept, the executor
    cannot know which), and every call looked at for leftover poison."""

    def __init__(self, ctx, params):
        self.ctx = ctx
        out_bytes = ctx.oracle.output_bytes(params) * max(1, len(ctx.task.outputs()))
        self.keep = max(RECHECK_MIN, min(RECHECK_MAX, RECHECK_BYTES // max(1, out_bytes)))
        self.secret = random.Random(secrets.randbits(64))
        self.reservoir, self.unwritten = [], []
        self.modified = []      # (call, inputs) of kept calls whose inputs no longer hold what was written

    def record(self, task, drawn, reps, twins=None):
        """Look at the candidate calls `drawn` ([(set, seed)]) that just ran; returns the new call count.
        `twins`: the baseline's sets of the same calls (same inputs), whose outputs a kept call keeps
        too (figures: a screen against them before the reference is computed again)."""
        owner = getattr(drawn[0][0], "owner", None) if drawn else None
        if owner is not None and len(drawn) > 1 and all(bs.owner is owner for bs, _ in drawn):
            by_slot = owner.unwritten_outputs([bs for bs, _ in drawn])   # one look at all of them
            unwritten_of = {id(bs): by_slot.get(bs.j) for bs, _ in drawn}
        else:
            unwritten_of = {id(bs): [n for n, t in outputs_of(task, bs).items() if bool(unwritten(t).any())]
                            for bs, _ in drawn}
        for i, (bs, seed) in enumerate(drawn):
            outs = outputs_of(task, bs)
            left = unwritten_of[id(bs)]
            if left:
                self.unwritten.append({"rep": reps, "outputs": left})
            j = len(self.reservoir) if len(self.reservoir) < self.keep else self.secret.randrange(reps + 1)
            if j < self.keep:
                twin = None
                if twins is not None and twins[i] is not None:
                    twin = {n: t.clone() for n, t in outputs_of(task, twins[i]).items()}
                    # Issue 39: inputs looked at after timed calls too. The baseline's set of the same
                    # call was written the same values, and the baseline is trusted not to change them.
                    changed = [a.name for a in task.inputs()
                               if not _same_bits(bs.tensors[a.name], twins[i].tensors[a.name])]
                    if changed:
                        self.modified.append((reps, changed))
                self.reservoir[j:j + 1] = [(reps, seed, {n: t.clone() for n, t in outs.items()}, twin)]
            reps += 1
        return reps


def _same_bits(a, b):
    """Whether two tensors hold the same bits (NaN payloads and -0.0 included)."""
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
    return a.shape == b.shape and bool(torch.equal(a.view(ints), b.view(ints)))


# A re-checked call is screened against the baseline's output of the same round (same inputs, the
# baseline trusted) instead of the reference computed again, when it lies within the output's
# tolerance less SCREEN_FACTOR times the baseline's own error, measured against the reference on the
# first correctness seed (correctness_stage._screen_from_baseline) or, without one, on the first call
# checked in full: then |candidate - reference| <= |candidate - baseline| + |baseline - reference|
# stays within the tolerance as long as the baseline's error on these inputs stays under
# SCREEN_FACTOR times its error there. A call outside it is checked against the reference.
SCREEN_FACTOR = 3.0


def screen_limits(task, twin, ref, tols):
    """{output: limit} for the screen, from the baseline's outputs `twin` on inputs whose reference
    `ref` and tolerances `tols` are known; None when the baseline's own error leaves no room (then
    every re-check computes the reference)."""
    limits = {}
    for arg in task.outputs():
        if arg.name not in twin:
            return None
        if nonfinite_count(twin[arg.name]):
            return None
        limit = tols[arg.name][0] - SCREEN_FACTOR * max_abs_diff(twin[arg.name], ref[arg.name])
        if not limit > 0:
            return None
        limits[arg.name] = limit
    return limits


def screened(task, outs, twin, limits):
    """Whether the candidate's outputs of a timed call lie within `limits` of the baseline's outputs
    for the same inputs (never-written or non-finite values never do)."""
    for arg in task.outputs():
        ok, _, _ = check_output(arg.name, outs[arg.name], twin[arg.name], limits[arg.name])
        if not ok:
            return False
    return True


def taken(reply, name, calls, impls, samples, unsupported, rcs):
    """Checks a timed reply of `calls` calls and keeps the first failing return code in `rcs`; False
    when it was a peer that failed (then dropped from the loop, with its reason)."""
    if reply.get("peer_error"):
        unsupported[peer_of(name)] = f"failed during timing: {reply.get('message')}"
        impls.remove(name)
        del samples[name]
        return False
    rc = reply.get("rc")
    if not isinstance(rc, list) or len(rc) != calls or not all(isinstance(x, int) for x in rc):
        raise ChildFailure("forged", f"a reply with a malformed return code list ({str(rc)[:80]})", name)
    if any(rc):
        rcs.setdefault(name, next(x for x in rc if x))
    return True


def _after_candidate(ctx, ex):
    """What the parent sees of the candidate's executor right after a timed request, or None."""
    if len(ex.threads()) > ctx.thread_allowance:
        return (f"{len(ex.threads()) - ctx.thread_allowance} thread(s) started by the candidate are still running "
                f"after it returned")
    other = ex.other_threads_cpu_ns() / 1e6
    if ctx.single_threaded and other > OTHER_THREADS_CPU_MS:
        return other_threads_finding(other)
    st = ex.status_fields()
    if st["SigCgt"] != ctx.cand_status["SigCgt"] or st["timers"] > ctx.cand_status["timers"]:
        return (f"the candidate installed signal handler(s) or POSIX timer(s) (caught-signal mask {st['SigCgt']:#x}, "
                f"the executor alone has {ctx.cand_status['SigCgt']:#x}; {st['timers']} timer(s)): work deferred "
                f"past the clock")
    return None


def keep_samples(ctx, entry, samples):
    """With --samples, every round's figure (ms) per implementation, in round order, and where the
    rounds record them (CUDA) the slot each call ran on (`samples_slot`: does a placement decide a
    call's mode?), its span and how long the GPU sat idle inside it (`samples_span_ms`,
    `samples_idle_ms`, null where its records were not read: is a mode idle time or work?)."""
    if getattr(ctx, "keep_samples", False):
        entry["timing"]["samples_ms"] = {name: [round(float(v), 9) for v in s["ms"]] for name, s in samples.items()}
        slots = {name: list(s["slot"]) for name, s in samples.items() if s.get("slot")}
        if slots:
            entry["timing"]["samples_slot"] = slots
        for key in ("idle_ms", "span_ms"):
            kept = {name: [None if v is None else round(float(v), 9) for v in s[key]]
                    for name, s in samples.items() if s.get(key)}
            if kept:
                entry["timing"]["samples_" + key] = kept


def timing_entry(entry, samples, unsupported, seconds, n_sets, batch, figure=MEDIAN):
    """entry["timing"]'s first fields; `rse` is the relative standard error of the candidate's time,
    made of its rounds by `figure` (named in `figure`)."""
    cand = samples.get("candidate", {}).get("ms", [])
    entry["timing"] = {"reps": len(cand), "seconds": round(seconds, 3), "sets": n_sets, "batch": batch,
                       "figure": figure.name, "rse": figure.rse(cand) if cand else None}
    if unsupported:
        entry["peer_unsupported"] = unsupported
    return cand


def definite_failures(ctx, entry, rcs, rechecks, scenario):
    """A failed return code or outputs left unwritten: entry updated and True, else False."""
    task = ctx.task
    if "candidate" in rcs:
        fail(entry, "runtime_error", f"during timing: {task.entry} returned {rcs['candidate']}")
        return True
    for name, rc in rcs.items():
        ctx.messages.append(f"{scenario.id}: {name} returned {rc} during timing; its time is not reported")
    if rechecks.modified:
        rep, names = rechecks.modified[0]
        fail(entry, "rejected", f"during timing: timed call #{rep + 1} (one of those looked at again, chosen at "
                                f"random over the whole loop) modified its input(s) {', '.join(names)}; inputs are "
                                f"read-only (hack 6)")
        return True
    if rechecks.unwritten:
        first = rechecks.unwritten[0]
        fail(entry, "incorrect", f"during timing: {len(rechecks.unwritten)} timed call(s) left outputs "
                                 f"unwritten (first: call #{first['rep'] + 1}, {', '.join(first['outputs'])}); "
                                 f"every call must compute the result (hack 11)")
        return True
    return False


def _judge(ctx, entry, samples, rcs, unsupported, rechecks, gaps, nulls, sizes, seconds, scenario, seed_base,
           job=None):
    null, null_wall = nulls
    n_sets, batch = sizes
    cand = timing_entry(entry, samples, unsupported, seconds, n_sets, batch)
    keep_samples(ctx, entry, samples)
    entry["timing"].update(overhead_ms={k: min(null[s]) for k, s in ROLES if null[s]},
                           overhead_wall_ms={k: median(null_wall[s]) for k, s in ROLES if null_wall[s]})
    held = getattr(ctx, "capped_overhead", None)
    if held:
        # the calibration of the candidate's (incumbent's) requests, held to its twin's (twin_capped)
        entry["timing"]["overhead_held_to_twin"] = sorted(k for k, s in ROLES if s in held)
        ctx.capped_overhead = set()
    if definite_failures(ctx, entry, rcs, rechecks, scenario):
        return None
    # The checks on where CPU went come after the definite ones above: a candidate that skipped its
    # work is told so (incorrect), not that its idle time looked odd.
    # Work the clock did not see: CPU the candidate's executor used while it should have been idle.
    if gaps["cand"] and gaps["ref"]:
        excess = median(gaps["cand"]) - median(gaps["ref"])
        limit = max(GAP_MARGIN_MS, 0.1 * batch * (median(cand) if cand else 0))
        entry["timing"]["idle_cpu_ms"] = {"candidate": median(gaps["cand"]), "reference": median(gaps["ref"])}
        if excess > limit:
            return fail(entry, "rejected", f"during timing: the candidate's process used {excess * 1e3:.0f} us more "
                                           f"CPU between calls (after answering, before the next request) than the "
                                           f"reference's: work after return that the clock does not see (on "
                                           f"another thread or a signal); finish before returning")
    if ctx.single_threaded and cand:
        # One core: the kernel's account of the call's CPU time cannot exceed its wall time.
        cpu_ms, wall_ms = median(samples["candidate"]["cpu_ms"]), median(samples["candidate"]["wall_ms"])
        if cpu_ms > 1.2 * wall_ms + GAP_MARGIN_MS:
            return fail(entry, "rejected", f"during timing: the candidate's process used {cpu_ms:.3f} ms of CPU per "
                                           f"request in {wall_ms:.3f} ms of wall time: it ran on more than one core, "
                                           f"and the task is single-threaded")
    found = calibration_finding(null) if getattr(ctx.opts, "bound", True) else None
    if found:
        return fail(entry, "rejected", found)
    # Every figure of an untrusted implementation bounded from below by the kernel's account of its
    # executor's CPU over lean calls beside the baseline's (timing/bound.py; issue 39).
    if job is not None and cand and samples.get("baseline", {}).get("ms"):
        found = bound.judge(ctx, entry["timing"], samples, MEDIAN, job)
        if found:
            return fail(entry, *found)
    elif cand:
        entry["timing"]["bound"] = {"skipped": "turned off (Options.bound)" if not getattr(ctx.opts, "bound", True)
                                    else "no baseline to pair the candidate's calls with"}
    return figures(ctx, entry, samples, rcs, rechecks, scenario, seed_base, batch)


def figures(ctx, entry, samples, rcs, rechecks, scenario, seed_base, batch, figure=MEDIAN):
    """The re-checked calls against the reference, then each implementation's time (`figure` of its
    rounds), the paired ratios' medians, their intervals and verdicts."""
    task = ctx.task
    cand = samples.get("candidate", {}).get("ms", [])
    # In a secret order, at least RECHECK_MIN of the kept calls and then as many as RECHECK_SECONDS
    # allow (each needs the reference for its inputs again: tens of ms on flash's large shapes).
    order = list(rechecks.reservoir)
    rechecks.secret.shuffle(order)
    checked, t0, n_screened = [], time.monotonic(), 0
    screen = getattr(ctx, "screens", {}).get(scenario.id)   # from the correctness seeds (correctness_stage.py)
    for rep, seed, outs, twin in order:
        if len(checked) >= RECHECK_MIN and time.monotonic() - t0 > RECHECK_SECONDS:
            break
        if screen is not None and twin is not None and screened(task, outs, twin, screen):
            checked.append(rep + 1)
            n_screened += 1
            continue
        _, ref, tols = ctx.oracle.expected(scenario.params, seed)
        for arg in task.outputs():
            ok, _, reason = check_output(arg.name, outs[arg.name], ref[arg.name], tols[arg.name][0])
            if not ok:
                return fail(entry, "incorrect", f"timed call #{rep + 1} (re-checked after timing, chosen at random "
                                                f"over the whole loop): {reason} (hack 11: one code path for every "
                                                f"call)")
        if screen is None and twin is not None:
            screen = screen_limits(task, twin, ref, tols)
        checked.append(rep + 1)
    entry["rechecked_calls"] = sorted(checked)
    if n_screened:
        entry["rechecks_screened"] = n_screened
    times = {name: figure.of(s["ms"]) for name, s in samples.items() if s["ms"] and name not in rcs}
    entry["time_ms"] = times.get("candidate")
    entry["baseline_ms"] = times.get("baseline")
    entry["peer_ms"] = {n[5:]: v for n, v in times.items() if n.startswith("peer:")}
    entry["wall_ms"] = median(samples["candidate"]["wall_ms"]) / batch if cand else None
    ratios = paired_ratios({n: s for n, s in samples.items() if n in times}) if "candidate" in times else {}
    entry["timing"]["ratios"] = {n: [float(f"{r:.5g}") for r in v] for n, v in ratios.items()}
    if ratios.get("baseline"):
        entry["speedup_vs_baseline"] = median(ratios["baseline"])
        entry["speedup_vs_baseline_ci"] = ratio_ci(ratios["baseline"])
        entry["verdict_vs_baseline"] = verdict(entry["speedup_vs_baseline_ci"])
    if ratios.get("incumbent"):
        entry["incumbent_ms"] = times.get("incumbent")
        entry["speedup_vs_incumbent"] = median(ratios["incumbent"])
        entry["speedup_vs_incumbent_ci"] = ratio_ci(ratios["incumbent"])
        entry["verdict_vs_incumbent"] = verdict(entry["speedup_vs_incumbent_ci"])
    peers = {n[5:]: v for n, v in ratios.items() if n.startswith("peer:") and v}
    entry["speedup_vs_peer"] = {p: median(v) for p, v in peers.items()}
    entry["speedup_vs_peer_ci"] = {p: ratio_ci(v) for p, v in peers.items()}
    entry["verdict_vs_peer"] = {p: verdict(ci) for p, ci in entry["speedup_vs_peer_ci"].items()}
