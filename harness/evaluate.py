"""Evaluate one candidate file against one task: the stages, in order, and the result they build.

checks on the source -> compile (cached) -> checks on the binary -> the executors (executor/pair.py)
-> correctness on every scenario (correctness_stage.py), then the timing of those that passed
(timing/loop.py or timing/cuda_loop.py) -> summary. Each stage that fails sets the status and a message
and stops; everything after that is reported as not run.
"""

import importlib.util
import random
import secrets
import sys
import time
from pathlib import Path

from . import correctness_stage
from .build import static_checks
from .build.compile import build, default_cache_dir
from .build.python_source import python_build
from .build.sources import digest, read_candidate, read_folder
from .errors import EnvironmentProblem, TaskError, UsageError, fail
from .executor.calls import process_findings
from .executor import cupti_activity
from .executor.pair import EarlyPeers, lanes_wanted, peers_ready, start_pair
from .options import Options  # noqa: F401  (evaluate(Options(...)) is the API)
from .progress import Progress
from .result import new_result, scenario_figures, summarise
from .sandbox.procinfo import ChildFailure
from .task.model import load_reference, load_task
from .task.oracle import Oracle
from .task.refcache import ReferenceCache, identity, seed_pool, task_digest
from .task.scenarios import select_scenarios
from .timing import cuda_loop, event_offsets, loop
from .timing.devices import make_device, memory_report, out_of_memory
from .timing.peer_figures import PeerFigures

MAX_CRASH_RESTARTS = 3


class Context:
    """What the per-scenario code needs: the task, the oracle, the live executors (`child`) and the options."""

    def __init__(self, task, oracle, device_kind, opts, messages):
        self.task, self.oracle, self.device_kind = task, oracle, device_kind
        self.opts, self.messages = opts, messages
        self.child = None
        # The evaluation's time limit (time.monotonic()): enforced inside a scenario too, so one long
        # scenario cannot carry the evaluation past it.
        self.deadline = None
        self.has_baseline = opts.with_baseline
        self.keep_samples = opts.samples   # --samples: every round's figure in timing.samples_ms
        self.peers_apart = opts.peers_apart  # --peers-apart (cuda_loop.run_timing)
        self.has_incumbent = False       # set once the incumbent built and passed the checks
        self.screens = {}                # scenario id -> the re-checks' screen (correctness_stage.run_correctness)
        self.with_peers = opts.with_peers and bool(task.peers)
        self.stages = correctness_stage
        self.timing = loop if device_kind == "cpu" else cuda_loop
        self.thread_allowance = 1
        self.sandboxed = False
        self.single_threaded = "pthread" in task.denylist


