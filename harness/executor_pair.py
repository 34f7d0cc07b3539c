"""Start the two executors of an evaluation and check what loading the candidate did to its process.

The candidate's executor loads only the candidate's library. The reference executor loads the
baseline's library and the task's peers (PyTorch) and never sees the candidate. Before the
candidate's library is loaded, the parent records what an executor looks like from outside (caught
signals, timers, libraries); after the load (library constructors have run, the seccomp filter is
in place) anything new that could run later is a rejection: a thread, a process, a signal handler, a
POSIX timer, a forbidden library.
"""

from .denylist import ALWAYS, families, match_library
from .executor_proc import ChildFailure, ExecutorProcess


class ExecutorPair:
    def __init__(self, cand, refx):
        self.cand, self.refx = cand, refx

    def close(self):
        for ex in (self.cand, self.refx):
            if ex is not None:
                ex.close()


def argtypes(task):
    return ["pointer" if a.kind in ("tensor", "stream") else a.kind for a in task.args]


def start_pair(ctx, workdir):
    """(ExecutorPair, findings at load time). Raises ChildFailure."""
    task, libs = ctx.task, ctx.libs
    cand = ExecutorProcess(workdir, "candidate", ctx.opts.call_timeout, confine=ctx.opts.confine,
                           wrapper=ctx.wrapper)
    refx = None
    try:
        cand.request({"cmd": "unmap", "id": -1}, timeout=120)   # up and waiting: a clean executor's state
        clean, libs_before = cand.status_fields(), cand.libraries()
        cand.running = "candidate (loading the library)"
        single = "pthread" in task.denylist     # a single-threaded task: no thread may be started
        info = cand.start({"library": libs["candidate"], "entry": task.entry, "argtypes": argtypes(task),
                           "threads_allowed": not single},
                          timeout=ctx.opts.call_timeout + 120)
        cand.running = None
        findings = _load_findings(ctx, cand, clean, libs_before)
        refx = ExecutorProcess(workdir, "reference", ctx.opts.call_timeout, confine=ctx.opts.confine,
                               wrapper=ctx.wrapper)
        refx.start({"library": libs.get("baseline"), "entry": task.entry, "argtypes": argtypes(task),
                    "peers": dict(task.peers) if ctx.with_peers else {}, "reference": str(task.reference_path),
                    "threads": task.cpu_threads}, timeout=ctx.opts.call_timeout + 120)
    except ChildFailure:
        cand.close()
        if refx is not None:
            refx.close()
        raise
    ctx.cand_status = clean
    ctx.confined = bool(info.get("seccomp"))
    pair = ExecutorPair(cand, refx)
    ctx.cand, ctx.refx = cand, refx
    return pair, findings


def _load_findings(ctx, cand, clean, libs_before):
    out = []
    threads = cand.threads()
    if len(threads) > 1:
        out.append(f"loading the library started {len(threads) - 1} thread(s) (the executor runs on one)")
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
    if st["timers"]:
        out.append(f"loading the library created {st['timers']} POSIX timer(s)")
    fams = families(ctx.task.denylist) + ALWAYS
    for path in sorted(cand.libraries() - libs_before):
        fam = match_library(path, fams)
        if fam:
            out.append(f"loading the library mapped {path} ({fam.why})")
    return out
