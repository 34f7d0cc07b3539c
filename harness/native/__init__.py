"""The harness's own native helpers, built from source here with the system C compiler (never from
a candidate's toolchain flags, never from a cache a candidate could write)."""

import platform
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).with_name("batch.c")


def batcher(workdir):
    """(path of the batch-call library built into `workdir`, None) or (None, why not).

    Only for x86-64 (the calling convention batch.c relies on); elsewhere, or without a compiler,
    the executor calls one by one from Python."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None, f"no native batch calls on {platform.machine()}"
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None, "no C compiler for the native batch calls"
    out = Path(workdir) / "batch.so"
    proc = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(out), str(SOURCE)],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        return None, f"the native batch calls did not build: {proc.stderr.strip()[:300]}"
    return str(out), None