def evaluate(opts):
    """Run an evaluation; returns the result dict. Raises HarnessError only for harness problems."""
    t0 = time.monotonic()
    # The time limit counts from the process's start where the caller knows it (the command line:
    # the interpreter's start and torch's import take seconds on a loaded host, and the worker's hard
    # limit, a few seconds later, counts from the spawn).
    deadline = (opts.started if opts.started is not None else t0) + opts.timeout
    progress = opts.progress or Progress()
    task = load_task(opts.task_dir)
    module = load_reference(task)
    device_kind = opts.device or task.device
    if device_kind != task.device:
        raise UsageError(f"task {task.name} runs on {task.device}; --device {device_kind} is not possible")
    scenarios = select_scenarios(task, opts.scenarios)
    if opts.seeds < 2:
        raise UsageError("--seeds must be at least 2 (several seeds defeat outputs that match one input)")
    check_environment(task, device_kind)
    cand_path = Path(opts.candidate)
    source, notes = read_source(task, cand_path)
    base_seed = opts.seed if opts.seed is not None else secrets.randbelow(1 << 31)
    correct_base, pool = base_seed, 0
    if opts.seed is None and opts.seed_pool > 0 and opts.reference_cache_gb > 0:
        # Seeds the host has seen, so that their references are kept (task/refcache.py); which of
        # them, drawn at random. Only the seeds after each scenario's first: the first is always the
        # evaluation's own (fresh, never pooled nor cached), so inputs an agent learnt from the pool over
        # many evaluations never decide alone. The timing's seeds stay the evaluation's own too.
        pool = opts.seed_pool
        correct_base = secrets.choice(seed_pool(_reference_cache_dir(opts), pool))
    result = new_result(task, device_kind, candidate_info(cand_path, source),
                        {"scenarios": opts.scenarios, "seeds": opts.seeds, "peers": opts.with_peers,
                         "baseline": opts.with_baseline, "call_timeout": opts.call_timeout,
                         "timeout": opts.timeout})
    result["seeds"] = {"base": base_seed, "per_scenario": opts.seeds,
                       "derivation": "random.Random(f'{base}:{scenario_id}:{purpose}:{index}')",
                       "correctness_base": correct_base, "correctness_pool": pool,
                       # per scenario: seed 0 fresh from `base`; seeds 1.. from `correctness_base`
                       # (one of the host's pool of `correctness_pool` when that is not 0)
                       "correctness_fresh": [0], "correctness_pooled": list(range(1, opts.seeds)) if pool else []}
    result["messages"].extend(task.warnings + notes)
    result["scenarios"] = [{"id": s.id, "params": dict(s.params), "correct": False, "status": "skipped",
                            "reason": "not run"} for s in scenarios]
    early, opts.early = opts.early, None
    if early is None or not early.matches(task, device_kind, opts):
        if early is not None:
            early.close()
        # The peers' executor first: its torch import runs while the candidate compiles.
        early = EarlyPeers(task, device_kind, opts)
    workdir = early.workdir
    if early.note:
        result["messages"].append(early.note)
    ctx = None
    # Where the time goes (seconds, as the parent saw it): loading the task, checks and compiles,
    # starting the executors, the scenarios' stages, shutting down.
    spent = {"task": round(time.monotonic() - t0, 3)}
    try:
        ctx = _prepare(task, module, device_kind, opts, result, source, workdir, progress, deadline,
                       scenarios, spent, early)
        if ctx is not None:
            t_run = time.monotonic()
            ctx.correct_base = correct_base
            _run_scenarios(ctx, scenarios, result, base_seed, workdir, progress)
            spent["scenarios"] = round(time.monotonic() - t_run, 3)
    except RuntimeError as exc:
        if not out_of_memory(exc):
            raise
        # Outside a scenario's stages: the inputs that size the arenas, the calibration, the arenas themselves
        # (an executor restarted too).
        where = "the evaluation's start" if ctx is None else "the evaluation (outside a scenario's stages)"
        raise EnvironmentProblem(out_of_memory_message(ctx, where, exc)) from None
    finally:
        t_close = time.monotonic()
        if ctx is not None and ctx.child is not None:
            ctx.child.close()
        if ctx is not None and ctx.early_peers is not None:
            early.peers, ctx.early_peers = ctx.early_peers, None   # never taken up by start_pair
        early.close()   # the workdir, and the peers' executor if nothing took it up
        spent["close"] = round(time.monotonic() - t_close, 3)
        for stage in ("correctness", "timing"):
            spent[stage] = round(sum((s.get("stage_seconds") or {}).get(stage, 0.0) for s in result["scenarios"]), 3)
        for s in result["scenarios"]:   # the correctness stage by phase: correctness_reference, _calls, ...
            for phase, ms in (s.get("correctness_ms") or {}).items():
                spent[f"correctness_{phase}"] = spent.get(f"correctness_{phase}", 0.0) + ms / 1e3
        spent.update({k: round(v, 3) for k, v in spent.items() if k.startswith("correctness_")})
        if getattr(ctx, "peers_wait", None) is not None:
            spent["peers_wait"] = round(ctx.peers_wait, 3)   # the timing stage waiting for the peers' start
        result["time_spent"] = spent
        cache = getattr(getattr(ctx, "oracle", None), "cache", None)
        if cache is not None:
            cache.close()
            result["reference_cache"] = cache.summary()
            result["messages"].extend(cache.notes)
        summarise(result, task, time.monotonic() - t0)
    progress.emit("done", status=result["status"], correct=result["correct"],
                  seconds=result["summary"]["seconds"])
    return result


