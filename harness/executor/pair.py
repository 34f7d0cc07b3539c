"""Start the two executors of an evaluation and check what loading the candidate did to its process.

The candidate's executor loads only the candidate's library. The reference executor loads the
baseline's library and the task's peers (PyTorch) and never sees the candidate. Before the
candidate's library is loaded, the parent records what an executor looks like from outside (caught
signals, timers, libraries); after the load (library constructors have run, the seccomp filter is
in place) anything new that could run later is a rejection: a thread, a process, a signal handler, a
POSIX timer, a forbidden library, memory both writable and executable or anonymous and executable, a
descriptor on the process's memory, a socket or a file open for writing (issue 39: the library is
loaded under the filter's first step, so these are the parent's second look).
"""

import secrets
import shutil
import tempfile
import time
from pathlib import Path

from .. import native
from ..build.compile import default_cache_dir
from ..build.denylist import ALWAYS, families, match_library
from ..errors import TaskError
from ..sandbox import bwrap
from . import python_roles
from .calls import process_findings
from .handle import INSIDE, ChildFailure, ExecutorProcess
from .lanes import MAX_PROCESSES, peer_executors


class ExecutorPair:
    def __init__(self, cand, refx, incx=None, peers=()):
        self.cand, self.refx, self.incx = cand, refx, incx
        self.peers = list(peers)     # the peers' executors, one per lane (harness/executor/lanes.py)

    def close(self):
        for ex in (self.cand, self.refx, self.incx, *self.peers):
            if ex is not None:
                _close(ex)


def _close(ex):
    """The executor first (its mapping of the arena goes with it), then the parent's arena."""
    ex.close()
    arena = getattr(ex, "arena", None)
    if arena is not None:
        ex.arena = None
        arena.close()


def _gpu_setup(ctx, ex, size, with_torch=False, later=False):
    """CUDA tasks, before anything is loaded into `ex`: its shared arena, the driver, a stream, the pad.
    `later`: sent now, its reply collected with the next ones (ExecutorProcess.send)."""
    if ctx.device_kind != "cuda":
        return
    from .cuda_driver import PAD_PTX
    from .memory import CudaArena
    ex.arena = CudaArena(ctx.device.driver(), size, ctx.device.torch_device)
    msg = {"cmd": "cuda", "size": ex.arena.size, "pad_ptx": PAD_PTX.read_text(), "torch": with_torch,
           "cupti": getattr(ctx, "cupti_path", None),
           # the native loop of bound requests (harness/timing/bound.py): the candidate's executor and its twins
           "bound": None if with_torch else getattr(ctx, "bound_path", None),
           # the stream-ordered allocator, set up before the filter (cuda_driver.Driver.prewarm_pool)
           "pool_bytes": None if with_torch else POOL_BYTES}
    if later:
        ex.send(msg, fds=[ex.arena.fd])
    else:
        _cupti_status(ctx, ex, ex.request(msg, fds=[ex.arena.fd], timeout=ctx.opts.call_timeout + 120))


# What the stream-ordered allocator's pool holds in each native executor from the start: a candidate's
# cudaMallocAsync workspaces up to this much at once come from memory the pool already holds, made
# before the filter (an honest one was killed by it; tools/lab/alloc_syscalls.py names the calls
# the allocator makes under it); the baseline's executor holds the same.
POOL_BYTES = 512 << 20


def _cupti_status(ctx, ex, reply):
    """What each executor said of CUPTI (device_info.timing_clock.executors): "on", or why not."""
    clock = getattr(ctx, "timing_clock", None)
    if clock is not None and isinstance(reply, dict) and "cupti" in reply:
        clock.setdefault("executors", {})[ex.role] = str(reply["cupti"])[:300]
    info = getattr(ctx, "device_info", None)
    if info is not None and isinstance(reply, dict) and reply.get("pool") is not None:
        # the stream-ordered allocator's pool, set up before the filter (POOL_BYTES), per executor
        info.setdefault("stream_pool", {"bytes": POOL_BYTES})[ex.role] = str(reply["pool"])[:300]


def argtypes(task):
    return ["pointer" if a.kind in ("tensor", "stream") else a.kind for a in task.args]


def sandbox_state(opts):
    """(use bwrap, message for the result or None)."""
    if not opts.sandbox:
        return False, "executor: not run inside bubblewrap (turned off)"
    ok, why = bwrap.available()
    if not ok:
        return False, f"executor: not run inside bubblewrap: {why}"
    weaker = bwrap.note()     # a root host whose sandboxes could not run as an unprivileged uid
    return True, (f"sandbox: {weaker}" if weaker else None)


