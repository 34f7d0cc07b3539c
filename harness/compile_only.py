"""`eval --compile-only`: the stages before any device, for a machine without the task's GPU (or a
quick look): the source checks, the compile (nvcc or g++, through the verified cache) and the binary
checks, with ptxas's registers, shared memory and spills per kernel. A Triton candidate is read and
parsed (its kernels compile on the device, at their first call). Writes a kernelseek.compile/1
result: status ok | compile_error | rejected, the compile block of kernelseek.eval/1, messages.
"""

import time
from pathlib import Path

from . import HARNESS_VERSION
from .evaluate import candidate_info, checked_build, read_source
from .task.model import load_task

SCHEMA = "kernelseek.compile/1"


def compile_only(task_dir, candidate, cache_dir=None):
    t0 = time.monotonic()
    task = load_task(task_dir)
    path = Path(candidate)
    source, notes = read_source(task, path)
    result = {"schema": SCHEMA, "harness_version": HARNESS_VERSION, "task": task.name, "device": task.device,
              "language": task.language, "architectures": list(task.architectures),
              "candidate": candidate_info(path, source), "status": "ok", "compile": None,
              "messages": list(task.warnings) + notes}

    def built(b):
        result["compile"] = {"seconds": b.seconds, "registers": b.ptxas.get("registers"),
                             "smem_bytes": b.ptxas.get("smem_bytes"), "spills": b.ptxas.get("spills"),
                             "log": b.log, "cached": b.cached, "kernels": b.ptxas.get("kernels", [])}
        result["messages"].extend(b.notes)

    _, refused = checked_build(task, source, cache_dir, True, built)
    if refused:
        stage, reasons = refused
        result["status"] = "compile_error" if stage in ("compile", "entry") else "rejected"
        text = {"source": "source check: ", "refused": "source check: ", "binary": "binary check: "}.get(stage, "")
        result["messages"].append("compile failed; see compile.log" if stage == "compile" else text + "; ".join(reasons))
    if task.python and result["status"] == "ok":
        result["messages"].append("Triton compiles its kernels on the device at their first call: checked and parsed "
                                  "here, not compiled")
    result["seconds"] = round(time.monotonic() - t0, 3)
    return result