def _stop(result, status, message):
    result["status"] = status
    result["messages"].append(message)


def _prepare(task, module, device_kind, opts, result, source, workdir, progress, deadline, scenarios, spent,
             early):
    """Static checks, compile, binary checks, device and executors start. None when a stage failed.
    `early`: the evaluation's EarlyPeers (its workdir, sandbox, peers' executor)."""
    t_build = time.monotonic()

    def built(b):   # the compile's report, whatever the checks after it say
        result["compile"] = {"seconds": b.seconds, "registers": b.ptxas.get("registers"),
                             "smem_bytes": b.ptxas.get("smem_bytes"), "spills": b.ptxas.get("spills"),
                             "log": b.log, "cached": b.cached, "kernels": b.ptxas.get("kernels", [])}
        progress.emit("compile", ok=b.ok, seconds=b.seconds, cached=b.cached)
        result["messages"].extend(b.notes)

    b, refused = _checked_build(task, source, opts.cache_dir, opts.allowlist, built)
    if refused:
        stage, reasons = refused
        status = "compile_error" if stage in ("compile", "entry") else "rejected"
        text = {"source": "source check: ", "refused": "source check: ", "binary": "binary check: "}.get(stage, "")
        _stop(result, status, "compile failed; see compile.log" if stage == "compile" else text + "; ".join(reasons))
        return None
    check_gpu(task, device_kind)
    suffix = ".py" if task.python else ".so"
    libs = {"candidate": str(workdir / f"candidate{suffix}")}
    load_bytes = {"candidate": _load_bytes(b)}   # what each library takes once loaded (its copies' cost)
    # Copies: a separate file per role, so candidate and baseline never share one loaded library
    # even when the candidate is the baseline's source (the loader shares libraries by inode).
    b.write_library(libs["candidate"])
    if opts.incumbent:
        try:
            inc_source, _ = read_source(task, Path(opts.incumbent))
            inc, note = _build_incumbent(task, inc_source, opts.cache_dir, opts.allowlist)
        except (OSError, UsageError) as exc:
            inc, note = None, f"cannot read {opts.incumbent}: {getattr(exc, 'strerror', None) or exc}"
        result["incumbent"] = {"file": str(opts.incumbent), "timed": inc is not None}
        if inc is not None:
            result["incumbent"]["sha256"] = digest(inc_source)
            libs["incumbent"] = str(workdir / f"incumbent{suffix}")
            load_bytes["incumbent"] = _load_bytes(inc)
            inc.write_library(libs["incumbent"])
        else:
            result["messages"].append(f"incumbent: not timed: {note}")
    if opts.with_baseline:
        libs["baseline"] = str(workdir / ("baseline.py" if task.baseline_python else "baseline.so"))
        base = _build_baseline(task, opts.cache_dir)
        result["messages"].extend(base.notes)
        load_bytes["baseline"] = _load_bytes(base)
        base.write_library(libs["baseline"])

    spent["build"] = round(time.monotonic() - t_build, 3)   # checks and compiles: candidate, incumbent, baseline
    t_start = time.monotonic()
    device = make_device(device_kind)
    info = device.info()
    result["device_info"] = info
    if device_kind == "cpu":
        why = device.use_line_flush(opts.cache_dir or default_cache_dir())
        info["cache_flush"] = (f"each round's buffers, line by line "
                               f"({'clflushopt' if device.line_flush.ks_flush_kind() else 'clflush'}), then "
                               f"{device.private_bytes >> 20} MiB written over the core's own caches"
                               if why is None else f"2 x the last-level cache written ({why})")
    if device_kind == "cuda":
        result["gpu"], result["arch"] = info["name"], info["arch"]
        if info["arch"] not in task.architectures:
            raise EnvironmentProblem(f"this GPU is {info['arch']}; task {task.name} is for "
                                     f"{', '.join(task.architectures)}")
    ctx = Context(task, Oracle(task, module, device.torch_device), device_kind, opts, result["messages"])
    if opts.reference_cache_gb > 0:
        try:
            ctx.oracle.cache = ReferenceCache(_reference_cache_dir(opts), opts.reference_cache_gb * 2**30,
                                              identity(info, device_kind), task_digest(task))
            ctx.oracle.cache.background = True
        except OSError as exc:
            result["messages"].append(f"reference cache: not used ({exc.strerror or exc})")
    ctx.sandboxed, ctx.early_peers = early.sandboxed, early.take_peers()
    # Set before any executor starts: they take it at start and hold it inside every call.
    ctx.deadline = deadline
    ctx.libs, ctx.load_bytes, ctx.device = libs, load_bytes, device
    # Python implementations (executor/python_candidate.py) and their entry functions, by role.
    ctx.python_entries = {k: v for k, v in {"candidate": task.entry if task.python else None,
                                            "incumbent": task.entry if task.python else None,
                                            "baseline": task.baseline_python}.items() if v}
    ctx.device_info = info
    ctx.has_incumbent = "incumbent" in libs
    if device_kind == "cuda":
        # Persisting L2 reset from the parent's own context before every flush (timing/l2_guard.py).
        info["persisting_l2"] = device.use_l2_guard() if opts.parent_l2 else "not guarded (turned off)"
        # Before any executor starts: the parent's own calibration of what its events add (CUPTI).
        data_dir = opts.cache_dir or default_cache_dir()
        ctx.event_offsets, how = event_offsets.offsets(info, cuda_loop.PAD_MS, data_dir)
        info["event_offset_ms"] = dict(ctx.event_offsets or {}, how=how)
        # Each executor enables CUPTI's records of its calls from this library (harness/executor/cupti_activity.py).
        ctx.cupti_path = cupti_activity.find_library() if opts.cupti else None
        ctx.clock = "cupti" if ctx.cupti_path else "events"
        # The executors add what they said of CUPTI to it as they start (pair._cupti_status).
        ctx.timing_clock = info["timing_clock"] = {"cupti": ctx.cupti_path} if ctx.cupti_path else {
            "events": "not asked" if not opts.cupti else "no libcupti found"}
        if ctx.with_peers and task.peers and opts.keep_peers:
            ctx.peer_figures = PeerFigures(data_dir, task, info,
                                           {"pad_ms": cuda_loop.PEER_PAD_MS, "clock": ctx.clock,
                                            "figure": cuda_loop.FIGURE.name,
                                            "front_end_gap_ms": cuda_loop.FRONT_END_GAP_MS,
                                            "offset_ms": (ctx.event_offsets or {}).get("peers"),
                                            "processes": lanes_wanted(ctx)})
            names = [p for p, _ in task.peers]
            kept = {sc.id: ctx.peer_figures.get(sc, names) for sc in scenarios}
            ctx.kept_peers = {k: v for k, v in kept.items() if v is not None}
            ctx.peers_needed = len(ctx.kept_peers) < len(scenarios)   # else the peers' executor never starts
            if ctx.kept_peers:
                ctx.messages.append(f"peers: the figures of {len(ctx.kept_peers)} of {len(scenarios)} scenario(s) "
                                    f"were kept from an earlier evaluation on this GPU (the candidate's rounds "
                                    f"are paired with their times; --fresh-peers measures them again)")
    if device_kind == "cuda":
        # The executors' shared memory, sized to the GPU's free memory once the parent's own is made.
        lanes = lanes_wanted(ctx) if ctx.with_peers and getattr(ctx, "peers_needed", True) else 0
        free = device.free_bytes()
        ctx.arena_bytes = cuda_loop.arena_bytes(ctx, scenarios, free, lanes)
        info["memory"] = {"free_bytes": free, "arenas_bytes": ctx.arena_total, "peer_arenas": lanes,
                          "slot_room": ctx.slot_room}
    try:
        ctx.child = _start_child(ctx, workdir)
    except ChildFailure as exc:
        status = {"load": "compile_error", "timeout": "timeout", "seccomp": "rejected",
                  "forged": "rejected"}.get(exc.kind, "runtime_error")
        _stop(result, status, f"loading the candidate failed: {exc}")
        return None
    spent["start"] = round(time.monotonic() - t_start, 3)   # the device, the reference, the executors
    if ctx.init_findings:
        _stop(result, "rejected", "at load time: " + "; ".join(ctx.init_findings))
        ctx.child.close()
        ctx.child = None
        return None
    return ctx


