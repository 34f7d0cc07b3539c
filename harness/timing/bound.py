"""Bound requests: a CUDA candidate's figures bounded from below by a clock its process cannot touch.

A CUDA call's figure (CUPTI's records of its kernels, or the harness's events) is read inside the
executor, the process that runs the candidate's code, which owns every byte of it: the figure is a
claim. What the parent sees itself bounds it. Per scenario, after the timed rounds, the parent
makes bound requests in the candidate's executor and in the baseline's (and the incumbent's), in
pairs: both on the same fresh inputs (one new seed a pair), on slots drawn from the same decks as
the rounds, flushed, one after the other in an order drawn per pair, all on one core drawn per
pair. A bound request is ONE call and nothing else (harness/native/bound.c: read 8 bytes, call,
synchronise the device, write 16 bytes; no pad, no events, no CUPTI, no Python), identical in both
executors. For each, the parent:

- has written poison into the slot's outputs (with the inputs);
- has drawn a few output positions from a secret seed and put them on the device;
- reads its clock, sends the request, and once "done" arrives reads the output elements at those
  positions, and nothing else, through its own mapping and in its own context (a
  gather kernel: contexts of two processes do not share the GPU's compute at once, so the read waits
  for whatever the candidate's context still runs, or sees poison), and reads its clock again when
  that read is back: wall = t1 - t0;
- fails the candidate when a position read still holds poison (an answer before the work was done,
  or work left out) or a value off the baseline's for the same inputs beyond the re-checks' screen
  and then off the reference's (less work in bound requests than in timed calls does not pay).

The baseline's executor never ran candidate code: its figure is trusted, and its walls hold the
same request costs as the candidate's. So d = median over pairs of (wall_candidate - wall_baseline),
with its 95 % bootstrap interval, is how much longer the candidate's calls really take, and

    floor = figure_baseline + lower(d) - margin,
    margin = ABS_MARGIN_MS + REL_MARGIN x figure_baseline + REQUEST_SPREAD_MS

(REQUEST_SPREAD_MS: what two executors' single requests differ by beside their calls, tens of
microseconds on an H100 and an H200; batch mode, measure_batch, cancels it and keeps a microsecond's
margin.)

A candidate (or incumbent) whose figure is under its floor has its rounds scaled so that its figure
is the floor (its ratios and intervals follow); `timing.bound` records the walls, d, the interval,
the floor and the factor on every CUDA scenario. A factor over REJECT_FACTOR is a forged figure:
the candidate is rejected. Pairs stop once the interval leaves the candidate's figure clear of any
floor it can give, or at PAIRS_MAX, or after SHARE of the task's max_seconds (PAIRS_MIN at least).

What this costs honest code: a single-kernel candidate's d is its figure's difference to the
baseline's up to noise, so its floor lies a margin and the interval's half-width below its figure:
unchanged. Work that the figure leaves out and the wall does not (host work inside the call, the
launches of a multi-kernel candidate that a pad used to hide, gaps between kernels that CUPTI's
figure excuses) counts once it passes the margin: in single calls 0.1 ms and a few percent, in batch
mode 0.2 us and a few percent (docs/harness-threats.md, "Bound requests").
"""

import math
import random
import secrets
import time

import torch

from ..errors import TaskError
from ..executor.handle import ChildFailure
from ..task.tolerance import check_output, nonfinite_count, poison, unwritten
from .rounds import executor_of as _executor
from .stats import median, median_ci, ratio_ci

# The executors' table of a scenario's slots for bound requests (cmd_table); no set has this id.
TABLE = 0x7FFF0000
# Pairs per scenario: at least PAIRS_MIN (an interval needs 3), at most PAIRS_MAX, looked at after
# each count in CHECKS, and no more once SHARE of the task's max_seconds went on them. Twin
# executors' lean requests are expected to differ by a few microseconds a pair (the host's wake-ups;
# tools/lab/bound_noise.py measures it on a GPU host), which 64-256 pairs bring to an interval of
# about a microsecond on the few-microsecond kernels; a long kernel's calls differ by well under the
# margin from the first pairs and stop at PAIRS_MIN: flash's 200 scenarios hold about 0.4 s of the
# baseline's kernels a pair of calls (their flops at its ~220 TFLOP/s), 2.4 s at 3 pairs, against the
# 4 s its budget leaves.
PAIRS_MIN, PAIRS_MAX = 3, 256
CHECKS = (3, 6, 12, 24, 48, 96, 160, 256)
SHARE = 0.25
# The margin: what identical code may show between the walls' difference and the figures' beyond
# the interval. 1 us: one kernel's launch and its end seen by the synchronising host differ by a
# fraction of a microsecond with the grid's shape, so two different single-kernel launches may
# shift the walls' difference against the figures' by that much. 3 %: the bound pairs run after the
# rounds, at the GPU's clock then (under power capping the H200 held 1950-1965 of its 1980 MHz on the
# largest flash shapes, cuda_loop.capped: about 1 %), and the walls' difference scales with it, so
# three times that.
ABS_MARGIN_MS = 0.001
REL_MARGIN = 0.03
# A figure raised by more than REJECT_FACTOR, and by more than REJECT_EXCESS_MS a call, is not noise:
# its process reported less than its calls took (forged), and the candidate is rejected. The second
# test spares what an honest call's own launches can add on a kernel of a few microseconds: each
# launch costs the host 2-5 us, and only launches that outrun the kernel before them show (a pad
# used to hide them); below it the figure is raised to the floor and nothing more (no gain is left).
REJECT_FACTOR = 1.15
REJECT_EXCESS_MS = 0.010
# Single-call requests (measure(), the default until batch mode is measured on a GPU) carry each
# executor's own request costs whole: an H100 read two executors' requests up to 85 us apart for
# identical work, steadily over a scenario and either way, and refused or raised honest code on it
# (+53 us on a flash scenario, +64 us for honest_malloc_async); an H200 raised the Triton example's
# baseline against itself 2.55x on +48 us (docs/harness-lab.md, 2026-12-06). So their margin holds
# REQUEST_SPREAD_MS as well (single_margin_ms): they bound only what passes it, and move no honest
# figure on offsets.
REQUEST_SPREAD_MS = 0.100
# Output elements the parent reads after each bound request (per output), at positions drawn then.
POSITIONS = 16
UNTRUSTED = ("candidate", "incumbent")


