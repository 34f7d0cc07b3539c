"""The native batch call (harness/native/batch.c): every argument reaches the entry point as its
prototype declares it, registers and stack alike, slot by slot, and a null request calls nothing."""

import ctypes
import platform
import subprocess

import pytest

from harness import native
from harness.executor import Executor

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="batch.c is for x86-64 only")

# Nine integer-class arguments (three on the stack) and two floats, interleaved.
ENTRY = r"""
#include <stdint.h>
static double seen[64][11];
static int calls;
int entry(const void *p, int32_t a, int64_t b, float x, const void *q, int64_t c, int32_t d, int64_t e,
          int64_t f, float y, int64_t g) {
  double *s = seen[calls++ % 64];
  s[0] = (double)(uintptr_t)p; s[1] = a; s[2] = (double)b; s[3] = x; s[4] = (double)(uintptr_t)q;
  s[5] = (double)c; s[6] = d; s[7] = (double)e; s[8] = (double)f; s[9] = y; s[10] = (double)g;
  return (int)(a + d);
}
double seen_at(int call, int k) { return seen[call][k]; }
int calls_made(void) { return calls; }
"""
KINDS = ["pointer", "int32", "int64", "float32", "pointer", "int64", "int32", "int64", "int64", "float32", "int64"]


@pytest.fixture
def entry_lib(tmp_path):
    src = tmp_path / "entry.c"
    src.write_text(ENTRY)
    lib = tmp_path / "entry.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return str(lib)


def _executor(lib, batcher):
    ex = Executor(sock=None)
    ex.fn = ctypes.CDLL(lib).entry   # cmd_init's own steps, short of the filter and gc settings
    from harness.executor import _CTYPES
    from harness.native.calls import native_batch as _native_batch
    ex.fn.restype = ctypes.c_int
    ex.fn.argtypes = [_CTYPES[k] for k in KINDS]
    ex.kinds = KINDS
    ex.batch = _native_batch(batcher, ex.fn, KINDS) if batcher else None
    return ex


def _slots(n):
    return [[4096 * (i + 1), -7 - i, 1 << 40, 1.5 + i, 8192 * (i + 1), -(1 << 33), 2 * i, 3, 4, -0.25, 5 + i]
            for i in range(n)]


@pytest.mark.parametrize("native_loop", [True, False])
def test_every_argument_arrives(tmp_path, entry_lib, native_loop):
    batcher, why = native.batcher(tmp_path, tmp_path / "data")
    assert why is None, why
    ex = _executor(entry_lib, batcher if native_loop else None)
    assert (ex.batch is not None) == native_loop
    slots = _slots(5)
    ex.cmd_table({"id": 7, "batch": slots}, [])
    reply = ex.cmd_call({"cmd": "call", "table": 7, "idx": [3, 0, 3, 4]}, [])
    assert reply["rc"] == [slots[i][1] + slots[i][6] for i in (3, 0, 3, 4)]
    lib = ctypes.CDLL(entry_lib)
    lib.seen_at.restype = ctypes.c_double
    assert lib.calls_made() == 4
    for call, i in enumerate((3, 0, 3, 4)):
        assert [lib.seen_at(call, k) for k in range(11)] == [float(v) for v in slots[i]]


def test_a_null_request_calls_nothing(tmp_path, entry_lib):
    batcher, _ = native.batcher(tmp_path, tmp_path / "data")
    ex = _executor(entry_lib, batcher)
    ex.cmd_table({"id": 1, "batch": _slots(3)}, [])
    assert ex.cmd_call({"cmd": "call", "table": 1, "idx": [0, 1, 2], "null": True}, [])["rc"] == [0, 0, 0]
    assert ctypes.CDLL(entry_lib).calls_made() == 0


def test_an_index_outside_the_table_is_refused(tmp_path, entry_lib):
    batcher, _ = native.batcher(tmp_path, tmp_path / "data")
    ex = _executor(entry_lib, batcher)
    ex.cmd_table({"id": 1, "batch": _slots(2)}, [])
    with pytest.raises(ValueError, match="out of range"):
        ex.cmd_call({"cmd": "call", "table": 1, "idx": [0, 2]}, [])


def test_a_prototype_that_does_not_fit_falls_back(tmp_path, entry_lib):
    from harness.native.calls import native_batch as _native_batch
    batcher, _ = native.batcher(tmp_path, tmp_path / "data")
    assert _native_batch(batcher, ctypes.CDLL(entry_lib).entry, ["int64"] * 17) is None
    assert _native_batch(batcher, ctypes.CDLL(entry_lib).entry, ["float32"] * 9) is None
