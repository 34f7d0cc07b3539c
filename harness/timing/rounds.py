"""The timing loop's rounds: where they run (one core each, drawn at random) and when they stop."""

import math
import os

from ..executor.lanes import lane_of, peer_executors
from .stats import MEDIAN, VERDICT_MARGIN, median, ratio_ci, rse_of_median


def executor_of(ctx, name):
    """The executor that runs implementation `name`: the candidate's, its twin running the baseline,
    the incumbent's, or the peers' (the lane `name` names)."""
    side = {"candidate": "cand", "baseline": "ref", "incumbent": "inc"}.get(name, "peer")
    if side == "peer":
        lanes = peer_executors(ctx)
        return lanes[lane_of(name)] if lanes else None
    return {"cand": ctx.cand, "ref": ctx.refx, "inc": getattr(ctx, "incx", None)}[side]

# Past the task's max_seconds a scenario still gets min_reps rounds, up to this many times max_seconds.
HARD_CAP_FACTOR = 4


class Deck:
    """The slots a CUDA scenario's rounds take, one implementation's: every slot once, in an order
    drawn at random, then again in a new order. A slot's placement costs a tiny kernel up to 8 %
    more or less than another's, the same all evaluation (H200, docs/harness-lab.md "Fifth session");
    drawn with replacement, how often each slot came up was noise of its own in the median, while
    every slot once per pass leaves only which slots the last pass reached."""

    def __init__(self, rng, count):
        self.rng, self.count, self.left = rng, count, []

    def draw(self):
        if not self.left:
            self.left = list(range(self.count))
            self.rng.shuffle(self.left)
        return self.left.pop()


class Pinning:
    """Every round, the parent and both executors on one core, drawn at random: on a shared machine
    the cores are loaded differently (other processes evict a core's caches and share its time), and
    an executor left on the busier core reads slower for identical code, round after round."""

    def __init__(self, pids):
        self.pids = pids
        try:
            self.before = {pid: os.sched_getaffinity(pid) for pid in pids}
        except OSError:
            self.before = {}
        self.cores = sorted(self.before.get(0, ()))

    def round(self, rng):
        if len(self.cores) < 2:
            return
        core = {rng.choice(self.cores)}
        for pid in self.pids:
            try:
                os.sched_setaffinity(pid, core)
            except OSError:
                pass

    def restore(self):
        for pid, cores in self.before.items():
            try:
                os.sched_setaffinity(pid, cores)
            except OSError:
                pass


def paired_ratios(samples):
    """{implementation: per-round ratio of its time to the candidate's} (> 1: the candidate is faster)."""
    cand = samples.get("candidate", {}).get("ms", [])
    return {name: [o / c for c, o in zip(cand, s["ms"]) if c > 0 and o > 0]
            for name, s in samples.items() if name != "candidate"}


def done(samples, policy, elapsed):
    """Whether a scenario's rounds may stop. `policy["figure"]` (a stats.Figure, the median when
    absent) is how a time is made of the rounds. `policy["kept"]` (optional) names implementations
    whose times are kept for later evaluations (the peers' figures, harness/timing/peer_figures.py): each
    must also reach the target on its own figure, for up to `policy["kept_seconds"]`. A later
    evaluation pairs every round of its candidate with that one figure, so the figure's own error is
    an offset no later interval shows; a ratio far from 1.0 settles its verdict in 2 x min_reps
    rounds, not the figure (a cuDNN call in two modes 12 % apart read by 20 rounds, docs/harness-lab.md)."""
    counts = [len(s["ms"]) for s in samples.values()]
    if not counts:
        return True
    n = min(counts)
    if n >= policy["max_reps"] or (elapsed >= HARD_CAP_FACTOR * policy["max_seconds"] and n >= 3):
        return True
    figure = policy.get("figure", MEDIAN)
    if n < policy["min_reps"]:
        return policy.get("early", True) and _settled_early(samples, policy, n, figure)
    kept = [s["ms"] for name, s in samples.items() if name in policy.get("kept", ())]
    loose = any(figure.rse(ms) > policy["target_rse"] for ms in kept)
    if elapsed >= policy["max_seconds"]:
        return not (loose and elapsed < policy.get("kept_seconds", 0.0))
    if loose:
        return False
    # The candidate's and the baseline's own times too, to the target: their times are shown and
    # compared from one evaluation to the next as much as their ratio, and a paired ratio of times in
    # 32 ns steps can read settled, or far from 1.0, in 20-30 rounds while the times are still loose
    # (H200: r1-c4096's baseline stopped at 32 rounds and read 2.2 % off a 208-round evaluation; in
    # the seventh session an r1-c1024 stopped at 28 rounds on the "far" rule below with identical
    # code reading 4 % apart, where three evaluations of 185-215 rounds read within 1.5 %). The
    # error is the figure's own (for the trimmed mean, the winsorized spread: a MAD of zero on a run
    # of equal steps let the median's read settled). A peer far from the candidate still stops the
    # rounds early: its verdict is all that is asked of it (a kept one has its own rule above).
    # CUDA tasks only (`own_times`, executor_cuda_timing): a CPU task's times move with the
    # process's layout by more than that from one evaluation to the next (docs/harness-lab.md, "Layout").
    if policy.get("own_times") and any(figure.rse(samples[n]["ms"]) > OWN_FACTOR * policy["target_rse"]
                                         for n in ("candidate", "baseline") if n in samples):
        return False
    # Tight enough: the paired ratios are what a speedup is made of (the times alone when unpaired).
    # A ratio is done once its spread is the target's, or once it is so far from 1.0 that more rounds
    # could not change its verdict (a candidate 6x the peer needs no 2 % figure to be faster).
    ratios = list(paired_ratios(samples).values())
    if ratios:
        # The spread of a few rounds is itself uncertain: far from 1.0 is trusted from 2 x min_reps on.
        far_ok = n >= 2 * policy["min_reps"]
        return all(_settled(v, policy["target_rse"], far_ok) for v in ratios)
    return all(figure.rse(s["ms"]) <= policy["target_rse"] for s in samples.values())