def margin_ms(base_figure):
    return ABS_MARGIN_MS + REL_MARGIN * base_figure


def batch_margin_ms(base_figure):
    """The margin of a batch slope's floor (measure_batch)."""
    return BATCH_ABS_MARGIN_MS + REL_MARGIN * base_figure


def single_margin_ms(base_figure):
    """The margin of a single-call request's floor: what two executors' requests may differ by beside
    their calls is in every pair's difference, whole."""
    return margin_ms(base_figure) + REQUEST_SPREAD_MS


def calls_margin_ms(base_figure, k):
    """The margin of a batch's floor from its K calls' wall alone: the slope's, and what two executors'
    requests may differ by beside their calls, a call's share of it."""
    return batch_margin_ms(base_figure) + REQUEST_SPREAD_MS / k


class Job:
    """What a scenario's bound requests need from its timing loop: the timer (fresh inputs, the
    scenario's rng), each implementation's slots and decks, the pinning, the chain of its batches
    (send_tables)."""

    def __init__(self, ctx, timer, sets, decks, pin, scenario, seed_base, chain=None, room=None):
        self.ctx, self.timer, self.sets, self.decks, self.pin = ctx, timer, sets, decks, pin
        self.scenario, self.seed_base, self.chain = scenario, seed_base, chain
        # where batch mode may have more slots than the rounds (cuda_loop.BoundRoom: widen, restore)
        self.room = room


class Chain:
    """A batch's calls made one after the other by their data: each call after a batch's first takes
    as its input `inp` the output `out` of the call before it (a slot's chained argument list, in the
    executors' tables past their slots: `offset[name] + j`). A process that runs a batch's calls at once
    (forge7: its own streams) reads its inputs before they are written, and the parent's checks of a
    chained call (the baseline's call on the candidate's own previous output, _chain_checked) see it.
    `order`: the slots in the cycle that a batch runs a stretch of (slot order[i + 1] reads order[i]'s
    output). `off`: why the scenario's batches are not chained any more (the baseline's own chain left
    the finite range), or None."""

    def __init__(self, inp, out, order, offset):
        self.inp, self.out, self.order, self.offset, self.off = inp, out, order, offset, None
        self._pred = {order[i]: order[i - 1] for i in range(len(order))}

    def pred(self, j):
        return self._pred[j]

    def stretch(self, start, count):
        return [self.order[(start + i) % len(self.order)] for i in range(count)]


def chain_of(task, slot):
    """(input, output) names of the first output whose shape and dtype are an input's, in a slot of the
    scenario; None where there is none (a batch's calls then are not chained)."""
    ins = [a.name for a in task.inputs()]
    for arg in task.outputs():
        o = slot.tensors[arg.name]
        for name in ins:
            t = slot.tensors[name]
            if t.shape == o.shape and t.dtype == o.dtype:
                return name, arg.name
    return None


class _Chained:
    """A slot's argument list with its input `inp` the output of slot `pred` (call_args reads spec())."""

    def __init__(self, slot, pred, inp, out):
        self.slot, self.pred, self.inp, self.out = slot, pred, inp, out

    def spec(self, name):
        return self.pred.spec(self.out) if name == self.inp else self.slot.spec(name)


def send_tables(ctx, task, sets, names, scalars, order=None):
    """Each executor of `names` gets its slots' argument lists once, for its bound requests, and past
    them, in batch mode (the only one that chains), each slot's chained argument list where the task
    has a chain (its cycle drawn, or `order` where that is one over as many slots). Returns the Chain or
    None."""
    from ..executor.calls import call_args
    count = min(len(sets[n].slots) for n in names)
    batch = getattr(getattr(ctx, "opts", None), "bound_batch", False)
    link = chain_of(task, sets[names[0]].slots[0]) if batch and count >= 2 else None
    chain = None
    if link is not None:
        if order is None or len(order) != count:
            order = list(range(count))
            random.Random(secrets.randbits(64)).shuffle(order)
        chain = Chain(link[0], link[1], order, {n: len(sets[n].slots) for n in names})
    for name in names:
        slots = sets[name].slots
        batch = [call_args(task, s, scalars) for s in slots]
        if chain is not None:
            batch += [call_args(task, _Chained(slots[j], slots[chain.pred(j)], chain.inp, chain.out), scalars)
                      for j in range(count)]
        ex = _executor(ctx, name)
        ex.running = name      # a failure here is that implementation's (an incumbent's is left out, not blamed)
        ex.request({"cmd": "table", "id": TABLE, "batch": batch})
        ex.running = None
    return chain