def _reference_cache_dir(opts):
    """Beside the compile cache's entries, like the events' calibration and the peers' figures."""
    return Path(opts.cache_dir or default_cache_dir()) / "reference-cache"


def _checked_build(task, source, cache_dir, allowlist=True, built=None):
    """(build, None) when `source` passes the source checks, compiles and passes the binary checks;
    else (build or None, (stage, reasons)) for the first stage that refuses it: `source`, `refused`
    (what the compiler read), `compile`, `entry` (the entry point is not exported), `binary`.
    `built(build)` is called once the compiler ran. The candidates' cache namespace. A Python
    candidate (Triton) is read and parsed instead (build/python_source.py)."""
    if task.python:
        b, reasons, error = python_build(source, task.entry, len(python_args(task)), allowlist)
        if reasons:
            return None, ("source", reasons)
        if built is not None:
            built(b)
        return (b, ("compile", [])) if error else (b, None)
    reasons = static_checks.check_sources(source, task)
    if reasons:
        return None, ("source", reasons)
    b = build(task, source, cache_dir)
    if built is not None:
        built(b)
    if b.refused:
        return b, ("refused", list(b.refused))
    if not b.ok:
        return b, ("compile", [])
    problem = static_checks.entry_problem(b.lib, task)
    if problem:
        return b, ("entry", [problem])
    reasons = static_checks.check_objects(b.objs, task, allowlist) + static_checks.check_library(b.lib, task)
    if reasons:
        return b, ("binary", reasons)
    return b, None


