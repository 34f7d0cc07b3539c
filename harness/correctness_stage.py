"""The correctness stage: one scenario's seeds through the candidate's executor, checked in the parent.

The candidate runs in its own executor; the baseline and the peers in another that never loaded the
candidate (same code path, so the same overheads). Everything is decided here, in the trusted
parent: inputs are made here and written into buffers only this process created, outputs are read
from this process's own mapping, the clock is this process's, and the executor's CPU time is the
kernel's figure for it (harness/executor/handle.py). Fills the scenario's result entry; the timing
stage that follows is harness/timing/.
"""

import random
import time

import torch

from .errors import TaskError, fail
from .executor.calls import Sets, Watch, call_args, device_findings, fill, outputs_of
from .executor.handle import ChildFailure
from .task import variants
from .task.tolerance import POISON_BITS, check_output, max_abs_diff
from .timing.laps import Laps

INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
LATER_SECONDS = 0.002       # how long after "done" the outputs and the CPU clock are looked at again
# CPU the executor may use after its "done" without doing work: finishing the send and going back to
# wait for the next request takes it tens of microseconds; a kernel run after return takes its own time.
AFTER_DONE_CPU_MS = 0.5


def observed_call(ctx, bs, scalars):
    """One correctness call of the candidate, watched: (rc, findings, deferred outputs, inputs changed)."""
    ex, task = ctx.cand, ctx.task
    watch = Watch(ctx, ex)
    ex.running = "candidate"
    ins = {a.name: bs.tensors[a.name] for a in task.inputs()}
    inputs_before = snapshot(ins)
    ctx.device.sync()     # CUDA: the parent's writes (inputs, poison) are done before the executor reads
    reply = ex.request({"cmd": "call", "args": call_args(task, bs, scalars)})
    cpu_done = ex.cpu_ns()
    returned = snapshot(outputs_of(task, bs))
    time.sleep(LATER_SECONDS)
    after_ms = (ex.cpu_ns() - cpu_done) / 1e6
    ex.running = None
    findings = watch.findings(ctx.cand_status) + device_findings(reply)
    # CUDA: the driver's own threads may wake after a call; work after return shows on the GPU instead
    # (outputs changing later, the GPU still busy: timing/cuda_loop.py).
    late = None
    if after_ms > AFTER_DONE_CPU_MS and ctx.device_kind == "cpu":
        late = (f"the executor used {after_ms:.2f} ms of CPU in the {LATER_SECONDS * 1e3:.0f} ms after the call "
                f"returned: work continued after return (on a thread or a signal)")
    changed = changed_since(ins, inputs_before)
    deferred = changed_since(outputs_of(task, bs), returned)
    rc = _rc(reply, 1)[0]
    return rc, findings, deferred, changed, late


def confirmed_call(ctx, bs, scalars, inputs):
    """observed_call on freshly filled inputs; CPU after return counts only when a second call of
    the same inputs shows it too. An honest baseline's executor read 0.55 ms once while the peers'
    executor was importing torch on the other core (interrupts are billed to whatever runs on their
    core); work a candidate defers after every return shows both times."""
    fill(ctx.task, bs, inputs)
    rc, findings, deferred, changed, late = observed_call(ctx, bs, scalars)
    if late is not None and not (findings or deferred or changed):
        fill(ctx.task, bs, inputs)
        rc, findings, deferred, changed, again = observed_call(ctx, bs, scalars)
        if again is None:
            ctx.messages.append(f"correctness: {late.split(':')[0]} once; the same call again did not: not "
                                f"counted")
        late = again
    return rc, findings + ([late] if late else []), deferred, changed


def snapshot(tensors):
    """A copy of each tensor's bits (NaN payloads and -0.0 included), to compare with later."""
    return {k: _bits(t).clone() for k, t in tensors.items()}


def changed_since(tensors, snap):
    """The names of `tensors` whose bits differ from their snapshot()."""
    return [k for k, t in tensors.items() if not torch.equal(_bits(t), snap[k])]


def _bits(t):
    as_int = INT_OF_SIZE[t.element_size()]
    return t if t.dtype == as_int else t.view(as_int)


def calibrate_threads(ctx, inputs, shapes_out, scalars):
    """CUDA, once per pair of executors: one call of the baseline in its executor before the
    candidate's first, counting the threads it leaves (a static CUDA runtime starts its own on a
    first call), so that the candidate is allowed as many and blamed only for more."""
    if ctx.device_kind != "cuda" or getattr(ctx.refx, "calibrated", True) or not ctx.has_baseline:
        return
    refx = ctx.refx
    refx.calibrated = True
    before = len(refx.threads())
    baseline_call(ctx, inputs, shapes_out, scalars, "baseline (a first call)")
    ctx.thread_allowance += max(0, len(refx.threads()) - before)


