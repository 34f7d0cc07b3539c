"""The harness's own native helpers, built from source here with the system C compiler (never with a
candidate's toolchain flags, never into a place a candidate could write)."""

import hashlib
import os
import platform
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).with_name("batch.c")


def batcher(workdir, data_dir):
    """(path of the batch-call library in `workdir`, None) or (None, why not).

    Built once per source and compiler into `data_dir` (no sandbox binds it) and copied into the
    evaluation's directory. Only for x86-64 (the calling convention batch.c relies on); elsewhere,
    or without a compiler, the executor calls one by one from Python."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None, f"no native batch calls on {platform.machine()}"
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None, "no C compiler for the native batch calls"
    real = os.path.realpath(cc)
    key = hashlib.sha256(SOURCE.read_bytes() + f"\0{real}\0{os.stat(real).st_mtime_ns}".encode()).hexdigest()[:24]
    kept = Path(data_dir) / "native" / f"batch-{key}.so"
    if not kept.is_file():
        kept.parent.mkdir(parents=True, exist_ok=True)
        tmp = kept.with_suffix(f".{os.getpid()}.tmp")
        proc = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(tmp), str(SOURCE)],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            return None, f"the native batch calls did not build: {proc.stderr.strip()[:300]}"
        os.replace(tmp, kept)
    out = Path(workdir) / "batch.so"
    shutil.copyfile(kept, out)
    return str(out), None