checked_build = _checked_build   # compile_only.py's


def python_args(task):
    """The arguments a Python implementation receives: the task's, the stream left out."""
    return [a for a in task.args if a.kind != "stream"]


def _load_bytes(b):
    return b.lib.load_bytes if b.lib is not None else 0


def check_environment(task, device_kind):
    """EnvironmentProblem, before anything is built, when this machine cannot run the evaluation: a
    Triton task without Triton (a CUDA task without a GPU: check_gpu, after the candidate's build)."""
    if task.language == "triton" or task.baseline_python or task.python_peers():
        if task.language == "triton" and importlib.util.find_spec("triton") is None:
            raise EnvironmentProblem(f"task {task.name} is written in Triton and {sys.executable} has no triton "
                                     f"package: pip install triton (it needs PyTorch 2.x; scripts/setup.sh makes "
                                     f"a virtual environment with both)")


def check_gpu(task, device_kind):
    """A CUDA evaluation without a GPU stops here, once the candidate's checks and compile ran (what
    refuses it needs no device), with a message that names --compile-only."""
    if device_kind == "cuda":
        import torch
        if not torch.cuda.is_available():
            raise EnvironmentProblem(no_gpu_message(task))


def no_gpu_message(task):
    return (f"no CUDA GPU on this machine (PyTorch {__import__('torch').__version__} sees none) and task "
            f"{task.name} runs on one ({', '.join(task.architectures)}): evaluate it on a GPU worker, or check "
            f"and compile it here with `eval --compile-only` (the source and binary checks, registers, shared "
            f"memory and spills; no GPU needed)")


def read_source(task, path):
    """(bytes or {path: bytes}, notes) of a candidate (or incumbent) file or folder; UsageError when
    there is none or it cannot be one for this task."""
    if task.python:
        if not path.is_file():
            raise UsageError(f"candidate file not found: {path} (a {task.language} candidate is one .py file)")
        return path.read_bytes(), []
    return read_candidate(path, task.language)