def baseline_call(ctx, inputs, shapes_out, scalars, running):
    """One call of the baseline in its own executor on `inputs`: (return code, a copy of its outputs)."""
    refx = ctx.refx
    sets = Sets(refx, ctx.task, {k: tuple(v.shape) for k, v in inputs.items()}, shapes_out)
    try:
        bs = sets.get(0)
        fill(ctx.task, bs, inputs)
        ctx.device.sync()
        refx.running = running
        reply = refx.request({"cmd": "call", "args": call_args(ctx.task, bs, scalars)})
        refx.running = None
        ctx.device.sync()
        return _rc(reply, 1)[0], {k: v.clone() for k, v in outputs_of(ctx.task, bs).items()}
    finally:
        sets.close()


def _rc(reply, n):
    rcs = reply.get("rc")
    if not isinstance(rcs, list) or len(rcs) != n or not all(isinstance(x, int) for x in rcs):
        raise ChildFailure("forged", f"a reply with a malformed return code list ({str(rcs)[:80]})")
    return rcs


def run_correctness(ctx, scenario, entry, seeds):
    task, oracle = ctx.task, ctx.oracle
    scalars = task.scalar_values(scenario)
    entry["seeds"] = list(seeds)
    checks, first_refs, sets, nondeterministic, limits = [], None, None, False, {}
    parts = Laps()
    try:
        for j, seed in enumerate(seeds):
            # Issue 39: every seed after the first is of another distribution (task/variants.py).
            kind = variant_kind(ctx, scenario, j, seed)
            while True:
                # The first seed is the evaluation's own, fresh (evaluate.correctness_seeds): never
                # through the host's reference cache; the others may come from the host's pool and
                # meet their references there.
                inputs, ref, tols, what = seed_inputs(ctx, scenario, seed, kind, cached=j > 0)
                try:
                    parts.lap("reference")
                    if sets is None:
                        sets = Sets(ctx.cand, task, {k: tuple(v.shape) for k, v in inputs.items()},
                                    oracle.output_shapes(scenario.params))
                    # The second seed is written into the very buffers the first used (hack 1).
                    bs, worst, runs = sets.get(0), None, []
                    parts.lap(None)     # the candidate's buffers, made once: no phase of their own
                    calibrate_threads(ctx, inputs, oracle.output_shapes(scenario.params), scalars)
                    parts.lap("baseline")
                    for r in range(2):
                        parts.lap("compare")    # the last run's checks
                        where = f"seed {seed}" + (f" ({what})" if what else "") + f", run {r + 1}"
                        rc, findings, deferred, changed = confirmed_call(ctx, bs, scalars, inputs)
                        parts.lap("calls")
                        if changed:
                            return fail(entry, "rejected", f"{where}: the candidate modified its input(s) "
                                                           f"{', '.join(changed)}; inputs are read-only (hack 6)")
                        if deferred:
                            return fail(entry, "rejected", f"{where}: output(s) {', '.join(deferred)} changed after "
                                                           f"the call returned: work continued after return (hack 2); "
                                                           f"finish before returning")
                        if findings:
                            return fail(entry, "rejected", f"{where}: " + "; ".join(findings))
                        if rc != 0:
                            return fail(entry, "runtime_error", f"{where}: {task.entry} returned {rc} "
                                                                f"(non-zero means the kernel reports an error)")
                        outs = {k: v.clone() for k, v in outputs_of(task, bs).items()}
                        runs.append(outs)
                        if r > 0 and all(bool((outs[k].view(-1).view(_same_int(outs[k])) ==
                                               runs[0][k].view(-1).view(_same_int(outs[k]))).all()) for k in outs):
                            continue
                        if r > 0:
                            nondeterministic = True
                        for arg in task.outputs():
                            tol, lowp_err = tols[arg.name]
                            ok, err, reason = check_output(arg.name, outs[arg.name], ref[arg.name], tol)
                            if not ok:
                                if what is not None and not baseline_passes(ctx, scenario, inputs, ref, tols, scalars):
                                    raise _Unfit(f"the task's baseline is not within the tolerance on {what}")
                                entry.update(max_abs_err=err, tolerance=tol, lowp_err=lowp_err)
                                return fail(entry, "incorrect", f"{where}: {reason}" + (
                                    " (inputs of another distribution than the task's generator, which the "
                                    "baseline passes: a kernel must be correct on any inputs)" if what else ""))
                            ratio = err / tol if tol > 0 else (0.0 if err == 0 else float("inf"))
                            if worst is None or ratio > worst["ratio"]:
                                worst = {"ratio": ratio, "max_abs_err": err, "tolerance": tol, "lowp_err": lowp_err,
                                         "output": arg.name}
                        if r > 0:
                            for arg in task.outputs():
                                diff = max_abs_diff(outs[arg.name], runs[0][arg.name])
                                if diff > tols[arg.name][0]:
                                    return fail(entry, "incorrect", f"seed {seed}: two runs on identical inputs "
                                                                    f"differ by {diff:.3g} in {arg.name} (> tolerance "
                                                                    f"{tols[arg.name][0]:.3g}) (hack 8)")
                    parts.lap("compare")
                    checks.append({"seed": seed,
                                   **{k: worst[k] for k in ("max_abs_err", "tolerance", "lowp_err", "output")},
                                   **({"inputs": what} if what else {})})
                    if limits == {}:    # the first seed's
                        limits = _screen_from_baseline(ctx, scenario, inputs, ref, tols, scalars)
                        parts.lap("baseline")
                    if first_refs is None:
                        first_refs = ref
                    elif all(max_abs_diff(ref[a.name], first_refs[a.name]) == 0 for a in task.outputs()):
                        ctx.messages.append(f"task: scenario {scenario.id}: the reference output is identical for "
                                            f"two seeds; its inputs may be degenerate (hack 7 needs value-dependent "
                                            f"outputs)")
                except _Unfit as unfit:
                    ctx.messages.append(f"task: scenario {scenario.id}, seed {seed}: {unfit}; the seed's own inputs "
                                        f"were checked instead")
                    kind = None
                    continue
                break
    finally:
        if sets is not None:
            sets.close()
        entry["correctness_ms"] = parts.report()   # where this stage's time went, whatever the outcome
    if limits:
        ctx.screens[scenario.id] = limits
    worst = max(checks, key=lambda c: c["max_abs_err"] / c["tolerance"] if c["tolerance"] else 0)
    entry.update(correct=True, status="ok", max_abs_err=worst["max_abs_err"], tolerance=worst["tolerance"],
                 lowp_err=worst["lowp_err"], checks=checks, nondeterministic=nondeterministic)