def _paths(sandboxed, mapping):
    """{name: path the executor uses} and the binds that make them visible inside the sandbox."""
    if not sandboxed:
        return {k: str(v) if v else None for k, v in mapping.items()}, []
    paths, binds = {}, []
    for key, host in mapping.items():
        if host:
            inside = f"{INSIDE}/{key}" + (Path(host).suffix if Path(host).is_file() else "")
            binds.append((str(host), inside))
            paths[key] = inside
        else:
            paths[key] = None
    return paths, binds


def start_pair(ctx, workdir):
    """(ExecutorPair, findings at load time). Raises ChildFailure."""
    task, libs, opts = ctx.task, ctx.libs, ctx.opts
    sandboxed = ctx.sandboxed
    if ctx.device_kind == "cpu" and "batcher" not in libs:
        libs["batcher"], why = native.batcher(workdir, ctx.opts.cache_dir or default_cache_dir())
        if why:
            ctx.messages.append(f"timing: {why}: calls made one by one from Python")
    if "bound" not in libs:    # CUDA and (issue 39) CPU tasks alike
        libs["bound"], why = native.bound_server(workdir, ctx.opts.cache_dir or default_cache_dir())
        if why:
            ctx.messages.append(f"timing: {why}: bound requests served in Python (harness/timing/bound.py)")
    bpaths, ctx.batcher_binds = _paths(sandboxed, {"batcher": libs.get("batcher")})
    ctx.batcher = bpaths["batcher"]
    bound_paths, bound_binds = _paths(sandboxed, {"bound": libs.get("bound")})
    ctx.bound_path = bound_paths["bound"]
    ctx.batcher_binds = ctx.batcher_binds + bound_binds
    cpaths, cbinds = _paths(sandboxed, {"candidate": libs["candidate"]})
    ipaths, ibinds = _paths(sandboxed, {"incumbent": libs.get("incumbent")})
    rpaths, rbinds = _paths(sandboxed, {"baseline": libs.get("baseline"), "task": task.dir})
    reference = (f"{rpaths['task']}/{task.reference_path.name}" if sandboxed else str(task.reference_path))
    module, env, confine = python_roles.process_args(ctx, "candidate", workdir, "candidate")
    cand = ExecutorProcess(workdir, "candidate", opts.call_timeout, confine=confine, sandboxed=sandboxed,
                           binds=cbinds + ctx.batcher_binds, module=module, extra_env=env)
    refx = peerx = incx = None
    lanes = []       # the peers' executors, peerx first
    try:
        cand.ready()   # up and waiting, nothing loaded yet: a clean executor's state
        sizes = getattr(ctx, "arena_bytes", {})
        _gpu_setup(ctx, cand, sizes.get("cand", 0), with_torch=python_roles.python_role(ctx, "candidate"))
        python_roles.preload(ctx, cand, "candidate")   # torch and Triton: the executor's, not the candidate's
        clean, libs_before, threads_before = cand.status_fields(), cand.libraries(), len(cand.threads())
        ctx.cand_exposure = cand.exposure()     # before anything of the candidate's is loaded
        cand.running = "candidate (loading the library)"
        info = cand.start(_init_msg(ctx, "candidate", cpaths["candidate"]), timeout=opts.call_timeout + 120)
        cand.running = None
        findings = _load_findings(ctx, cand, clean, libs_before, threads_before)
        # Threads an executor may have once the candidate runs: its own (one; on CUDA the driver's too)
        # plus what the toolchain's runtime starts on a first call, measured on the baseline's executor.
        ctx.thread_allowance = threads_before
        # The baseline's executor is the candidate's twin (same init, same filter, no torch): identical
        # code must read the same in both. The peers (PyTorch) get a third executor of their own.
        try:
            refx = _twin(ctx, workdir, "reference", "baseline", rpaths["baseline"],
                         [b for b in rbinds if b[1].startswith(f"{INSIDE}/baseline")], sizes.get("ref", 0))
        except ChildFailure as exc:
            if exc.kind != "load":
                raise
            # The task's own baseline (a Python op whose extension is missing, say): never the candidate's fault.
            raise TaskError(str(task.baseline), f"the baseline does not load: {exc}") from None
        refx.calibrated = False
        if ipaths.get("incumbent"):
            # The run's best so far: a former candidate, so an executor of its own, the candidate's twin.
            # One that does not start is left out of the timing; the candidate is not blamed for it.
            try:
                incx = _twin(ctx, workdir, "incumbent", "incumbent", ipaths["incumbent"], ibinds, sizes.get("inc", 0))
            except ChildFailure as exc:
                ctx.has_incumbent = False
                ctx.messages.append(f"incumbent: not timed: its executor did not start: {exc}")
        early, ctx.early_peers = getattr(ctx, "early_peers", None), None
        if ctx.with_peers and task.peers and getattr(ctx, "peers_needed", True):
            # Its start (importing torch and reference.py: 1.4 s on the development VM, seconds on a GPU
            # host) runs while the parent compiles and checks the candidate's correctness on every
            # scenario; the first timing stage waits for it (peers_ready).
            peerx = early or spawn_peers(task, opts, workdir, sandboxed, ctx.device_kind)
            lanes.append(peerx)
            # CUDA: the peers timed in several processes at once, each round the mean of them
            # (harness/executor/lanes.py); all of them start while the candidate is compiled and checked.
            for k in range(2, lanes_wanted(ctx) + 1):
                lanes.append(spawn_peers(task, opts, workdir, sandboxed, ctx.device_kind, role=f"peers-{k}"))
            for ex in lanes:
                _gpu_setup(ctx, ex, sizes.get("peer", 0), with_torch=True, later=True)
                ex.start({"entry": task.entry, "argtypes": argtypes(task), "peers": dict(task.peers),
                          "reference": reference, "threads": task.cpu_threads,
                          # Python peers of the task's signature (python_candidate.python_peers)
                          "args": python_roles.peer_args(task), "scalars": python_roles.peer_scalars(task)},
                         later=True)
        elif early is not None:
            _close(early)
    except (ChildFailure, TaskError):
        for ex in (cand, refx, incx, *lanes):
            if ex is not None:
                _close(ex)
        raise
    # Calls from here on end at the evaluation's time limit too (start-up is bounded by its own).
    for ex in (cand, refx, incx, *lanes):
        if ex is not None:
            ex.deadline = ctx.deadline
    ctx.cand_status = clean
    ctx.confined = bool(info.get("seccomp"))
    pair = ExecutorPair(cand, refx, incx, lanes)
    ctx.cand, ctx.refx, ctx.peerx, ctx.incx = cand, refx, peerx, incx
    ctx.peer_lanes = lanes
    return pair, findings