def candidate_info(path, source):
    info = {"file": str(path), "sha256": digest(source)}
    if isinstance(source, dict):
        info["files"] = sorted(source)
    return info


def _build_incumbent(task, source, cache_dir, allowlist=True):
    """(build, None) for the incumbent, or (None, why it is left out). It is a former candidate: built
    and checked like one, and never trusted."""
    b, refused = _checked_build(task, source, cache_dir, allowlist)
    if not refused:
        return b, None
    stage, reasons = refused
    if stage == "source":
        return None, "source check: " + "; ".join(reasons)
    if stage in ("refused", "compile"):
        return None, "it does not build: " + ("; ".join(reasons) or "compile failed")
    return None, "binary check: " + "; ".join(reasons)


def _build_baseline(task, cache_dir):
    if task.baseline_python:
        # The task's own Python (the team's op, a Triton kernel): trusted, read and parsed only.
        b, _, error = python_build(task.baseline.read_bytes(), task.baseline_python, len(python_args(task)),
                                   use_allowlist=False)
        if error:
            raise TaskError(str(task.baseline), f"the baseline is not usable: {error}")
        return b
    source = read_folder(task.baseline, task.language)[0] if task.baseline.is_dir() else task.baseline.read_bytes()
    reasons = static_checks.check_sources(source, task)
    b = build(task, source, cache_dir, namespace="baseline")   # never a candidate's entry
    reasons += b.refused
    if not b.ok and not b.refused:
        raise TaskError(str(task.baseline), f"the baseline does not compile:\n{b.log}")
    if reasons:
        raise TaskError(str(task.baseline), "the baseline breaks the task's own rules: " + "; ".join(reasons))
    reasons += static_checks.check_objects(b.objs, task) + static_checks.check_library(b.lib, task)
    problem = static_checks.entry_problem(b.lib, task)
    if reasons or problem:
        raise TaskError(str(task.baseline), "the baseline breaks the task's own rules: "
                                            + "; ".join(reasons + ([problem] if problem else [])))
    return b


def _start_child(ctx, workdir):
    """The evaluation's executors (executor/pair.py), started; what loading the candidate did is in
    ctx.init_findings."""
    pair, ctx.init_findings = start_pair(ctx, workdir)
    if not ctx.confined and ctx.task.python and ctx.device_kind == "cuda" and ctx.opts.confine:
        note = ("executor: a Triton candidate on a GPU runs without the seccomp filter (Triton's JIT writes its "
                "cache, runs ptxas and maps the code it builds), inside bubblewrap; its figures are bounded by "
                "the parent's clock and its outputs compared in the parent")
        if note not in ctx.messages:
            ctx.messages.append(note)
    elif not ctx.confined and "executor: no seccomp filter" not in " ".join(ctx.messages):
        ctx.messages.append("executor: no seccomp filter (turned off, or this is not x86-64 Linux); the "
                            "candidate's system calls were not confined")
    return pair


def _run_scenarios(ctx, scenarios, result, base_seed, workdir, progress):
    """Correctness on every scenario first, then the timing of those that passed: the peers' executor
    finishes starting meanwhile, and a candidate refused on its last scenario is refused before
    anything is timed."""
    run = _Pass(ctx, scenarios, result, base_seed, workdir, progress)
    if run.over("correctness", range(len(scenarios))):
        run.over("timing", timing_order(ctx.task, scenarios,
                                        [i for i, e in enumerate(result["scenarios"]) if e["status"] == "ok"]))
    for i, entry in enumerate(result["scenarios"]):
        if entry.get("reason") is None:
            entry.pop("reason", None)