def judge(ctx, timing, samples, figure, job):
    """Bound requests for the scenario, then every untrusted implementation's rounds raised to its
    floor where they read under it; `timing["bound"]` says how. Returns (status, reason) when the
    candidate fails here, else None."""
    figs = {n: figure.of(samples[n]["ms"]) for n in ("candidate", "baseline", "incumbent")
            if n in samples and samples[n]["ms"]}
    if "candidate" not in figs or "baseline" not in figs:
        return None
    if getattr(ctx, "device_kind", "cuda") == "cpu":
        return judge_cpu(ctx, timing, samples, figs, job)
    k, widened = None, False
    if getattr(getattr(ctx, "opts", None), "bound_batch", False):
        # K + 1 slots wanted: where the rounds had fewer (a large scenario's sets), the bound's batches
        # get slots of their own from the arenas, the rounds' given back to them meanwhile
        want = batch_size(figs["baseline"], BATCH_CALLS_MAX + 1) + 1
        if job.room is not None and min(len(job.sets[n].slots) for n in figs) < want:
            widened = job.room.widen(job, list(figs), want)
        k = batch_size(figs["baseline"], min(len(job.sets[n].slots) for n in figs))
    try:
        run = measure(job, figs) if k is None else measure_batch(job, figs, k)
    except BaseException:
        # the scenario ends here (its sets, the bound's among them, closed by the loop), or is timed again
        # on new sets (an incumbent left out): the rounds' sets are not made again
        widened = False
        raise
    finally:
        if widened:
            job.room.restore(job)
    record = {"pairs": run["pairs"], "stopped": run["stopped"], "seconds": round(run["seconds"], 4),
              "path": run["path"],
              "margin_ms": single_margin_ms(figs["baseline"]) if k is None else batch_margin_ms(figs["baseline"]),
              "mode": "single" if k is None else "batch",
              "wall_ms": {n: median(w) for n, w in run["walls"].items() if w}}
    if k is not None:
        record["calls"] = k
        record["slots"] = run["slots"]      # each implementation's, the rounds' or the bound's own (widened)
        chain = run["chain"]
        # the batch's calls chained by their data (Chain), and since when not (its reason)
        record["chain"] = None if chain is None else {"input": chain.inp, "output": chain.out, "off": chain.off}
        record["calls_margin_ms"] = calls_margin_ms(figs["baseline"], k)
        record["request_ms"] = {f"{n}:{size}": median(w) for size in ("1", "k")
                                for n, w in run[f"walls_{size}"].items() if w}
        # every pair's two requests (ms, to 0.1 us): what the margins are calibrated from
        record["pairs_ms"] = {n: [[round(a, 4), round(b, 4)] for a, b in zip(run["walls_1"][n], run["walls_k"][n])]
                              for n in run["walls_1"]}
    timing["bound"] = record
    if run["failure"] is not None:
        return run["failure"]
    rng = random.Random(f"{job.seed_base}:bound")
    found = None
    for name in UNTRUSTED:
        if name not in figs or not run["walls"].get(name):
            continue
        diffs = [c - b for c, b in zip(run["walls"][name], run["walls"]["baseline"])]
        ci = interval(diffs, rng)
        floor = None if ci is None else figs["baseline"] + ci[0] - record["margin_ms"]
        if k is not None and ci is not None:
            # the calls' own floor beside the slope's: W_K of the candidate against the baseline's, a call
            # each. A slope can be lowered by a one-call request made dearer; W_K cannot be made cheaper
            # than its calls. The higher of the two holds for honest code (both do) and for a forger.
            per_call = [(c - b) / k for c, b in zip(run["walls_k"][name], run["walls_k"]["baseline"])]
            ci_k = interval(per_call, rng)
            floor_k = figs["baseline"] + ci_k[0] - record["calls_margin_ms"]
            record.setdefault("d_calls_ms", {})[name] = median(per_call)
            record.setdefault("ci_calls_ms", {})[name] = ci_k
            record.setdefault("by", {})[name] = "calls" if floor_k > floor else "slope"
            floor = max(floor, floor_k)
        factor = 1.0
        if figs[name] <= 0:
            factor = None      # no call takes no time: a figure of 0 (or less) is refused below, whatever the floor
        elif floor is not None and floor > figs[name]:
            factor = floor / figs[name]
            samples[name]["ms"] = [x * factor for x in samples[name]["ms"]]
        record.setdefault("d_ms", {})[name] = median(diffs)
        record.setdefault("ci_ms", {})[name] = ci
        record.setdefault("floor_ms", {})[name] = floor
        record.setdefault("figure_ms", {})[name] = figs[name]
        record.setdefault("factor", {})[name] = factor
        forged = factor is None or (factor > REJECT_FACTOR and floor - figs[name] > REJECT_EXCESS_MS)
        if name == "candidate" and factor is None:
            found = ("rejected", f"during timing: the candidate's figures read under the parent's clock: its "
                                 f"executor reported {figs[name] * 1e3:.2f} us a call, and no call takes no time "
                                 f"(by the parent's wall clock around lean calls, {median(diffs) * 1e3:+.2f} us a "
                                 f"call against the baseline's {figs['baseline'] * 1e3:.2f} us, {run['pairs']} "
                                 f"pairs): a figure written smaller than the work")
        elif name == "candidate" and forged:
            under = 100.0 * (1.0 - max(0.0, figs[name]) / floor)
            found = ("rejected", f"during timing: the candidate's figures read {under:.0f} % under the parent's "
                                 f"clock: its executor reported {figs[name] * 1e3:.2f} us a call, and its calls took "
                                 f"at least {floor * 1e3:.2f} us by the parent's wall clock around lean calls beside "
                                 f"the baseline's ({run['pairs']} pairs: {median(diffs) * 1e3:+.2f} us a call "
                                 f"against the baseline's {figs['baseline'] * 1e3:.2f} us, interval from "
                                 f"{ci[0] * 1e3:+.2f} us; margin {record['margin_ms'] * 1e3:.2f} us): a figure "
                                 f"written smaller than the work, or work the figure does not see (host work "
                                 f"inside the call: do it once, outside the call, or not at all)")
        elif name == "incumbent" and forged:
            ctx.messages.append(f"{job.scenario.id}: the incumbent's figures read under the parent's clock "
                                f"({figs[name] * 1e3:.2f} us a call" + (f", raised to its floor, {floor * 1e3:.2f} us)"
                                                                       if factor is not None else ": none taken)"))
    return found