def lanes_wanted(ctx):
    """How many processes the peers are timed in (Options.peer_processes): CUDA only, where a peer's
    kernel mode is set per process (harness/executor/lanes.py); one on a CPU task."""
    if ctx.device_kind != "cuda":
        return 1
    return max(1, min(MAX_PROCESSES, int(ctx.opts.peer_processes)))


def spawn_peers(task, opts, workdir, sandboxed, device_kind, role="peers"):
    """The peers' executor, up and importing torch (its "preload", collected with its next request).
    The peers are the task's own PyTorch code and never see the candidate. On CUDA they run
    unfiltered: cuDNN and the other libraries behind torch load their engines (code) on a first
    call, which the filter forbids; the sandbox still holds them."""
    _, binds = _paths(sandboxed, {"task": task.dir})
    env = python_roles.triton_env(device_kind, sandboxed, workdir, role) if task.python_peers() else None
    peerx = ExecutorProcess(workdir, role, opts.call_timeout, confine=opts.confine and device_kind == "cpu",
                            sandboxed=sandboxed, binds=binds, extra_env=env)
    try:
        peerx.ready()
        peerx.send({"cmd": "preload"})
    except ChildFailure:
        _close(peerx)
        raise
    return peerx


class EarlyPeers:
    """What an evaluation sets up before its compile: its working directory, whether the executors
    run in bubblewrap, and the peers' executor, up and importing torch, when the evaluation times
    peers. The command line makes one before it imports torch itself, so that the two
    imports run side by side; evaluate() takes it up when it is for the same task and options, and
    otherwise closes it and makes its own."""

    def __init__(self, task, device_kind, opts):
        self.key = self._key(task, device_kind, opts)
        self.workdir = Path(tempfile.mkdtemp(prefix="kernelseek-eval-"))
        self.sandboxed, self.note = sandbox_state(opts)
        self.peers = None
        if opts.with_peers and task.peers:
            try:
                self.peers = spawn_peers(task, opts, self.workdir, self.sandboxed, device_kind)
            except ChildFailure:
                pass     # started again with the other executors, where a failure is reported

    @staticmethod
    def _key(task, device_kind, opts):
        return (str(task.dir), device_kind, opts.with_peers, opts.confine, opts.sandbox, opts.call_timeout)

    def matches(self, task, device_kind, opts):
        return self.key == self._key(task, device_kind, opts)

    def take_peers(self):
        """The peers' executor, now the caller's to close."""
        peers, self.peers = self.peers, None
        return peers

    def close(self):
        if self.peers is not None:
            _close(self.peers)
            self.peers = None
        shutil.rmtree(self.workdir, ignore_errors=True)


