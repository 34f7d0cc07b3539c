"""The executor's side of batched calls (executor/process.py): a table of argument lists packed once, and one
native loop over the slots a request names (batch.c). Standard library only: this module lives in the
candidate's process."""

import ctypes
import os
from array import array


class Table:
    """The argument lists of a set of slots, packed once: a timed request then names slots by index,
    so its own cost (decoding, building argument lists) no longer grows with its calls."""

    def __init__(self, argvs, kinds):
        self.argvs = argvs
        ints = [i for i, k in enumerate(kinds) if k in ("pointer", "int32", "int64")]
        floats = [i for i, k in enumerate(kinds) if k == "float32"]
        self.ni, self.nf = len(ints), len(floats)
        self.ints = array("q", [int(argv[j] or 0) for argv in argvs for j in ints] or [0])
        self.floats = array("f", [float(argv[j]) for argv in argvs for j in floats] or [0.0])


def native_batch(path, fns, kinds, seed=0):
    """A function (table, slot indices, null) -> return codes making all of a request's calls in one
    native loop (harness/native/batch.c), each through one of `fns` (the entry point in each copy of
    the library) on a stack shifted by a random amount, both drawn per call from `seed`; or None when
    the entry point's arguments do not fit its prototype. A null request does the same but calls
    nothing."""
    n_int = sum(k in ("pointer", "int32", "int64") for k in kinds)
    n_float = sum(k == "float32" for k in kinds)
    if n_int + n_float != len(kinds) or n_int > 16 or n_float > 8:
        return None
    lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    lib.ks_seed.restype = None
    lib.ks_seed.argtypes = [ctypes.c_uint64]
    lib.ks_seed(seed & (2 ** 64 - 1))
    run = lib.ks_batch
    run.restype = ctypes.c_int
    run.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                    ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    entries = (ctypes.c_void_p * len(fns))(*[ctypes.cast(fn, ctypes.c_void_p).value for fn in fns])

    def call(table, idx, null):
        n = len(idx)
        ix = array("i", idx or [0])
        rc = array("i", bytes(4 * max(1, n)))
        if run(entries, len(fns), 0 if null else n, ix.buffer_info()[0], table.ni, table.ints.buffer_info()[0],
               table.nf, table.floats.buffer_info()[0], rc.buffer_info()[0]):
            raise ValueError("the native batch call refused its argument layout")
        return rc.tolist()[:n]

    return call