class _Unfit(Exception):
    """A seed's inputs of another distribution that the task itself does not pass (its baseline)."""


def variant_kind(ctx, scenario, j, seed):
    """Which transform of task/variants.py the j-th seed's inputs get: none for the first seed, none
    without a baseline to tell an unfit transform from a wrong kernel (or with Options.variants off);
    otherwise the kinds in turn over the scenarios, from an offset the first seed draws."""
    if j == 0 or not ctx.has_baseline or not getattr(ctx.opts, "variants", True):
        return None
    turn = getattr(ctx, "variant_turn", None)
    if turn is None:
        turn = random.Random(f"{seed}:variant").randrange(len(variants.KINDS))
    ctx.variant_turn = turn + 1
    return variants.KINDS[turn % len(variants.KINDS)]


def seed_inputs(ctx, scenario, seed, kind, cached=False):
    """(inputs, reference, tolerances, in words what was done to the inputs or None) for one seed:
    the task's own inputs, or with `kind` those transformed (task/variants.py); a transform that gives
    no finite reference or lowp falls back to the seed's own inputs, with a message. `cached`: the
    reference through the host's cache (task/refcache.py), keyed by the seed and the transform."""
    oracle, params = ctx.oracle, scenario.params
    if kind is not None:
        inputs, what = variants.derive(oracle.inputs(params, seed), kind, seed)
        try:
            inputs, ref, tols = oracle.expected_for(params, inputs, seed if cached else None, variant=kind)
            return inputs, ref, tols, what
        except TaskError as exc:
            ctx.messages.append(f"task: scenario {scenario.id}, seed {seed}: {what} give no usable reference "
                                f"({exc}); the seed's own inputs were checked instead")
    inputs, ref, tols = oracle.expected(params, seed, cached=cached)
    return inputs, ref, tols, None


def baseline_passes(ctx, scenario, inputs, ref, tols, scalars):
    """Whether the task's baseline, in its own executor, is within the tolerance on `inputs`."""
    rc, outs = baseline_call(ctx, inputs, ctx.oracle.output_shapes(scenario.params), scalars,
                             "baseline (on inputs of another distribution)")
    return rc == 0 and all(check_output(a.name, outs[a.name], ref[a.name], tols[a.name][0])[0]
                           for a in ctx.task.outputs())


def _screen_from_baseline(ctx, scenario, inputs, ref, tols, scalars):
    """The timing's screen (loop.screen_limits) from a correctness seed: the baseline
    called once on its inputs in its own executor, and per output the seed's tolerance less
    SCREEN_FACTOR x the baseline's error against the reference. None when the baseline cannot give
    one: then the first re-checked timed call computes the reference again and gives it."""
    if not ctx.has_baseline or getattr(ctx, "refx", None) is None:
        return None
    from .timing.loop import screen_limits
    rc, outs = baseline_call(ctx, inputs, ctx.oracle.output_shapes(scenario.params), scalars,
                             "baseline (its error on the correctness inputs)")
    return screen_limits(ctx.task, outs, ref, tols) if rc == 0 else None


def _same_int(t):
    return POISON_BITS[t.dtype][0]