def peers_ready(ctx):
    """Waits for the peers' executor to finish starting (start_pair sent its start and went on). One
    that does not start is the task's problem (its reference.py or peers), never the candidate's."""
    waiting = [ex for ex in peer_executors(ctx) if ex.pending]
    if not waiting:
        return
    t0 = time.monotonic()
    try:
        for ex in waiting:
            for reply in ex.collect(ctx.opts.call_timeout + 120):
                _cupti_status(ctx, ex, reply)
    except ChildFailure as exc:
        raise TaskError(str(ctx.task.reference_path), f"the peers' executor did not start: {exc}") from None
    ctx.peers_wait = getattr(ctx, "peers_wait", 0.0) + time.monotonic() - t0   # time_spent.peers_wait


# How many copies of a CPU task's library each executor loads; every timed call goes through one drawn
# at random, on a stack shifted by a random amount (harness/native/batch.c: a process's layout made
# identical code read up to 15 % apart from one process to the next, for the process's whole life).
LIBRARY_COPIES = 8
# ... fewer for a library whose segments are large (static tables: each copy has its own).
COPIES_BYTES = 256 << 20


def _init_msg(ctx, key, library):
    """The init request of the executor of ctx.libs[key]: a library's, or a Python file's."""
    if python_roles.python_role(ctx, key):
        return python_roles.init_message(ctx, key, library, argtypes(ctx.task))
    return _library_msg(ctx, key, library)


def _library_msg(ctx, key, library):
    """The init request that loads ctx.libs[key] (seen inside the executor as `library`) in an
    executor (the candidate's, a twin)."""
    msg = {"library": library, "entry": ctx.task.entry, "argtypes": argtypes(ctx.task), "batcher": ctx.batcher,
           "threads_allowed": not ctx.single_threaded,   # single-threaded: no thread may start
           # CPU: the bound requests' loop, loaded with the library (CUDA loads it in cmd_cuda)
           "bound": ctx.bound_path if ctx.device_kind == "cpu" else None}
    if ctx.batcher and ctx.libs.get(key):    # (no baseline library: --no-baseline)
        size = ctx.load_bytes[key]
        copies = max(1, min(LIBRARY_COPIES, COPIES_BYTES // max(1, size)))
        if copies < LIBRARY_COPIES:
            ctx.messages.append(f"timing: the {key}'s library takes {size / 2 ** 20:.0f} MiB once loaded: "
                                f"{copies} cop{'y' if copies == 1 else 'ies'} of it, not {LIBRARY_COPIES}, "
                                f"for its timed calls to be spread over")
        msg.update(copies=copies, layout_seed=secrets.randbits(64))
    return msg


def _twin(ctx, workdir, role, key, library, binds, arena_size):
    """An executor like the candidate's (same init, same filter, no torch) running `library` (ctx.libs[key]):
    the baseline's, the incumbent's. Closed again when it does not start (ChildFailure). A Python
    implementation's runs python_candidate.py (python_roles.py)."""
    opts = ctx.opts
    module, env, confine = python_roles.process_args(ctx, key, workdir, role)
    ex = ExecutorProcess(workdir, role, opts.call_timeout, confine=confine, sandboxed=ctx.sandboxed,
                         binds=binds + ctx.batcher_binds, module=module, extra_env=env)
    try:
        ex.ready()
        _gpu_setup(ctx, ex, arena_size, with_torch=python_roles.python_role(ctx, key))
        python_roles.preload(ctx, ex, key)
        ex.start(_init_msg(ctx, key, library), timeout=opts.call_timeout + 120)
    except ChildFailure:
        _close(ex)
        raise
    return ex


def _load_findings(ctx, cand, clean, libs_before, threads_before):
    out = []
    threads = cand.threads()
    if len(threads) > threads_before:
        out.append(f"loading the library started {len(threads) - threads_before} thread(s) (the executor runs "
                   f"on {threads_before})")
    kids = cand.descendants()
    if kids:
        out.append(f"loading the library started {len(kids)} process(es) (pids {', '.join(map(str, kids))}); "
                   f"candidates may not start processes")
    other = cand.other_threads_cpu_ns() / 1e6
    if ctx.single_threaded and other > 0.2:
        out.append(f"loading the library ran {other:.2f} ms of CPU on other threads (the task is single-threaded)")
    st = cand.status_fields()
    if st["SigCgt"] != clean["SigCgt"]:
        out.append(f"loading the library installed signal handler(s) (caught-signal mask {st['SigCgt']:#x}, "
                   f"the executor alone has {clean['SigCgt']:#x})")
    if st["timers"] > clean["timers"]:
        out.append(f"loading the library created {st['timers'] - clean['timers']} POSIX timer(s)")
    fams = families(ctx.task.denylist) + ALWAYS
    for path in sorted(cand.libraries() - libs_before):
        fam = match_library(path, fams)
        if fam:
            out.append(f"loading the library mapped {path} ({fam.why})")
    return out + process_findings(ctx, "loading the library", cand)
