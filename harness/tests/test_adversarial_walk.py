"""The issue-39 CUDA cheats that reach the executor's interpreter (harness/adversarial/cuda/forge*.cu) work
as written, on the CPU: their hand-written walk (ld.so below __tls_get_addr, its _r_debug, the link
map, each object's .dynsym) finds the Python C API in a Python process, and the Python each runs
through it does what its header says to a stand-in executor. The GPU runs of the same files
(scripts/gpu/trust-cuda-check.sh) then show the defences, not a broken attack: an attack that does not
work would be "caught" for nothing. Built with nvcc with KS_WALK_TEST (two test-only exports);
skipped without nvcc. Each check runs in a fresh interpreter: the cheats patch the process they
run in."""

import json
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from .conftest import REPO

CUDA = REPO / "harness" / "adversarial" / "cuda"
WALKERS = ["forge1_figures_python_api.cu", "forge2_figures_no_pad.cu", "forge3_l2_check.cu",
           "forge5_bound_done_early.cu", "forge6_bound_slope_flattened.cu", "forge7_bound_calls_overlap.cu"]

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed: the cheats cannot be built")


def walk_section(name):
    text = (CUDA / name).read_text()
    return text[text.index("// --- the walk"):text.index("// --- end of the walk")]


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    """forge1 built with the walk's test exports: every walking cheat carries the same walk
    (test_every_cheat_carries_the_same_walk), so one build runs each one's Python (nvcc: ~8 s)."""
    out = tmp_path_factory.mktemp("walk") / "forge1.so"
    proc = subprocess.run(["nvcc", "-O1", "-shared", "-Xcompiler", "-fPIC", "-DKS_WALK_TEST", "-o", str(out),
                           str(CUDA / WALKERS[0])], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{WALKERS[0]} does not build: {proc.stderr[-2000:]}"
    return str(out)


def test_every_cheat_carries_the_same_walk():
    assert all(walk_section(name) == walk_section(WALKERS[0]) for name in WALKERS)


def python_of(name, var):
    """The Python source of the C string `var` in the cheat's file (adjacent literals joined)."""
    text = (CUDA / name).read_text()
    body = re.search(r"static const char %s\[\] =(.*?);\n" % var, text, re.S).group(1)
    return "".join(json.loads(f'"{piece}"') for piece in re.findall(r'"((?:[^"\\]|\\.)*)"', body))


def _run(script):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=120, cwd=str(REPO))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_walk_finds_the_python_c_api_without_naming_it(lib):
    got = _run(f"""
        import ctypes, json
        lib = ctypes.CDLL({lib!r})
        lib.ks_walk_find.restype = ctypes.c_void_p
        lib.ks_walk_find.argtypes = [ctypes.c_char_p]
        want = {{n: ctypes.cast(getattr(ctypes.pythonapi, n), ctypes.c_void_p).value
                for n in ("PyRun_SimpleString", "PyGILState_Ensure", "PyGILState_Release")}}
        print(json.dumps({{n: [lib.ks_walk_find(n.encode()), w] for n, w in want.items()}}))
    """)
    for n, (found, want) in got.items():
        assert found == want and found, (n, found, want)


def test_the_forged_figures_replace_the_timed_routine(lib):
    # forge1: every figure 0.6 of what was measured, the pad asked for passed on
    got = _run(f"""
        import ctypes, json, sys
        class Executor:
            def _timed_gpu(self, calls, pad_ms):
                return {{"ms": [0.010], "span_ms": [0.008], "work_ms": [0.0075], "tail_ms": [0.005], "pad": pad_ms}}
        sys.modules["__main__"].Executor = Executor
        lib = ctypes.CDLL({lib!r})
        assert lib.ks_walk_python({python_of("forge1_figures_python_api.cu", "kForge").encode()!r}) == 0
        print(json.dumps(Executor()._timed_gpu([], 0.1)))
    """)
    assert got == {"ms": [pytest.approx(0.006)], "span_ms": [pytest.approx(0.0048)],
                   "work_ms": [pytest.approx(0.0045)], "tail_ms": [0.005], "pad": 0.1}


def test_the_pad_skipping_forgery_drops_the_pad_and_keeps_the_events_near_the_span(lib):
    got = _run(f"""
        import ctypes, json, sys
        class Executor:
            def _timed_gpu(self, calls, pad_ms):
                return {{"ms": [0.020], "span_ms": [0.010], "work_ms": [0.010], "pad": pad_ms}}
        sys.modules["__main__"].Executor = Executor
        lib = ctypes.CDLL({lib!r})
        assert lib.ks_walk_python({python_of("forge2_figures_no_pad.cu", "kForge").encode()!r}) == 0
        print(json.dumps(Executor()._timed_gpu([], 0.1)))
    """)
    assert got["pad"] == 0.0 and got["work_ms"] == [pytest.approx(0.006)]
    assert got["ms"] == [pytest.approx(0.006 + 0.0023)]