def measure(job, figs):
    """The scenario's bound pairs: {walls: {name: [ms]}, pairs, stopped, seconds, path, failure}."""
    ctx, timer, scenario = job.ctx, job.timer, job.scenario
    names = [n for n in ("candidate", "baseline", "incumbent") if n in figs]
    secret = random.Random(secrets.randbits(64))
    walls = {n: [] for n in names}
    out = {"walls": walls, "pairs": 0, "stopped": "max", "seconds": 0.0, "path": None, "failure": None}
    unchecked = Unchecked(secret)      # values the screen could not vouch for
    tag = 0

    def pair(k, exs):
        nonlocal tag
        chosen = {n: job.sets[n].get(job.decks[n].draw()) for n in names}
        seed = timer.fresh(*chosen.values())
        order = list(names)
        timer.rng.shuffle(order)
        # drawn from the parent's secret and put on the device before either request: once an executor
        # answered, the parent's clock holds the gather alone (_plan_reads says why)
        positions, values = _positions(ctx.task, chosen[names[0]], secret), {}
        for n in order:
            plan = _plan_read(ctx.task, chosen[n], positions)
            ctx.device.flush()
            ctx.device.sync()
            tag += 1
            t0 = time.perf_counter_ns()
            codes = [exs[n].bound_call(chosen[n].j, tag)]
            values[n] = _gather(plan)
            walls[n].append((time.perf_counter_ns() - t0) / 1e6)
            failure = _returned(ctx, n, codes)
            if failure is not None:
                return failure
        out["pairs"] = k + 1
        return _written(ctx, scenario, k, values) or _screened(ctx, scenario, k, seed, positions, values, unchecked)

    return _session(job, names, out, SHARE * float(ctx.task.timing["max_seconds"]), pair,
                    lambda rng: _clear(walls, figs, rng, single_margin_ms(figs["baseline"])), unchecked)


# Batch mode (Options.bound_batch). On an H100 two executors' single-call requests read tens of
# microseconds apart for identical work, steadily over a scenario and either way (docs/harness-lab.md,
# 2026-12-06): what a request costs apart from its call (the wake-ups, the parent's read in its own
# context, the switch between contexts) differs by executor, and single-call walls carry it whole. So
# per pair each executor answers a request of one call and a request of K calls back to back, the
# device synchronised once after the last (bound.c's NOSYNC): W_K - W_1 holds K - 1 calls and none of
# a request's own costs, and its slope is the per-call figure that is paired. K: BATCH_LEAN_MS of the
# baseline's calls, BATCH_CALLS_MIN to BATCH_CALLS_MAX of them, every call on its own slot.
# Calls of one batch that the candidate's process runs at once (it owns the loop and may skip the
# stream order) are ordered by their data where the task allows (Chain).
BATCH_LEAN_MS, BATCH_CALLS_MIN, BATCH_CALLS_MAX = 2.0, 2, 256
# The slope's margin: its calls run back to back on fresh slots, so a launch's own costs are in both
# implementations' slopes alike; what is left is the grid's shape (a fraction of a microsecond). On the
# H200 (3701340) no A/A scenario of rmsnorm's moved at no margin at all (its slack -0.27 us) and an
# honest workspace from the stream-ordered allocator needed 0.25 us; half a microsecond left a forger
# at 0.6 its gain on r128-c4096 (3.9 us calls: the margin was 16 % of the call). So 0.2 us.
BATCH_ABS_MARGIN_MS = 0.0002
# The calls' own floor (W_K against the baseline's) takes a K-th of REQUEST_SPREAD_MS as margin beside
# the slope's (calls_margin_ms). That floor is what stands when a forger makes its one-call requests
# dearer to flatten its slope (forge6).

# Positions read in every call's outputs once a batch answered (per output and slot, drawn then).
BATCH_POSITIONS = 4


def batch_size(base_figure, slots):
    """K for a batch request, or None where the slots cannot hold one call and K more apart (then the
    single-call requests of measure() are made)."""
    if slots < 1 + BATCH_CALLS_MIN:
        return None
    return max(BATCH_CALLS_MIN, min(slots - 1, BATCH_CALLS_MAX, math.ceil(BATCH_LEAN_MS / max(base_figure, 1e-6))))


def measure_batch(job, figs, k):
    """measure() in batch mode: {walls: {name: [ms a call, the slope of a pair]}, walls_1 and walls_k:
    {name: [ms a request]}, ...}. A pair: one new seed's inputs in 1 + k slots of each implementation,
    then, in an order drawn over implementations and sizes, each implementation's request of one call
    and its request of k calls, the L2 flushed before each; the parent's clock stops once its own read
    of every call's outputs (BATCH_POSITIONS each, drawn secretly before the request) is back: a call
    answered before its work was done reads poison, whichever of the k it is. Where the task has a chain
    (job.chain), the k calls are a stretch of it: each after the first reads the output of the one
    before, and CHAIN_CHECKS of them are checked against the baseline's call on the same input
    (_chain_checked). Once all answered, CPU_CHECKED of the unchained slots drawn then are read in
    every implementation at the same positions and checked as measure() does."""
    ctx, timer, scenario = job.ctx, job.timer, job.scenario
    names = [n for n in ("candidate", "baseline", "incumbent") if n in figs]
    secret = random.Random(secrets.randbits(64))
    walls, one, many = ({n: [] for n in names} for _ in range(3))
    chain = job.chain
    out = {"walls": walls, "walls_1": one, "walls_k": many, "pairs": 0, "stopped": "max", "seconds": 0.0,
           "path": None, "failure": None, "calls": k, "chain": chain,
           "slots": min(len(job.sets[n].slots) for n in names)}
    unchecked = Unchecked(secret)
    tag = 0

    def pair(p, exs):
        nonlocal tag
        linked = chain is not None and chain.off is None
        chosen, seed = _fresh_slots(job, names, k + 1, chain if linked else None)
        order = [(n, size) for n in names for size in (1, k)]
        timer.rng.shuffle(order)
        for n, size in order:
            mine = chosen[n][:1] if size == 1 else chosen[n][1:]
            js = [s.j for s in mine]
            if linked and size > 1:
                js = js[:1] + [chain.offset[n] + j for j in js[1:]]
            tags = list(range(tag + 1, tag + size + 1))
            tag += size
            plan = _plan_reads(ctx.task, mine, secret)      # drawn and on the device before the clock starts
            ctx.device.flush()
            ctx.device.sync()
            t0 = time.perf_counter_ns()
            codes = exs[n].bound_calls(js, tags, sync_each=False)
            read = {n: _gather(plan)}
            (one if size == 1 else many)[n].append((time.perf_counter_ns() - t0) / 1e6)
            failure = _returned(ctx, n, codes) or _written(ctx, scenario, p, read)
            if failure is not None:
                return failure
            if linked and n == "baseline" and size > 1 and any(nonfinite_count(v) for v in read[n].values()):
                chain.off = (f"the baseline's own chain of {k} calls left the finite range ({chain.out} into "
                             f"{chain.inp}): batches unchained from pair {p + 2}")
        for n in names:
            walls[n].append((many[n][-1] - one[n][-1]) / (k - 1))
        out["pairs"] = p + 1
        if not linked:
            return _checked(ctx, scenario, p, seed, chosen, secret, unchecked)
        return (_checked(ctx, scenario, p, seed, {n: c[:2] for n, c in chosen.items()}, secret, unchecked)
                or (None if chain.off is not None else _chain_checked(ctx, job, p, chosen, exs, secret, unchecked)))

    return _session(job, names, out, SHARE * float(ctx.task.timing["max_seconds"]), pair,
                    lambda rng: (_clear(walls, figs, rng, batch_margin_ms(figs["baseline"]))
                                 and _clear(many, figs, rng, calls_margin_ms(figs["baseline"], k), per=k)),
                    unchecked)


