"""The executor for Python implementations: a Triton candidate (a .py file with @triton.jit kernels and
an entry function of the task's signature), or a task's baseline or peer that is a Python callable of
that signature (`python:file.py:function`).

Such code owns its process by construction (it can rebind anything Python can reach: time, torch,
this module, the socket's frames), so, as for a native candidate, this process decides nothing: the
parent makes the inputs, owns the buffers (the tensors here are views of the parent's memfds or
GPU arena), reads the outputs through its own mapping, holds the clock that counts (on a CPU task
the kernel's account of this process's CPU time; on a CUDA task figures bounded by the parent's
own clock) and compares. What this file adds to process.py is how a call reaches a Python function:
argument lists become tensors (shape and dtype from the parent's request) and numbers, the stream
argument is left out (Python code launches on torch's current stream, which the executor's events
bracket), and a None return counts as 0.

Order of a start: `preload` imports torch (and Triton where installed) while nothing of the
candidate's is loaded, so their libraries and threads belong to the executor's clean state; `init`
installs the seccomp filter where the parent asks for it (CPU tasks: Triton's interpreter and
PyTorch's CPU code need nothing it forbids; CUDA tasks run without it, as the peers' executor does:
Triton's JIT writes its cache, runs ptxas and maps the code it built) and only then imports the
candidate's file, so that no line of it runs before the filter.

Run as: python -m harness.executor.python_candidate <socket fd>
"""

import os
import sys

from . import process, python_calls
from .process import CallFailed, Executor, LoadFailed


class _Argvs:
    """A table's argument lists (process.cmd_table's Table, without the native batcher's packing)."""

    def __init__(self, argvs):
        self.argvs = argvs


def entry_call(fn, name):
    """The function `fn` called with the task's arguments; its return code (None: 0)."""
    def call(*argv):
        try:
            rc = fn(*argv)
        except Exception as exc:   # the implementation's own failure, reported as the call's
            raise CallFailed(f"{name} raised {type(exc).__name__}: {exc}"[:2000]) from None
        if rc is None:
            return 0
        if isinstance(rc, bool) or not isinstance(rc, int):
            raise CallFailed(f"{name} returned {type(rc).__name__}, not None or an int return code")
        return rc
    return call


def load_function(path, fn_name, module_name):
    """python_calls.load_function, its failure the executor's LoadFailed (the candidate does not load)."""
    try:
        return python_calls.load_function(path, fn_name, module_name)
    except python_calls.NotLoaded as exc:
        raise LoadFailed(str(exc)) from None


class PythonExecutor(Executor):
    def cmd_preload(self, msg, _fds):
        import torch
        self.torch = torch
        torch.set_num_threads(int(msg.get("threads", 1)))
        if msg.get("triton"):
            try:
                import triton  # noqa: F401  (its libraries mapped now, before any filter)
                import triton.language  # noqa: F401
            except ImportError as exc:
                raise LoadFailed(f"Triton does not import here: {exc}") from None
            if msg.get("warm_jit"):
                # LLVM's signal handlers, installed by Triton's first compile, are the executor's.
                from . import triton_warm
                try:
                    triton_warm.warm(torch)
                except Exception as exc:   # noqa: BLE001  (any failure here is the host's, said as such)
                    raise LoadFailed(f"Triton cannot compile a kernel on this GPU: {type(exc).__name__}: "
                                     f"{exc}"[:2000]) from None
        return {}

    def cmd_init(self, msg, fds):
        py = msg.get("python")
        if not py:
            return super().cmd_init(msg, fds)
        if self.torch is None:
            self.cmd_preload({}, [])
        self.kinds = list(msg["argtypes"])
        # The filter first (process.Executor.cmd_init, with no library to load), then the module.
        reply = super().cmd_init(dict(msg, library=None), fds)
        self.fn = entry_call(load_function(py["file"], py["entry"], "kernelseek_candidate"), py["entry"])
        return reply

    def _argv(self, args):
        argv = []
        for a in args:
            if isinstance(a, dict):
                argv.append(self._tensors({"t": a})["t"])
            elif a is None:
                continue     # the stream: Python code runs on torch's current stream
            else:
                argv.append(a)
        return argv

    def cmd_table(self, msg, _fds):
        self.tables[int(msg["id"])] = _Argvs([self._argv(args) for args in msg["batch"]])
        return {}


def main(argv):
    return process.main(argv, PythonExecutor)


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv))   # no interpreter shutdown (process.py says why)
