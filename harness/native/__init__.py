"""The harness's own native helpers, built from source here with the system C compiler (never with a
candidate's toolchain flags, never into a place a candidate could write)."""

import hashlib
import os
import platform
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).with_name("batch.c")
FLUSH_SOURCE = Path(__file__).with_name("flush.c")
BOUND_SOURCE = Path(__file__).with_name("bound.c")


def _built(source, what, data_dir):
    """(path of `source` built as a shared library in `data_dir`/native, None) or (None, why not).
    Built once per source and compiler (no sandbox binds the data dir). Only for x86-64."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None, f"no native {what} on {platform.machine()}"
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None, f"no C compiler for the native {what}"
    real = os.path.realpath(cc)
    key = hashlib.sha256(source.read_bytes() + f"\0{real}\0{os.stat(real).st_mtime_ns}".encode()).hexdigest()[:24]
    kept = Path(data_dir) / "native" / f"{source.stem}-{key}.so"
    if not kept.is_file():
        kept.parent.mkdir(parents=True, exist_ok=True)
        tmp = kept.with_suffix(f".{os.getpid()}.tmp")
        proc = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(tmp), str(source)],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            return None, f"the native {what} did not build: {proc.stderr.strip()[:300]}"
        os.replace(tmp, kept)
    return str(kept), None


def batcher(workdir, data_dir):
    """(path of the batch-call library in `workdir`, None) or (None, why not): built (_built) and
    copied into the evaluation's directory. Elsewhere, or without a compiler, the executor calls one
    by one from Python."""
    kept, why = _built(SOURCE, "batch calls", data_dir)
    if kept is None:
        return None, why
    out = Path(workdir) / "batch.so"
    shutil.copyfile(kept, out)
    return str(out), None


def bound_server(workdir, data_dir):
    """(path of the bound requests' serve loop (bound.c) in `workdir`, None) or (None, why not), as
    batcher(). Without it the CUDA executors serve bound requests in Python (native/bound.py)."""
    kept, why = _built(BOUND_SOURCE, "bound requests", data_dir)
    if kept is None:
        return None, why
    out = Path(workdir) / "bound.so"
    shutil.copyfile(kept, out)
    return str(out), None


def line_flusher(data_dir):
    """(ctypes library with ks_flush(ptr, n) and ks_flush_kind(), None) or (None, why not): the
    parent's own cache-line flush (flush.c), loaded in the parent only."""
    import ctypes
    kept, why = _built(FLUSH_SOURCE, "cache-line flush", data_dir)
    if kept is None:
        return None, why
    lib = ctypes.CDLL(kept)
    lib.ks_flush.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    lib.ks_flush.restype = None
    lib.ks_flush_kind.restype = ctypes.c_int
    return lib, None