def timing_order(task, scenarios, indices):
    """The scenarios to time (indices into `scenarios`), the longest first by the roofline time the
    task's metrics and peak give (flops over peak TFLOP/s, bytes over peak GB/s); in the task's order
    where it gives none, and among equals. On the H200 the first scenarios an evaluation timed after
    its correctness stage read high for the peers, for two or three scenarios: torch_rms_norm on
    r1-c1024 3.2-3.3 us timed first against 2.8-2.85 us timed last (reversed order) or in the tool
    (docs/harness-lab.md, "Sixth session"); the cause is not found. An offset of a few tenths of a
    microsecond is a seventh of a 2 us kernel and nothing to a long one, so the long ones go first."""
    def roofline_s(i):
        t, sc = 0.0, scenarios[i]
        for metric, peak, unit in (("flops", "tflops", 1e12), ("bytes", "gbps", 1e9)):
            value, top = task.metric(metric, sc), (task.peak or {}).get(peak)
            if value and top:
                t = max(t, value / (top * unit))
        return t
    return sorted(indices, key=lambda i: -roofline_s(i))


class _Pass:
    """The scenarios' stages in turn, with what a failed one means for the rest: a dead or hung
    executor restarted (at most MAX_CRASH_RESTARTS times), a timeout or a rejection ending the
    evaluation, the incumbent left out when it is the one that failed."""

    def __init__(self, ctx, scenarios, result, base_seed, workdir, progress):
        self.ctx, self.scenarios, self.result, self.base_seed = ctx, scenarios, result, base_seed
        self.workdir, self.progress = workdir, progress
        self.rng_master = random.Random(f"{base_seed}:timing")
        self.crashes = 0
        self.reported = 0

    def over(self, stage, indices):
        """Runs `stage` on the scenarios `indices`; False when the evaluation ends here (what had not
        run this stage is then skipped; scenarios that passed correctness stay correct, untimed)."""
        ctx, result, n = self.ctx, self.result, len(self.scenarios)
        todo = list(indices)
        while todo:
            i = todo[0]
            scenario, entry = self.scenarios[i], result["scenarios"][i]
            if time.monotonic() > ctx.deadline:
                _stop(result, "timeout", f"the evaluation's time limit ({ctx.opts.timeout:g} s) was reached after "
                                         f"{len(indices) - len(todo)} of {len(indices)} scenarios"
                                         + (" had been timed" if stage == "timing" else "")
                                         + "; the rest were not run")
                _skip_rest(result, todo, "not run: the evaluation's time limit was reached")
                return False
            if ctx.child is None:
                try:
                    ctx.child = _start_child(ctx, self.workdir)
                except ChildFailure as exc:
                    _stop(result, "runtime_error", f"restarting the child process failed: {exc}")
                    _skip_rest(result, todo, "not run: the child process could not be restarted")
                    return False
            if stage == "timing":
                peers_ready(ctx)   # at once, unless the peers' executor is still starting
            stages = entry.setdefault("stage_seconds", {})   # wall time of each stage that finished
            t_stage = time.monotonic()
            try:
                # `i`: the scenario's place in this stage's order (timing_order), `id` which it is.
                self.progress.emit("phase", phase=stage, id=scenario.id, i=len(indices) - len(todo), n=n)
                if stage == "correctness":
                    entry.update(status=None, reason=None)
                    pooled_base = getattr(ctx, "correct_base", self.base_seed)   # evaluate(): the host's pool
                    seeds = correctness_seeds(self.base_seed, pooled_base, scenario.id, ctx.opts.seeds)
                    entry["fresh_seed"] = seeds[0]
                    entry["pooled_seeds"] = seeds[1:] if pooled_base != self.base_seed else []
                    ctx.stages.run_correctness(ctx, scenario, entry, seeds)
                else:
                    ctx.timing.run_timing(ctx, scenario, entry, derive_seed(self.base_seed, scenario.id, "time"),
                                          self.rng_master)
                    # what the candidate's process holds after its timed calls (issue 39), once a scenario
                    found = process_findings(ctx, "the candidate's timed calls")
                    if found and entry["status"] == "ok":
                        fail(entry, "rejected", "during timing: " + "; ".join(found))
                    scenario_figures(entry, ctx.task, scenario)
                stages[stage] = round(time.monotonic() - t_stage, 3)
            except ChildFailure as exc:
                if self._failed(exc, scenario, entry):
                    continue      # the incumbent failed: this scenario again, without it
            except RuntimeError as exc:
                if not out_of_memory(exc):
                    raise
                where = f"the {stage} of scenario {scenario.id}"
                raise EnvironmentProblem(out_of_memory_message(ctx, where, exc)) from None
            finally:
                release = getattr(getattr(ctx, "device", None), "release", None)
                if release is not None:
                    release()     # what the scenario's reference left cached, for the executors and the next one
            todo.pop(0)
            # A scenario is reported once its last stage ran: its timing, or the correctness that failed it.
            if stage == "timing" or entry["status"] != "ok":
                # `i`: how many were reported before it (a count to show, whatever the stages' orders).
                self.progress.emit("scenario", id=scenario.id, i=self.reported, n=n, status=entry["status"],
                                   correct=entry["correct"], time_ms=entry.get("time_ms"), reason=entry.get("reason"))
                self.reported += 1
            if entry["status"] == "timeout":
                _skip_rest(result, todo, "not run: an earlier scenario timed out")
                return False
            if entry["status"] == "rejected":
                _skip_rest(result, todo, "not run: the candidate was rejected")
                return False
            if self.crashes >= MAX_CRASH_RESTARTS:
                result["messages"].append(f"stopped after {self.crashes} crashes")
                _skip_rest(result, todo, f"not run: stopped after {self.crashes} crashes")
                return False
        return True

    def _failed(self, exc, scenario, entry):
        """A ChildFailure during a stage: the entry updated; True when the scenario is to run again."""
        ctx = self.ctx
        ctx.child.close()   # dead, hung or in an unknown state: a fresh one for the next scenario
        ctx.child = None
        if exc.who == "incumbent" and ctx.has_incumbent:
            # The run's best so far failed, not the candidate: time without it from here on, and
            # this scenario again.
            ctx.has_incumbent = False
            ctx.libs.pop("incumbent", None)
            ctx.messages.append(f"incumbent: left out from scenario {scenario.id} on: it failed during "
                                f"timing ({exc})")
            return True
        if exc.kind == "timeout":
            entry.update(status="timeout", correct=False, reason=str(exc))
        elif exc.kind in ("seccomp", "forged"):
            entry.update(status="rejected", correct=False, reason=str(exc))
        elif exc.kind == "harness":
            entry.update(status="runtime_error", correct=False,
                         reason=f"the child process reported an internal error (the candidate may have "
                                f"corrupted its memory): {exc}")
        else:
            entry.update(status="runtime_error", correct=False, reason=str(exc))
        self.crashes += 1
        return False