# Chained calls of a pair checked, each in every untrusted implementation: the baseline's call (an
# untimed bound request) on that implementation's own previous output and the slot's other inputs,
# read at the same positions as the chained call's output.
CHAIN_CHECKS = 2


def _chain_checked(ctx, job, p, chosen, exs, secret, unchecked):
    """CHAIN_CHECKS chained calls of a pair (positions 2.. of `chosen`: the k calls' second on) against
    the baseline's call on the same input: the untrusted call's previous output, copied by the parent
    into the baseline's slot of that call (whose other inputs are the pair's fresh values, and whose
    own values were read already). Poison, then the screen; what it cannot vouch for waits for the
    reference, on those inputs. A failure or None."""
    chain, task, base = job.chain, ctx.task, chosen["baseline"]
    for name in (n for n in UNTRUSTED if n in chosen):
        mine = chosen[name]
        for t in secret.sample(range(2, len(mine)), min(CHAIN_CHECKS, len(mine) - 2)):
            twin, before = base[t], mine[t - 1].tensors[chain.out]
            bad = nonfinite_count(before)
            if bad and not nonfinite_count(base[t - 1].tensors[chain.out]):
                return _not_finite(job.scenario, p, name, chain, bad, before.numel())
            twin.tensors[chain.inp].copy_(before)
            for arg in task.outputs():
                poison(twin.tensors[arg.name])
            _returned(ctx, "baseline", [exs["baseline"].bound_call(twin.j, 0)])
            positions = _positions(task, mine[t], secret)
            values = {name: _read(task, mine[t], positions), "baseline": _read(task, twin, positions)}
            failure = _written(ctx, job.scenario, p, values)
            if failure is not None:
                return failure
            if not _vouched(ctx, job.scenario, values, name):
                unchecked.add((p, name, lambda twin=twin: _inputs(task, twin), positions, values[name]))
    return None


# What a chained call found wrong means, in the reasons _not_finite and _against_reference give.
_UNORDERED = ("the call read its input before that work was done (work on a stream of its own that does not wait "
              "for the stream it is given), or computed less than in timed calls; order every read after the work "
              "queued on the given stream")
_CHAINED = "a call whose input was the output of the call queued just before it on the same stream"


def _not_finite(scenario, p, name, chain, bad, n):
    return ("incorrect", f"during timing: bound request #{p + 1} of {scenario.id} ({name}): {chain.out} held {bad} "
                         f"NaN/Inf of {n} values after {_CHAINED} (the baseline's held none): {_UNORDERED}")


def _inputs(task, slot):
    return {a.name: slot.tensors[a.name].clone() for a in task.inputs()}


# CPU tasks (issue 39): a request's lean calls, sent at once and answered in turn (executor.handle.bound_calls):
# at least CPU_LEAN_MS of the baseline's calls, CPU_CALLS to CPU_CALLS_MAX of them; CPU_CHECKED of a
# pair's slots read at drawn positions; at least CPU_MIN_SECONDS a scenario whatever its max_seconds
# (the CPU task's 0.25 s is for CI), the pairs being what the bound's interval is made of.
CPU_CALLS, CPU_CALLS_MAX, CPU_LEAN_MS, CPU_CHECKED, CPU_MIN_SECONDS = 16, 256, 0.2, 4, 0.15