# How loose the candidate's and the baseline's own times may be (in target_rse) before the cap.
OWN_FACTOR = 1.0

# Before min_reps, a scenario stops from EARLY_REPS rounds on once every paired ratio's interval
# (stats.ratio_ci: [min, max] at 6-8 rounds, which covers the median 96.9-99.2 % of the time) already
# settles its verdict: inside the `same` band (1 / (1 + VERDICT_MARGIN), 1 + VERDICT_MARGIN), or past
# EARLY_FAR on either side; the candidate's and the baseline's own times (CUDA, `own_times`) within
# EARLY_OWN_FACTOR of the target and at least EARLY_MIN_MS each, so that CUPTI's 32 ns steps and a
# small kernel's placements (a run of equal steps reads an error of nothing, test_timing_rules.py) are
# not what decides; never while a figure is being kept for later evaluations (`kept`), nor (CUDA,
# `early_guard`) where any call came past one of the bounds' limits, whose intervals are over rounds.
# The peers' kept figures (`early_fixed`), paired with every round after the loop, must settle too.
# Replayed on the H100's full flash evaluation at a2764bf (every round's ratio in `timing.ratios`): 127 of 200
# scenarios stop at 6 or 9 rounds instead of 10 or more, 489 of 2618 rounds fewer, every verdict the
# one all its rounds gave (docs/harness-lab.md, "2026-12-06: the reference cache and early stops").
# A `same` settled early cannot make a difference of identical code; `faster` or `slower` only past
# EARLY_FAR, which noise about 1.0 does not reach in six rounds of a 0.1 ms call.
EARLY_REPS = 6
EARLY_FAR = 1.05
EARLY_OWN_FACTOR = 0.5
EARLY_MIN_MS = 0.1


def _settled_early(samples, policy, n, figure):
    if n < EARLY_REPS or policy.get("kept"):
        return False
    ratios = list(paired_ratios(samples).values())
    cand = samples.get("candidate", {}).get("ms", [])
    # Figures the candidate's rounds are paired with afterwards (CUDA: the peers' kept figures).
    ratios += [[ms / c for c in cand if c > 0] for ms in policy.get("early_fixed", {}).values()]
    if not ratios:
        return False
    for name in ("candidate", "baseline"):
        if name in samples:
            ms = samples[name]["ms"]
            if not figure.of(ms) or figure.of(ms) < EARLY_MIN_MS:
                return False
            if policy.get("own_times") and figure.rse(ms) > EARLY_OWN_FACTOR * policy["target_rse"]:
                return False
    guard = policy.get("early_guard")      # CUDA: every call inside the bounds (cuda_loop.bounds_clear)
    return all(_verdict_settled(ratio_ci(v)) for v in ratios) and (guard is None or guard(samples))


def _verdict_settled(ci):
    if ci is None:
        return False
    lo, hi = ci
    return (1.0 / (1.0 + VERDICT_MARGIN) < lo and hi < 1.0 + VERDICT_MARGIN) or lo > EARLY_FAR or hi < 1.0 / EARLY_FAR


# A ratio whose median is this many of its standard errors from 1.0 has settled its verdict.
DECISIVE_SE = 5.0


def _settled(ratios, target_rse, far_ok=True):
    rse = rse_of_median(ratios)
    if rse <= target_rse:
        return True
    if not far_ok:
        return False
    m = median(ratios)
    return m is not None and m > 0 and math.isfinite(m) and math.isfinite(rse) and abs(math.log(m)) >= DECISIVE_SE * rse
