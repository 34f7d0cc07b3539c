"""Side-by-side timing through executors, measured by the trusted parent.

Each round times every implementation once, in a shuffled order. One timed call: the parent writes
fresh inputs (new seed) and poison into one of 2-4 sets through its own mapping, flushes the cache
(writing 2 x the last-level cache; its writes also invalidate the executor core's copies of the
inputs), then reads its clock and the kernel's account of the executor's CPU time (every thread,
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

import random
import secrets
import time

from .correctness import check_output
from .executor_eval import (GAP_MARGIN_MS, OTHER_THREADS_CPU_MS, RECHECK_BYTES, RECHECK_MAX, RECHECK_MIN, Sets,
                            call_args, fill, other_threads_finding, outputs_of)
from .executor_proc import ChildFailure
from .scenario_eval import SET_BUDGET_BYTES, fail
from .shm import unwritten
from .stats import median, rse_of_median


class Timer:
    def __init__(self, ctx, scenario, seed_base, rng):
        self.ctx, self.task, self.scenario = ctx, ctx.task, scenario
        self.params, self.scalars = scenario.params, ctx.task.scalar_values(scenario)
        self.rng, self.seed_next = rng, seed_base
        self.last_cpu = {}

    def fresh(self, bs):
        inputs = self.ctx.oracle.inputs(self.params, self.seed_next)
        seed, self.seed_next = self.seed_next, self.seed_next + 1
        fill(self.task, bs, inputs)
        return seed

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


def run_timing(ctx, scenario, entry, seed_base, rng):
    task = ctx.task
    impls = ["candidate"] + (["baseline"] if ctx.has_baseline else []) + \
        ([f"peer:{p}" for p, _ in task.peers] if ctx.with_peers else [])
    set_bytes = ctx.oracle.set_bytes(scenario.params)
    n_sets = max(2, min(4, SET_BUDGET_BYTES[ctx.device_kind] // max(1, set_bytes)))
    policy = dict(task.timing)
    timer = Timer(ctx, scenario, seed_base, rng)
    probe = ctx.oracle.inputs(scenario.params, seed_base)
    shapes_in = {k: tuple(v.shape) for k, v in probe.items()}
    shapes_out = ctx.oracle.output_shapes(scenario.params)
    sets = {"cand": Sets(ctx.cand, task, shapes_in, shapes_out), "ref": Sets(ctx.refx, task, shapes_in, shapes_out)}
    try:
        return _loop(ctx, timer, entry, impls, sets, n_sets, policy, scenario)
    finally:
        for s in sets.values():
            s.close()


def _executor(ctx, name):
    return ctx.cand if name == "candidate" else ctx.refx


def _message(ctx, name, bs, scalars, params, null=False):
    if name.startswith("peer:"):
        return {"cmd": "call", "peer": name[5:], "params": dict(params),
                "tensors": {a.name: bs.spec(a.name) for a in ctx.task.args if a.kind == "tensor"}}
    return {"cmd": "call", "args": call_args(ctx.task, bs, scalars), "null": null}


def _loop(ctx, timer, entry, impls, sets, n_sets, policy, scenario):
    task, rng = ctx.task, timer.rng
    unsupported, rcs = {}, {}
    for name in impls[:]:
        if name.startswith("peer:"):
            bs = sets["ref"].get(0)
            timer.fresh(bs)
            reply = ctx.refx.request(_message(ctx, name, bs, timer.scalars, timer.params))
            if reply.get("peer_error"):
                unsupported[name[5:]] = (str(reply.get("message")) if reply["peer_error"] == "unsupported"
                                         else f"failed: {reply.get('message')}")
                impls.remove(name)
    for name in impls:       # warm-up: caches, lazy loading, clocks
        side = "cand" if name == "candidate" else "ref"
        for _ in range(policy["warmup_reps"]):
            bs = sets[side].get(0)
            timer.fresh(bs)
            timer.timed(_executor(ctx, name), _message(ctx, name, bs, timer.scalars, timer.params))
    samples = {n: {"ms": [], "wall_ms": [], "cpu_ms": []} for n in impls}
    null, null_wall = {"cand": [], "ref": []}, {"cand": [], "ref": []}
    gaps = {"cand": [], "ref": []}
    secret = random.Random(secrets.randbits(64))   # which calls get value-checked: known only here
    out_bytes = ctx.oracle.output_bytes(timer.params) * max(1, len(task.outputs()))
    keep = max(RECHECK_MIN, min(RECHECK_MAX, RECHECK_BYTES // max(1, out_bytes)))
    reservoir, unwritten_calls, cand_reps, rounds = [], [], 0, 0
    t_start = time.monotonic()
    while True:
        rounds += 1
        order = impls[:]
        rng.shuffle(order)
        for side in ("cand", "ref"):    # the request overhead, measured like a call
            ex = ctx.cand if side == "cand" else ctx.refx
            bs = sets[side].get(0)
            timer.fresh(bs)
            ctx.device.flush()
            _, wall, cpu, gap = timer.timed(ex, _message(ctx, "candidate", bs, timer.scalars, timer.params, null=True))
            null[side].append(cpu)
            null_wall[side].append(wall)
            if gap is not None:
                gaps[side].append(gap)
        for name in order:
            side = "cand" if name == "candidate" else "ref"
            ex = _executor(ctx, name)
            k = rng.randrange(n_sets)
            bs = sets[side].get(k)
            seed = timer.fresh(bs)
            ctx.device.flush()
            ex.running = name
            reply, wall, cpu, gap = timer.timed(ex, _message(ctx, name, bs, timer.scalars, timer.params))
            ex.running = None
            if reply.get("peer_error"):
                unsupported[name[5:]] = f"failed during timing: {reply.get('message')}"
                impls.remove(name)
                del samples[name]
                continue
            rc = reply.get("rc")
            if not isinstance(rc, list) or len(rc) != 1 or not isinstance(rc[0], int):
                raise ChildFailure("forged", f"a reply with a malformed return code ({str(rc)[:80]})", name)
            if rc[0]:
                rcs.setdefault(name, rc[0])
            s = samples[name]
            s["wall_ms"].append(wall)
            s["cpu_ms"].append(cpu)
            if gap is not None:
                gaps[side].append(gap)
            if name == "candidate":
                outs = outputs_of(task, bs)
                left = [n for n, t in outs.items() if bool(unwritten(t).any())]
                if left:
                    unwritten_calls.append({"rep": cand_reps, "outputs": left})
                # Reservoir sampling: every call so far is equally likely to be among those kept.
                if len(reservoir) < keep:
                    reservoir.append((cand_reps, seed, {n: t.clone() for n, t in outs.items()}))
                else:
                    j = secret.randrange(cand_reps + 1)
                    if j < keep:
                        reservoir[j] = (cand_reps, seed, {n: t.clone() for n, t in outs.items()})
                if len(ex.threads()) > 1:
                    return fail(entry, "rejected", f"during timing: {len(ex.threads()) - 1} thread(s) started by "
                                                   f"the candidate are still running after it returned")
                other = ex.other_threads_cpu_ns() / 1e6
                if ctx.single_threaded and other > OTHER_THREADS_CPU_MS:
                    return fail(entry, "rejected", "during timing: " + other_threads_finding(other))
                st = ex.status_fields()
                if st["SigCgt"] != ctx.cand_status["SigCgt"] or st["timers"]:
                    return fail(entry, "rejected", f"during timing: the candidate installed signal handler(s) or "
                                                   f"POSIX timer(s) (caught-signal mask {st['SigCgt']:#x}, the "
                                                   f"executor alone has {ctx.cand_status['SigCgt']:#x}; "
                                                   f"{st['timers']} timer(s)): work deferred past the clock")
                cand_reps += 1
        # The smallest request overhead seen: a lower bound, so a call's figure is never made smaller
        # than what the call itself took (and the same rule for every implementation).
        over = {side: min(v) for side, v in null.items() if v}
        for name, s in samples.items():
            s["ms"] = [max(0.0, c - over["cand" if name == "candidate" else "ref"]) for c in s["cpu_ms"]]
        if ctx.deadline is not None and time.monotonic() > ctx.deadline:
            raise ChildFailure("timeout", "the evaluation's time limit was reached during this scenario")
        if _done(samples, policy, time.monotonic() - t_start):
            break
    return _judge(ctx, entry, samples, rcs, unsupported, unwritten_calls, reservoir, gaps, (null, null_wall), n_sets,
                  time.monotonic() - t_start, scenario)


def _done(samples, policy, elapsed):
    counts = [len(s["ms"]) for s in samples.values()]
    if not counts:
        return True
    if elapsed >= policy["max_seconds"] and min(counts) >= 3:
        return True
    if min(counts) >= policy["max_reps"]:
        return True
    if min(counts) < policy["min_reps"]:
        return False
    return all(rse_of_median(s["ms"]) <= policy["target_rse"] for s in samples.values())


def _judge(ctx, entry, samples, rcs, unsupported, unwritten_calls, reservoir, gaps, nulls, n_sets, seconds,
           scenario):
    task = ctx.task
    null, null_wall = nulls
    cand = samples.get("candidate", {}).get("ms", [])
    entry["timing"] = {"reps": len(cand), "seconds": round(seconds, 3), "sets": n_sets,
                       "rse": rse_of_median(cand) if cand else None,
                       "overhead_ms": {"candidate": min(null["cand"]), "reference": min(null["ref"])},
                       "overhead_wall_ms": {"candidate": median(null_wall["cand"]),
                                            "reference": median(null_wall["ref"])}}
    if unsupported:
        entry["peer_unsupported"] = unsupported
    if "candidate" in rcs:
        return fail(entry, "runtime_error", f"during timing: {task.entry} returned {rcs['candidate']}")
    for name, rc in rcs.items():
        ctx.messages.append(f"{scenario.id}: {name} returned {rc} during timing; its time is not reported")
    if unwritten_calls:
        first = unwritten_calls[0]
        return fail(entry, "incorrect", f"during timing: {len(unwritten_calls)} timed call(s) left outputs "
                                        f"unwritten (first: call #{first['rep'] + 1}, {', '.join(first['outputs'])}); "
                                        f"every call must compute the result (hack 11)")
    # The checks on where CPU went come after the definite ones above: a candidate that skipped its
    # work is told so (incorrect), not that its idle time looked odd.
    # Work the clock did not see: CPU the candidate's executor used while it should have been idle.
    if gaps["cand"] and gaps["ref"]:
        excess = median(gaps["cand"]) - median(gaps["ref"])
        limit = max(GAP_MARGIN_MS, 0.1 * (median(cand) if cand else 0))
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
                                           f"call in {wall_ms:.3f} ms of wall time: it ran on more than one core, "
                                           f"and the task is single-threaded")
    for rep, seed, outs in sorted(reservoir, key=lambda x: x[0]):
        _, ref, tols = ctx.oracle.expected(scenario.params, seed)
        for arg in task.outputs():
            ok, _, reason = check_output(arg.name, outs[arg.name], ref[arg.name], tols[arg.name][0])
            if not ok:
                return fail(entry, "incorrect", f"timed call #{rep + 1} (re-checked after timing, chosen at random "
                                                f"over the whole loop): {reason} (hack 11: one code path for every "
                                                f"call)")
    entry["rechecked_calls"] = sorted(r[0] + 1 for r in reservoir)
    medians = {name: median(s["ms"]) for name, s in samples.items() if s["ms"] and name not in rcs}
    entry["time_ms"] = medians.get("candidate")
    entry["baseline_ms"] = medians.get("baseline")
    entry["peer_ms"] = {n[5:]: v for n, v in medians.items() if n.startswith("peer:")}
    entry["wall_ms"] = median(samples["candidate"]["wall_ms"]) if cand else None
    cand = samples["candidate"]["ms"] if "candidate" in medians else []
    paired = {name: median([o / c for c, o in zip(cand, s["ms"]) if c > 0])
              for name, s in samples.items() if name in medians and name != "candidate" and cand}
    if "baseline" in paired:
        entry["speedup_vs_baseline"] = paired["baseline"]
    entry["speedup_vs_peer"] = {n[5:]: v for n, v in paired.items() if n.startswith("peer:")}
