"""The native batch call (harness/native/batch.c): every argument reaches the entry point as its
prototype declares it, registers and stack alike, slot by slot, and a null request calls nothing."""

import ctypes
import platform
import subprocess

import pytest

from harness import native
from harness.executor.process import Executor

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
    from harness.executor.process import _CTYPES
    from harness.native.calls import native_batch as _native_batch
    ex.fn.restype = ctypes.c_int
    ex.fn.argtypes = [_CTYPES[k] for k in KINDS]
    ex.kinds = KINDS
    ex.batch = _native_batch(batcher, [ex.fn], KINDS) if batcher else None
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
    assert _native_batch(batcher, [ctypes.CDLL(entry_lib).entry], ["int64"] * 17) is None
    assert _native_batch(batcher, [ctypes.CDLL(entry_lib).entry], ["float32"] * 9) is None


# Where the call runs from: its own code's address and its frame's.
WHERE = r"""
#include <stdint.h>
static uintptr_t code[256], frame[256];
static int calls;
int where(int64_t k) {
  code[calls % 256] = (uintptr_t)&where;
  frame[calls % 256] = (uintptr_t)__builtin_frame_address(0);
  calls++;
  return (int)k;
}
uintptr_t code_at(int i) { return code[i]; }
uintptr_t frame_at(int i) { return frame[i]; }
int calls_made(void) { return calls; }
"""


def test_calls_are_spread_over_copies_of_the_library_and_shifted_stacks(tmp_path):
    """Identical code read up to 11 % apart from one process layout to another (docs/harness-lab.md,
    "Layout"): every timed call goes through a copy of the library drawn at random and runs on a
    stack shifted by a random multiple of 16 bytes, so no implementation keeps one layout's luck."""
    from harness.executor.process import _load_copies
    from harness.native.calls import Table, native_batch
    src, lib = tmp_path / "where.c", tmp_path / "where.so"
    src.write_text(WHERE)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    batcher, why = native.batcher(tmp_path, tmp_path / "data")
    assert why is None, why
    libs = _load_copies(str(lib), 4)
    for copy in libs:
        copy.code_at.restype = copy.frame_at.restype = ctypes.c_size_t
    assert len({ctypes.cast(copy.where, ctypes.c_void_p).value for copy in libs}) == 4, "four copies, four addresses"
    call = native_batch(batcher, [copy.where for copy in libs], ["int64"], seed=12345)
    table = Table([[k] for k in range(200)], ["int64"])
    assert call(table, list(range(200)), False) == list(range(200))
    made = [copy.calls_made() for copy in libs]
    assert sum(made) == 200 and min(made) > 20, f"calls per copy: {made}"
    frames = [copy.frame_at(i) for copy, n in zip(libs, made) for i in range(n)]
    assert len(set(frames)) > 100, "the stack moves from call to call"
    assert max(frames) - min(frames) <= 4096 + 64
    assert {f % 16 for f in frames} == {frames[0] % 16}, "every shift keeps the ABI's 16-byte alignment"
    # A null request calls nothing, in any copy.
    assert call(table, list(range(10)), True) == [0] * 10
    assert [copy.calls_made() for copy in libs] == made


def test_a_library_with_large_segments_is_loaded_fewer_times(cache_dir, tmp_path):
    """Each copy has statics of its own: a 100 MiB table is loaded two times, not eight."""
    from harness.evaluate import Options, evaluate
    from .conftest import CPU_TASK
    src = (CPU_TASK / "baseline.cpp").read_text()
    big = tmp_path / "big.cpp"
    big.write_text(src + "\n__attribute__((used)) static float table[100 << 18];  // 100 MiB of zeros\n")
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(big), scenarios="r7-c33", cache_dir=cache_dir,
                              with_peers=False))
    assert result["status"] == "ok", result["messages"]
    assert any(m.startswith("timing: the candidate's library takes 100 MiB once loaded: 2 copies of it, not 8")
               for m in result["messages"]), result["messages"]
    assert not any("baseline's library" in m for m in result["messages"])