def judge_cpu(ctx, timing, samples, figs, job):
    """judge() on a CPU task. A CPU figure is the kernel's account of the executor's CPU over a request
    less the null request's (loop.py): only the calibration and the request path lie in the
    candidate's reach, and the rounds' figures drift with the machine's load (identical code read
    1.9 and 4.4 ms in one evaluation on the loaded development VM). So the bound is on differences
    taken moments apart: per round the candidate's figure less the baseline's (D), per bound pair
    its lean calls' CPU less the baseline's (d, measure_cpu). When the rounds' interval lies wholly
    below the lean calls' less the margin (work its figures leave out: a null request made dearer, a
    request path made cheaper), the candidate's rounds are raised until their median D reaches the
    lean calls' lower end less the margin, and the candidate is rejected when that is more than
    REJECT_EXCESS_MS and REJECT_FACTOR of its figure. With few rounds on a loaded machine the rounds'
    interval is wide: what a forger can hide is that interval's upper half and the margin."""
    rng = random.Random(f"{job.seed_base}:bound")
    margin = margin_ms(figs["baseline"])
    rounds = {n: [c - b for c, b in zip(samples[n]["ms"], samples["baseline"]["ms"])]
              for n in UNTRUSTED if n in figs}
    rounds_ci = {n: interval(v, rng) for n, v in rounds.items()}
    run = measure_cpu(job, figs, rounds_ci, margin)
    record = {"pairs": run["pairs"], "stopped": run["stopped"], "seconds": round(run["seconds"], 4),
              "path": run["path"], "margin_ms": margin, "clock": "cpu", "calls": run.get("calls"),
              "wall_ms": {n: median(w) for n, w in run["walls"].items() if w}}
    timing["bound"] = record
    if run["failure"] is not None:
        return run["failure"]
    found = None
    for name in rounds:
        if not run["walls"].get(name):
            continue
        diffs = [c - b for c, b in zip(run["walls"][name], run["walls"]["baseline"])]
        ci, rci = interval(diffs, rng), rounds_ci[name]
        shift = 0.0
        if ci is not None and rci is not None and rci[1] < ci[0] - margin:
            # wholly below: the rounds' median brought up to the lean calls' lower end less the margin
            shift = ci[0] - margin - median(rounds[name])
            samples[name]["ms"] = [x + shift for x in samples[name]["ms"]]
        factor = (figs[name] + shift) / figs[name] if figs[name] > 0 else None
        record.setdefault("d_ms", {})[name] = median(diffs)
        record.setdefault("ci_ms", {})[name] = ci
        record.setdefault("rounds_d_ms", {})[name] = median(rounds[name]) if rounds[name] else None
        record.setdefault("rounds_ci_ms", {})[name] = rci
        record.setdefault("figure_ms", {})[name] = figs[name]
        record.setdefault("factor", {})[name] = factor
        forged = shift > 0 and (factor is None or (factor > REJECT_FACTOR and shift > REJECT_EXCESS_MS))
        if name == "candidate" and forged:
            found = ("rejected", f"during timing: the candidate's figures read {shift * 1e3:.2f} us a call under the "
                                 f"parent's clock: in the rounds its calls cost {rci[1] * 1e3:+.2f} us or less beside "
                                 f"the baseline's, by the kernel's account of its CPU read by the parent around lean "
                                 f"calls {ci[0] * 1e3:+.2f} us or more ({run['pairs']} pairs of {run.get('calls')} "
                                 f"calls; margin {margin * 1e3:.2f} us): work its figures leave out (a request "
                                 f"path or calibration changed from inside its process), or less work in its timed "
                                 f"calls than in these (hack 11: one code path for every call)")
        elif name == "incumbent" and forged:
            ctx.messages.append(f"{job.scenario.id}: the incumbent's figures read under the parent's clock (raised by "
                                f"{shift * 1e3:.2f} us a call)")
    return found


def measure_cpu(job, figs, rounds_ci=None, margin=0.0):
    """A CPU scenario's bound pairs, as measure() with the CPU clock. A pair: one new seed's inputs in
    k slots of each implementation (k lean calls of at least CPU_LEAN_MS in all, CPU_CALLS to
    CPU_CALLS_MAX of them), their data flushed as a round's is, then in an order drawn each
    implementation's k lean calls sent at once (bound.c's loop, nothing synchronised): its figure is
    the kernel's account of its executor's CPU over them, read by the parent, a call. What the
    executor's own request path costs (a request's JSON, the null requests that calibrate it) is not
    in it: only a read and a write a call, the same code in both executors. Outputs are poisoned and,
    in CPU_CHECKED of the slots drawn once both answered, read at drawn positions. {walls: {name: [ms
    a call]}, ...} as measure()."""
    ctx, timer, scenario = job.ctx, job.timer, job.scenario
    names = [n for n in ("candidate", "baseline", "incumbent") if n in figs]
    secret = random.Random(secrets.randbits(64))
    slots = min(len(job.sets[n].slots) for n in names)
    k = max(1, min(slots, CPU_CALLS_MAX, max(CPU_CALLS, math.ceil(CPU_LEAN_MS / max(figs["baseline"], 1e-6)))))
    walls = {n: [] for n in names}
    out = {"walls": walls, "pairs": 0, "stopped": "max", "seconds": 0.0, "path": None, "failure": None, "calls": k}
    unchecked = Unchecked(secret)
    tag = 0

    def pair(p, exs):
        nonlocal tag
        chosen, seed = _fresh_slots(job, names, k)
        ctx.device.flush([s.span for n in names for s in chosen[n]])
        order = list(names)
        timer.rng.shuffle(order)
        for n in order:
            tags = list(range(tag + 1, tag + k + 1))
            tag += k
            c0 = exs[n].cpu_ns()
            codes = exs[n].bound_calls([s.j for s in chosen[n]], tags)
            c1 = exs[n].cpu_ns()
            walls[n].append((c1 - c0) / 1e6 / k)
            failure = _returned(ctx, n, codes, sync=False)
            if failure is not None:
                return failure
        out["pairs"] = p + 1
        return _checked(ctx, scenario, p, seed, chosen, secret, unchecked)

    budget = max(SHARE * float(ctx.task.timing["max_seconds"]), CPU_MIN_SECONDS)
    return _session(job, names, out, budget, pair, lambda rng: _clear_cpu(walls, rounds_ci, margin, rng),
                    unchecked)


