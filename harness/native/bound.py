"""Bound requests, both sides of the wire (harness/timing/bound.py says what they are for).

The executor serves a session of them in one native loop (bound.c) when the parent could build it,
else in the Python loop below, which does the same (read, call, synchronise, write) with Python's
own cost around it; the parent drives the session from its handle (executor/handle.py). Standard
library only: this module lives in the candidate's process too.
"""

import ctypes
import os
import struct

MAGIC = 0x4E42534B
REQUEST = struct.Struct("<iI")        # slot (negative: the session ends), tag
REPLY = struct.Struct("<IIii")        # magic, tag, the entry point's return code, the synchronisation's result
END = REQUEST.pack(-1, 0)
NOSYNC = 0x80000000                   # in a request's tag: the device is not synchronised after this call (a batch's)


def load_server(path):
    """bound.c's library, loaded (before the seccomp filter, which forbids mapping code): its serve loop."""
    lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    serve = lib.ks_bound_serve
    serve.restype = ctypes.c_int
    serve.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                      ctypes.c_void_p, ctypes.c_void_p]
    return serve


def serve_native(serve, fd, fn, table, sync):
    """A session in bound.c's loop: `fn` the entry point (a ctypes function), `table` the slots'
    packed arguments (native/calls.Table), `sync` the address of cuCtxSynchronize. Returns the calls
    made; raises OSError when the socket failed, ValueError for a table that does not fit."""
    entry = ctypes.cast(fn, ctypes.c_void_p).value
    n = serve(fd, entry, len(table.argvs), table.ni, table.ints.buffer_info()[0], table.nf,
              table.floats.buffer_info()[0], sync)
    if n == -1:
        raise OSError("the bound session's socket failed")
    if n < 0:
        raise ValueError(f"the bound session refused its table ({n})")
    return n


def _read_exact(fd, n):
    data = b""
    while len(data) < n:
        got = os.read(fd, n - len(data))
        if not got:
            raise OSError("the parent closed the socket during a bound session")
        data += got
    return data


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def serve_python(fd, fn, argvs, synchronise):
    """The same session in Python (no C compiler on the host): `synchronise()` returns the driver's
    result code. Returns the calls made."""
    _write_all(fd, REPLY.pack(MAGIC, 0, 0, 0))
    served = 0
    while True:
        slot, tag = REQUEST.unpack(_read_exact(fd, REQUEST.size))
        if slot < 0:
            return served
        if slot >= len(argvs):
            raise ValueError(f"bound request for slot {slot}: the table has {len(argvs)}")
        rc = int(fn(*argvs[slot]))
        sync_rc = 0 if tag & NOSYNC else int(synchronise())
        served += 1
        _write_all(fd, REPLY.pack(MAGIC, tag, rc, sync_rc))