def out_of_memory_message(ctx, where, exc):
    """An EnvironmentProblem's text for the parent's running out of GPU memory during `where`."""
    arenas = getattr(ctx, "arena_total", None)
    first = (str(exc).strip().splitlines() or [""])[0][:200]
    return (f"the GPU ran out of memory in the harness's own process during {where} ({first}): {memory_report()}"
            + (f"; the executors' shared memory (in it): {arenas / (1 << 30):.1f} GiB" if arenas else "")
            + ". Select fewer scenarios (--scenarios), time the peers in one process (--peer-processes 1) or use "
              "a GPU with more free memory")


def _skip_rest(result, indices, reason):
    for i in indices:
        result["scenarios"][i].update(status="skipped", correct=False, reason=reason)


def correctness_seeds(base, pooled_base, scenario_id, n):
    """A scenario's `n` correctness seeds: the first always fresh, from the evaluation's own `base`
    (never from the host's pool, never met in the reference cache: correctness_stage.run_correctness),
    the others from `pooled_base` (evaluate(): one of the host's pool, or `base` without one)."""
    return ([derive_seed(base, scenario_id, "correct", 0)] +
            [derive_seed(pooled_base, scenario_id, "correct", j) for j in range(1, n)])


def derive_seed(base, scenario_id, purpose, index=0):
    """Per-scenario seeds from the evaluation's base seed: reproducible with --seed, new otherwise."""
    return random.Random(f"{base}:{scenario_id}:{purpose}:{index}").randrange(1 << 31)