def _session(job, names, out, budget, pair, clear, unchecked):
    """A scenario's bound session, whatever its pairs are: each executor of `names` in a session of bound
    requests, then `pair(p, executors)` per pair (it records its walls and returns a failure or None),
    until `clear(rng)` holds at a count in CHECKS (more pairs could only confirm the figures), PAIRS_MAX,
    or `budget` seconds (PAIRS_MIN pairs at least); then the values the screen could not vouch for
    against the reference. The sessions are ended however it goes (on an exception too: an executor
    left in its session would read the next request as a bound one and never answer it; seen on the
    GPU), the pinning restored. Returns `out`, filled."""
    ctx, timer = job.ctx, job.timer
    exs = {n: _executor(ctx, n) for n in names}
    opened, paths, clean = [], {}, False
    t_start = time.monotonic()
    try:
        for n in names:
            exs[n].running = n      # ChildFailure.who: whose failure it is (the incumbent's is not the candidate's)
            exs[n].bound_open(TABLE)
            opened.append(n)
        for p in range(PAIRS_MAX):
            job.pin.round(timer.rng)
            failure = pair(p, exs)
            if failure is not None:
                out["failure"] = failure
                return out
            if ctx.deadline is not None and time.monotonic() > ctx.deadline:
                raise ChildFailure("timeout", "the evaluation's time limit was reached during this scenario")
            n_pairs = p + 1
            if n_pairs in CHECKS and clear(random.Random(f"{job.seed_base}:bound:{n_pairs}")):
                out["stopped"] = "clear"
                break
            if n_pairs >= PAIRS_MIN and time.monotonic() - t_start > budget:
                out["stopped"] = "time"
                break
        out["failure"] = _against_reference(ctx, job.scenario, unchecked)
        clean = True
    finally:
        out["seconds"] = time.monotonic() - t_start
        for n in opened:
            if clean or out["failure"] is not None:
                paths[n] = exs[n].bound_close().get("path")
            else:
                _end(exs[n])
            exs[n].running = None
        job.pin.restore()
    out["path"] = paths.get("candidate")
    return out


def _end(ex):
    """End an executor's bound session on the way out of an exception (raised in the parent, or by another
    executor), so that its next request is not read as a bound request; one that cannot answer is killed."""
    try:
        ex.bound_close()
    except ChildFailure:
        pass      # dead, or killed by its handle for a reply that was not the session's end
    except OSError:
        ex.kill()


def _fresh_slots(job, names, count, chain=None):
    """`count` slots drawn for a pair (a stretch of `chain` from a slot drawn), the same indices in every
    implementation's set, all holding one new seed's values: ({name: [slot]}, seed)."""
    if chain is not None:
        picks = chain.stretch(job.timer.rng.randrange(len(chain.order)), count)
    else:
        picks = job.timer.rng.sample(range(min(len(job.sets[n].slots) for n in names)), count)
    chosen = {n: [job.sets[n].get(j) for j in picks] for n in names}
    return chosen, job.timer.fresh_slots(chosen)


def _returned(ctx, name, codes, sync=True):
    """A request's answers [(return code, synchronisation's result)]: a fault on the device raises (its
    executor's); the candidate's first non-zero return code is its failure; an incumbent's leaves it out."""
    if sync and codes[-1][1]:
        raise ChildFailure("call", f"the call failed on the GPU during a bound request (CUDA driver error "
                                   f"{codes[-1][1]})", name)
    rc = next((r for r, _ in codes if r), 0)
    if rc and name == "candidate":
        return ("runtime_error", f"during timing: {ctx.task.entry} returned {rc} in a bound request")
    if rc and name == "incumbent":
        _incumbent_failed(f"it returned {rc} in a bound request")
    return None


def _checked(ctx, scenario, p, seed, chosen, secret, unchecked):
    """CPU_CHECKED of a pair's slots, drawn once every implementation answered, read in each at the same
    positions: poison, then the screen (what it cannot vouch for waits for the reference). A failure or
    None."""
    names = list(chosen)
    count = len(chosen[names[0]])
    for i in secret.sample(range(count), min(CPU_CHECKED, count)):
        positions = _positions(ctx.task, chosen[names[0]][i], secret)
        values = {n: _read(ctx.task, chosen[n][i], positions) for n in names}
        failure = _written(ctx, scenario, p, values) or _screened(ctx, scenario, p, seed, positions, values, unchecked)
        if failure is not None:
            return failure
    return None


def _clear_cpu(walls, rounds_ci, margin, rng):
    """Whether every untrusted implementation's rounds already lie above any bound the lean calls can
    still give (lower(D) >= upper(d) - margin): more pairs could only confirm it."""
    for name, rci in (rounds_ci or {}).items():
        if not walls.get(name):
            continue
        ci = interval([c - b for c, b in zip(walls[name], walls["baseline"])], rng)
        if ci is None or rci is None or rci[0] < ci[1] - margin:
            return False
    return True


def interval(diffs, rng):
    """95 % interval of the median of the paired differences: the bootstrap's (stats.median_ci),
    widened to the distribution-free one from order statistics where that is wider (it holds 95 %
    whatever the distribution from 6 pairs on, and is [min, max] under that; the bootstrap covers less
    on few pairs, 91 % at 8: stats.ratio_ci). None under 3 pairs."""
    boot = median_ci(diffs, rng)
    if boot is None:
        return None
    shift = min(diffs) - 1.0      # ratio_ci takes positive values: the order is what it reads
    lo, hi = ratio_ci([d - shift for d in diffs])
    return [min(boot[0], lo + shift), max(boot[1], hi + shift)]


def _clear(walls, figs, rng, margin, per=1):
    """Whether every untrusted figure already lies above any floor the interval can still give
    (figure >= baseline's figure + upper(d) - margin): more pairs could only confirm it. `per`: the
    calls each wall holds (batch mode's K calls' walls), the differences taken a call each."""
    for name in UNTRUSTED:
        if name not in figs:
            continue
        ci = interval([(c - b) / per for c, b in zip(walls[name], walls["baseline"])], rng)
        if ci is None or figs[name] < figs["baseline"] + ci[1] - margin:
            return False
    return True


def _positions(task, slot, secret):
    """{output: positions} drawn now (POSITIONS per output, among its elements)."""
    out = {}
    for arg in task.outputs():
        n = slot.tensors[arg.name].numel()
        out[arg.name] = [secret.randrange(n) for _ in range(min(POSITIONS, n))]
    return out


def _plan_read(task, slot, positions):
    """_plan_reads for one slot at `positions` ({output: positions})."""
    plan = {}
    for arg in task.outputs():
        flat = slot.tensors[arg.name].reshape(1, -1)
        plan[arg.name] = (flat, torch.zeros(len(positions[arg.name]), dtype=torch.long, device=flat.device),
                          torch.tensor(positions[arg.name], dtype=torch.long, device=flat.device))
    return plan


