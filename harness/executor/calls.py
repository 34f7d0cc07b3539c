"""One call in an executor as the trusted parent makes and watches it: the scenario's buffer sets in
that executor, the call's arguments, the inputs and poison written through the parent's own mapping,
the outputs read from it, and what the parent sees of the executor from outside around a call.

The correctness stage (harness/correctness_stage.py) and the timing loops (harness/timing/) make
their calls through these.
"""

from ..build.denylist import ALWAYS, families, match_library
from ..sandbox.procinfo import ChildFailure
from ..task.tolerance import poison
from .memory import close_set, new_set

# CPU the candidate's executor may spend on threads other than its main one, over a whole
# evaluation, on a single-threaded task (the executor itself starts none).
OTHER_THREADS_CPU_MS = 0.2


class Sets:
    """The scenario's buffer sets, mapped into one executor (created on first use, closed at the end)."""

    def __init__(self, ex, task, input_shapes, output_shapes):
        self.ex, self.task, self.sets = ex, task, []
        self.specs = []
        for arg in task.args:
            if arg.kind == "tensor":
                shape = input_shapes[arg.name] if arg.role == "input" else output_shapes[arg.name]
                self.specs.append((arg.name, arg.dtype, shape))

    def get(self, k):
        while len(self.sets) <= k:
            self.sets.append(new_set(self.ex, self.specs))
        return self.sets[k]

    def close(self):
        for bs in self.sets:
            close_set(self.ex, bs)
        self.sets = []


def call_args(task, bs, scalars):
    """One call's argument list: each tensor as its buffer, offset, dtype and shape (a native executor
    takes the address, a Python one a tensor), the stream as None, the scalars' values."""
    argv = []
    for arg in task.args:
        if arg.kind == "tensor":
            argv.append(bs.spec(arg.name))
        elif arg.kind == "stream":
            argv.append(None)
        else:
            argv.append(scalars[arg.name])
    return argv


def fill(task, bs, inputs, outputs=True):
    """The inputs' values into set `bs`, and poison into its outputs (unless `outputs` is False: the
    caller poisons them itself, many sets at once)."""
    for arg in task.inputs():
        bs.tensors[arg.name].copy_(inputs[arg.name])
    if outputs:
        for arg in task.outputs():
            poison(bs.tensors[arg.name])


def outputs_of(task, bs):
    return {a.name: bs.tensors[a.name] for a in task.outputs()}


class Watch:
    """What the parent sees of an executor from outside, before and after a call."""

    def __init__(self, ctx, ex):
        self.ctx, self.ex = ctx, ex
        self.libs, self.status = ex.libraries(), ex.status_fields()

    def findings(self, baseline_status):
        ex, out = self.ex, []
        threads, allowed = ex.threads(), self.ctx.thread_allowance
        if len(threads) > allowed:
            out.append(f"{len(threads) - allowed} thread(s) started by the candidate are still running after it "
                       f"returned (the executor runs on {allowed})")
        kids = ex.descendants()
        if kids:
            out.append(f"the candidate started {len(kids)} process(es) still running after it returned "
                       f"(pids {', '.join(map(str, kids))}); candidates may not start processes")
        fams = families(self.ctx.task.denylist) + ALWAYS
        for path in sorted(ex.libraries() - self.libs):
            fam = match_library(path, fams)
            if fam:
                out.append(f"the call mapped {path} ({fam.why})")
        other = ex.other_threads_cpu_ns() / 1e6
        if self.ctx.single_threaded and other > OTHER_THREADS_CPU_MS:
            out.append(other_threads_finding(other))
        st = ex.status_fields()
        if st["SigCgt"] != baseline_status["SigCgt"]:
            out.append(f"the candidate installed signal handler(s) (caught-signal mask {st['SigCgt']:#x}, "
                       f"the executor alone has {baseline_status['SigCgt']:#x}): work deferred to a signal")
        if st["timers"] > baseline_status["timers"]:
            out.append(f"the candidate holds {st['timers'] - baseline_status['timers']} POSIX timer(s): work "
                       f"deferred to a timer")
        return out + process_findings(self.ctx, "the call", ex)


def process_findings(ctx, when, ex=None):
    """A call the candidate's filter refused (raised), and what its process holds that its clean state
    did not (exposure_findings): after the load, each watched call and each scenario's timing. `ex`:
    the candidate's executor (ctx.cand once the executors are up)."""
    ex = ex or ctx.cand
    ex.refused()
    clean = getattr(ctx, "cand_exposure", None)
    return exposure_findings(ex, clean, when) if clean is not None else []


def exposure_findings(ex, clean, when):
    """What the candidate's executor holds now that its clean state (`clean`: ExecutorProcess.exposure()
    before the library was loaded) did not, and that could carry a way past the filter into its calls
    (issue 39): memory both writable and executable, anonymous executable memory, a descriptor on a
    process's memory (/proc/<pid>/mem), a socket, or a file or device open for writing. `when`: in
    words, for the findings ("loading the library", "the call")."""
    now, kinds = ex.exposure(), {}
    for region in sorted(now["wx"] - clean["wx"]):
        kinds.setdefault("memory both writable and executable", []).append(region)
    for region in sorted(now["anon_x"] - clean["anon_x"] - now["wx"]):
        kinds.setdefault("anonymous executable memory", []).append(region)
    for fd, (target, _) in sorted(now["fds"].items()):
        if clean["fds"].get(fd, (None,))[0] == target:
            continue
        if _process_memory(target):
            kinds.setdefault("a descriptor on a process's memory (a way to write any of it)", []).append(
                f"{fd} on {target}")
        elif target.startswith("socket:"):
            kinds.setdefault("a socket (candidates may not use sockets)", []).append(f"{fd}")
        elif target.startswith("/") and not target.startswith(("/dev/null", "/memfd:")) and ex.fd_writable(fd):
            kinds.setdefault("a file or device open for writing (candidates may not write files)", []).append(
                f"{fd} on {target}")
    return [f"{when} left {what}: {', '.join(items[:3])}" + (f" and {len(items) - 3} more" if len(items) > 3 else "")
            for what, items in kinds.items()]


def _process_memory(target):
    parts = target.split("/")
    return target.startswith("/proc/") and parts[-1] == "mem" and len(parts) >= 4


def other_threads_finding(ms):
    return (f"{ms:.2f} ms of the executor's CPU time ran on threads other than its main one (threads that "
            f"may have exited since): the task is single-threaded")


def device_findings(reply):
    """Device-wide state a CUDA call left set (class 9), as the executor found and reset it."""
    found = reply.get("device") or []
    if not isinstance(found, list):
        raise ChildFailure("forged", f"a reply with a malformed device report ({str(found)[:80]})")
    return [str(f) for f in found]