def test_the_l2_check_is_made_to_find_nothing(lib):
    got = _run(f"""
        import ctypes, json, sys
        import harness.executor.cuda_state as cs
        lib = ctypes.CDLL({lib!r})
        assert lib.ks_walk_python({python_of("forge3_l2_check.cu", "kForge").encode()!r}) == 0
        print(json.dumps(cs.DeviceState.check_and_reset(object(), 0)))
    """)
    assert got == []


def _drive_bound_loop(lib, cheat, var, rows, requests):
    """The cheat's swapped bound-request loop (its C string `var`, run through the walk) driven over a
    socketpair by the parent's own handle: an executor whose entry records its calls and returns 0, and
    a table of `rows` (int64 arguments); `requests` is the code run between the session's open and its
    close (`parent`, `time` at hand), which puts what it saw in `got`. Returns `got` with the calls, the
    count served and the name of the handler's code."""
    body = textwrap.indent(textwrap.dedent(requests).strip(), " " * 8)
    return _run(f"""
        import ctypes, json, socket, sys, threading, time
        from harness.executor.handle import ExecutorProcess
        from harness.executor.process import Executor
        from harness.native.calls import Table
        sys.modules["__main__"].Executor = Executor
        lib = ctypes.CDLL({lib!r})
        assert lib.ks_walk_python({python_of(cheat, var).encode()!r}) == 0
        ours, theirs = socket.socketpair()
        ex = Executor(theirs)
        calls = []
        ex.fn = lambda *a: calls.append(list(a)) or 0
        ex.tables[5] = Table({rows!r}, ["int64"] * {len(rows[0])})
        ex.gpu = {{"drv": None}}            # the real handler would synchronise through it
        parent = object.__new__(ExecutorProcess)
        parent.sock, parent.seq, parent.pending, parent.call_timeout = ours, 0, [], 5.0
        parent.deadline, parent.running, parent.role = None, None, "candidate"
        parent.kill = lambda: None
        def serve():
            from harness.executor.protocol import recv_frame, send_frame
            msg = recv_frame(theirs)
            reply = ex.cmd_bound(msg, [])
            reply.update(type="done", seq=msg["seq"])
            send_frame(theirs, reply)
        t = threading.Thread(target=serve); t.start()
        parent.bound_open(5)
        got = {{}}
{body}
        reply = parent.bound_close()
        t.join(5)
        got.update(calls=calls, served=reply["served"], code=Executor.cmd_bound.__code__.co_name)
        print(json.dumps(got))
    """)


def test_the_bound_loop_is_replaced_by_one_that_answers_before_synchronising(lib):
    # forge5's handler: it answers every request, and never calls the synchronisation the real loop makes
    got = _drive_bound_loop(lib, "forge5_bound_done_early.cu", "kDoneEarly", [[1, 2], [3, 4]], """
        got["out"] = [parent.bound_call(1, 9), parent.bound_call(0, 10)]
    """)
    assert got == {"out": [[0, 0], [0, 0]], "calls": [[3, 4], [1, 2]], "served": 2, "code": "_ks_bound"}


def test_the_bound_loop_is_replaced_by_one_that_makes_one_call_requests_dearer(lib):
    # forge6's handler: every call made, the request's last followed by the entry's synchronisation
    # (rows = -7), and a request of one call answered no sooner than 1 ms on
    got = _drive_bound_loop(lib, "forge6_bound_slope_flattened.cu", "kFlatten", [[1, 2, 3, 4], [5, 6, 7, 8]], """
        t0 = time.perf_counter()
        got["one"] = parent.bound_calls([1], [9], sync_each=False)
        got["one_s"] = time.perf_counter() - t0
        got["many"] = parent.bound_calls([0, 1], [10, 11], sync_each=False)
    """)
    assert got["one"] == [[0, 0]] and got["many"] == [[0, 0], [0, 0]] and got["served"] == 3
    assert got["calls"] == [[5, 6, 7, 8], [5, 6, 7, -7], [1, 2, 3, 4], [5, 6, 7, 8], [5, 6, 7, -7]]
    assert got["one_s"] >= 0.001 and got["code"] == "_ks_bound"


def test_the_bound_loop_is_replaced_by_one_that_sends_every_call_to_the_kernels_own_streams(lib):
    # forge7's handler: every call made with the marker stream (1: the kernel picks a stream of its own
    # in turn), the request's last followed by the entry's synchronisation (rows = -7)
    got = _drive_bound_loop(lib, "forge7_bound_calls_overlap.cu", "kOverlap", [[1, 2, 3, 4, 55], [6, 7, 8, 9, 55]], """
        got["many"] = parent.bound_calls([0, 1], [10, 11], sync_each=False)
    """)
    assert got["many"] == [[0, 0], [0, 0]] and got["served"] == 2
    assert got["calls"] == [[1, 2, 3, 4, 1], [6, 7, 8, 9, 1], [6, 7, 8, -7, 1]]
