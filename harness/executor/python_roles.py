"""The parent's side of Python implementations: which executor runs each role, how it starts.

A role (the candidate, its baseline twin, the incumbent) is Python when the task's candidates are
Triton files or its baseline is a Python callable (`python:file.py:function`); evaluate.py names
them in ctx.python_entries ({role: entry function}). Such an executor runs
harness/executor/python_candidate.py: torch (and Triton) imported first, then, on a CPU task, the
seccomp filter, then the file. On a CPU task Triton runs in its interpreter (TRITON_INTERPRET=1).
Triton's cache is private to the executor: the sandbox's own /tmp (or, without bubblewrap, a folder
of the evaluation's), never shared between the candidate and the baseline.
"""

import importlib.util
import os
import json
from pathlib import Path

MODULE = "harness.executor.python_candidate"


def python_role(ctx, key):
    return key in (getattr(ctx, "python_entries", None) or {})


def triton_env(device_kind, sandboxed, workdir, role):
    """The variables a Python executor (or the peers' with Python peers) starts with."""
    cache = "/tmp/triton-cache" if sandboxed else str(Path(workdir) / f"triton-cache-{role}")
    env = {"TRITON_CACHE_DIR": cache, "HOME": "/tmp" if sandboxed else str(workdir)}
    if device_kind == "cpu":
        env["TRITON_INTERPRET"] = "1"
    return env


def process_args(ctx, key, workdir, role):
    """(module, extra environment, seccomp) for the executor of ctx.libs[key]: the default executor
    and ctx.opts.confine for a native library."""
    if not python_role(ctx, key):
        return None, None, ctx.opts.confine
    # CUDA: Triton's JIT writes its cache, runs ptxas and maps what it built, which the filter forbids.
    return MODULE, triton_env(ctx.device_kind, ctx.sandboxed, workdir, role), \
        ctx.opts.confine and ctx.device_kind == "cpu"


def preload(ctx, ex, key):
    """A Python executor imports torch and Triton before its clean state is recorded."""
    if python_role(ctx, key):
        triton = importlib.util.find_spec("triton") is not None
        # On a GPU, Triton's first compile (LLVM in the process) installs signal handlers: done here,
        # before the clean state is recorded (executor/triton_warm.py), not by the candidate's first call.
        ex.request({"cmd": "preload", "threads": ctx.task.cpu_threads, "triton": triton,
                    "warm_jit": triton and ctx.device_kind == "cuda" and os.environ.get("TRITON_INTERPRET") != "1"},
                   timeout=ctx.opts.call_timeout + 120)


def init_message(ctx, key, library, argtypes):
    """The init request of a Python executor: the file (as the executor sees it) and its function."""
    return {"python": {"file": library, "entry": ctx.python_entries[key]}, "argtypes": argtypes,
            "threads_allowed": not ctx.single_threaded}


def peer_scalars(task):
    """For Python peers of the task's signature: every scenario's scalar arguments, keyed by its
    params as the peers' requests carry them (python_candidate.python_peers)."""
    if not task.python_peers():
        return None
    return {json.dumps(sc.params, sort_keys=True): task.scalar_values(sc) for sc in task.scenarios}


def peer_args(task):
    return [{"name": a.name, "kind": a.kind} for a in task.args]