def _read(task, slot, positions):
    """{output: the values at `positions`, on the host}, read through the parent's own mapping by a
    gather kernel in its own context, which waits for the other process's work on the GPU."""
    return _gather(_plan_read(task, slot, positions))


def _plan_reads(task, slots, secret):
    """{output: (stacked view, rows, cols)}: BATCH_POSITIONS positions of every slot in `slots` (one
    implementation's, all of one Slots), drawn from the parent's secret before the request is sent and
    put on the device then, so that what the parent does once the executor answered is the gather alone:
    an executor that answers before its work is done must not have the parent's own preparation of the
    read overlap that work, which an honest executor's wall holds (the suspected way forge5 read ~10 us a
    call under the baseline on the H100, docs/harness-lab.md, 2026-12-07)."""
    owner = slots[0].owner
    plan = {}
    for arg in task.outputs():
        view = owner.stacked(arg.name)
        n = view.shape[1]
        rows, cols = [], []
        for s in slots:
            for _ in range(min(BATCH_POSITIONS, n)):
                rows.append(s.j)
                cols.append(secret.randrange(n))
        plan[arg.name] = (view, torch.tensor(rows, dtype=torch.long, device=view.device),
                          torch.tensor(cols, dtype=torch.long, device=view.device))
    return plan


def _gather(plan):
    """{output: values} of a plan (_plan_reads): one gather per output over the slots' stacked copies, in
    the parent's context, which waits for the other process's work on the GPU (as _read)."""
    return {name: view[r, c].cpu() for name, (view, r, c) in plan.items()}


def _incumbent_failed(why):
    """The incumbent (the run's best so far, never trusted) failed a bound request: it is left out from
    here on and the scenario timed again without it (evaluate._Pass), the candidate never blamed."""
    raise ChildFailure("forged", f"the incumbent failed its bound requests: {why}", "incumbent")


def _written(ctx, scenario, k, values):
    """(status, reason) when the candidate's outputs held poison where they were read (the incumbent's:
    left out)."""
    for name in UNTRUSTED:
        for out, vals in values.get(name, {}).items():
            left = int(unwritten(vals).sum())
            if left and name == "incumbent":
                _incumbent_failed(f"{out} still held poison at {left} positions read after it answered")
            if left:
                return ("rejected", f"during timing: bound request #{k + 1} of {scenario.id}: {out} still held the "
                                    f"harness's poison at {left} of {vals.numel()} positions the parent read right "
                                    f"after the {name}'s executor answered: it answered before its work was done, or "
                                    f"the call did not write them (hack 2); finish the work before returning")
    return None


def _screened(ctx, scenario, k, seed, positions, values, unchecked):
    """The untrusted values against the baseline's for the same inputs, within the re-checks' screen
    (loop.screen_limits, from the correctness stage); what the screen cannot vouch for waits for the
    reference (unchecked). Returns (status, reason) only for a value that is not a number."""
    for name in UNTRUSTED:
        if name in values and not _vouched(ctx, scenario, values, name):
            unchecked.add((k, name, seed, positions, values[name]))
    return None


def _vouched(ctx, scenario, values, name):
    """Whether `name`'s values lie within the screen of the baseline's (False without a screen)."""
    screen = getattr(ctx, "screens", {}).get(scenario.id)
    base = values.get("baseline")
    if screen is None or base is None:
        return False
    return all(check_output(out, vals, base[out], screen[out])[0] for out, vals in values[name].items())


# Values checked against the reference when the screen cannot vouch for them (refused by it, or no
# screen for the scenario): a secret draw of at most this many (each computes the reference again).
REFERENCE_CHECKS = 4


class Unchecked:
    """The values the screen could not vouch for: REFERENCE_CHECKS of them kept, a secret draw over every
    one added (a reservoir). An entry: (pair, name, inputs, positions, values), its inputs the seed they
    were made from, or a function that copies them (called only when the entry is kept)."""

    def __init__(self, secret):
        self.secret, self.seen, self.kept = secret, 0, []

    def add(self, entry):
        self.seen += 1
        if len(self.kept) < REFERENCE_CHECKS:
            i = len(self.kept)
            self.kept.append(None)
        else:
            i = self.secret.randrange(self.seen)
            if i >= REFERENCE_CHECKS:
                return
        k, name, src, positions, values = entry
        self.kept[i] = (k, name, src() if callable(src) else src, positions, values)


def _against_reference(ctx, scenario, unchecked):
    """(status "incorrect", reason) when a bound request's values are off the reference's, else None."""
    for k, name, src, positions, vals in unchecked.kept:
        if isinstance(src, dict):      # a chained call's inputs: the reference on them
            try:
                _, ref, tols = ctx.oracle.expected_for(scenario.params, src)
            except TaskError as exc:
                # inputs outside what the reference takes (its outputs not finite on them): that value is not
                # judged; a call's own non-finite outputs are refused before (_chain_checked)
                ctx.messages.append(f"{scenario.id}: a chained bound request's values were not checked against the "
                                    f"reference, which refused its inputs ({str(exc)[:160]})")
                continue
        else:
            _, ref, tols = ctx.oracle.expected(scenario.params, src)
        for out, got in vals.items():
            want = ref[out].reshape(-1)[torch.tensor(positions[out], dtype=torch.long, device=ref[out].device)]
            ok, _, reason = check_output(out, got, want.cpu(), tols[out][0])
            if not ok and name == "incumbent":
                _incumbent_failed(f"bound request #{k + 1}: {reason}")
            if not ok and isinstance(src, dict):
                return ("incorrect", f"during timing: bound request #{k + 1} of {scenario.id} ({name}), {_CHAINED}: "
                                     f"{reason} at positions the parent drew after the batch: {_UNORDERED}")
            if not ok:
                return ("incorrect", f"during timing: bound request #{k + 1} of {scenario.id} ({name}): {reason} at "
                                     f"positions the parent drew after the call: a call that computes less, or "
                                     f"differently, when it is not timed (hack 11: one code path for every call)")
    return None
