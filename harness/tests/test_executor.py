"""The executor's confinement and the checks behind it, each shown by performing the attack.

The seccomp tests run the attack in a fresh interpreter twice: without the filter it succeeds (so
the test can fail), with it the process dies of SIGSYS. The layered tests evaluate an adversarial
candidate with the filter off: the parent's own observations (its mapping of the outputs, the
kernel's CPU accounting, /proc) must still catch it.
"""

import os
import signal
import subprocess
import sys

import pytest
import torch

from harness.sandbox import seccomp
from harness.adversarial.run import load_manifest, texts
from harness.task.tolerance import check_output, poison, unwritten
from harness.evaluate import Options, evaluate

from .conftest import CPU_TASK, REPO

pytestmark = pytest.mark.skipif(not seccomp.supported(), reason="seccomp filters are built for x86-64 Linux only")

ATTACKS = {
    "open a file for writing": "os.open('{tmp}/written', os.O_WRONLY | os.O_CREAT, 0o600)",
    "open /proc/self/mem for writing": "os.open('/proc/self/mem', os.O_RDWR)",
    "map executable memory": "mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)",
    "start a process": "os.fork() or os._exit(0)",
    "open a socket": "socket.socket()",
    "install a signal handler": "signal.signal(signal.SIGALRM, lambda *a: None)",
    "arm a timer": "signal.setitimer(signal.ITIMER_REAL, 10.0)",
    "rename a file": "os.rename('{tmp}/a', '{tmp}/b')",
    "raw open syscall through libc's syscall()": "ctypes.CDLL(None).syscall(2, b'{tmp}/raw', 0o101, 0o600)",
    "start a session": "os.setsid()",
}
PRELUDE = "import ctypes, mmap, os, signal, socket, sys, threading\nsys.path.insert(0, {repo!r})\n"


def run_snippet(code, tmp_path, confine, threads=True):
    (tmp_path / "a").write_text("x")
    install = f"from harness.sandbox import seccomp\nseccomp.install(threads={threads})\n" if confine else ""
    # os._exit: Python's shutdown resets SIGINT's handler, which the filter forbids; only the
    # attack itself may decide how the process ends.
    src = PRELUDE.format(repo=str(REPO)) + install + code.format(tmp=tmp_path) + "\nos._exit(0)\n"
    return subprocess.run([sys.executable, "-c", src], capture_output=True, timeout=60)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_seccomp_kills_the_attack_that_works_without_it(attack, tmp_path):
    free = run_snippet(ATTACKS[attack], tmp_path, confine=False)
    assert free.returncode == 0, free.stderr.decode()
    confined = run_snippet(ATTACKS[attack], tmp_path, confine=True)
    assert confined.returncode == -signal.SIGSYS, confined.stderr.decode()


def test_what_an_executor_needs_still_works_under_the_filter(tmp_path):
    code = ("open('/proc/self/maps').read()\n"
            "m = mmap.mmap(-1, 1 << 20)\nm[:3] = b'abc'\n"
            "t = threading.Thread(target=lambda: None)\nt.start()\nt.join()\n"
            "a, b = os.pipe()\nos.write(b, b'x')\nassert os.read(a, 1) == b'x'\n")
    out = run_snippet(code, tmp_path, confine=True, threads=True)
    assert out.returncode == 0, out.stderr.decode()


def test_a_single_threaded_executor_may_not_start_a_thread(tmp_path):
    code = "t = threading.Thread(target=lambda: None)\nt.start()\nt.join()\n"
    assert run_snippet(code, tmp_path, confine=True, threads=True).returncode == 0
    assert run_snippet(code, tmp_path, confine=True, threads=False).returncode == -signal.SIGSYS


LOAD_STEP = {
    # what the dynamic linker does to load a library: allowed by the first step
    "load a library": ("ctypes.CDLL('libm.so.6')", 0),
    "map a file's code": ("f = os.open('/usr/lib/x86_64-linux-gnu/libm.so.6', os.O_RDONLY)\n"
                          "mmap.mmap(f, 4096, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_EXEC)", 0),
    # what it refuses
    "map anonymous code": ("mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)", -signal.SIGSYS),
    "map writable code": ("mmap.mmap(-1, 4096, prot=7)", -signal.SIGSYS),
    "make memory executable": ("ctypes.CDLL(None).mprotect(ctypes.c_void_p(ctypes.addressof(ctypes.create_string_buffer"
                               "(8192)) & ~4095), 4096, 5)", -signal.SIGSYS),
    "open /proc/self/mem for writing": ("os.open('/proc/self/mem', os.O_RDWR)", -signal.SIGSYS),
}


@pytest.mark.parametrize("action", sorted(LOAD_STEP))
def test_the_load_step_lets_a_library_load_and_nothing_else(action, tmp_path):
    code, expected = LOAD_STEP[action]
    src = (PRELUDE.format(repo=str(REPO)) + "from harness.sandbox import seccomp\n"
           "seccomp.install_before_load(notify=False)\n" + code + "\nos._exit(0)\n")
    out = subprocess.run([sys.executable, "-c", src], capture_output=True, timeout=60)
    assert out.returncode == expected, out.stderr.decode()


def test_once_loaded_no_code_may_be_mapped_at_all(tmp_path):
    code = ("f = os.open('/usr/lib/x86_64-linux-gnu/libm.so.6', os.O_RDONLY)\n"
            "mmap.mmap(f, 4096, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_EXEC)\n")
    src = (PRELUDE.format(repo=str(REPO)) + "from harness.sandbox import seccomp\n"
           "seccomp.install_before_load(notify=False)\nseccomp.install_after_load()\n" + code + "os._exit(0)\n")
    out = subprocess.run([sys.executable, "-c", src], capture_output=True, timeout=60)
    assert out.returncode == -signal.SIGSYS, out.stderr.decode()


NAMED = {
    "os.open('/proc/self/mem', os.O_RDWR)": ("openat", 257, "read-only"),
    "socket.socket()": ("socket", 41, "no sockets"),
    "os.fork()": ("clone", 56, "no new processes"),
    "signal.signal(signal.SIGALRM, lambda *a: None)": ("rt_sigaction", 13, "signal 14"),
    "mmap.mmap(-1, 4096, prot=7)": ("mmap", 9, "writable and executable"),
}


@pytest.mark.parametrize("attack", sorted(NAMED))
def test_a_refused_call_is_named_by_the_kernel_through_the_listener(attack):
    """The executor's way (process.py): the first step with a listener, the descriptor handed to the
    parent, then the call. The parent reads the call from the kernel (never from the process), which
    waits meanwhile, and names it."""
    import socket as sk
    ours, theirs = sk.socketpair()
    src = (PRELUDE.format(repo=str(REPO)) + "from harness.sandbox import seccomp\n"
           f"s = socket.socket(fileno={theirs.fileno()})\n"
           "fd = seccomp.install_before_load()\nassert fd is not None\n"
           "socket.send_fds(s, [b'L'], [fd])\nos.close(fd)\n" + attack + "\nos._exit(0)\n")
    proc = subprocess.Popen([sys.executable, "-c", src], pass_fds=[theirs.fileno()], stderr=subprocess.PIPE)
    theirs.close()
    try:
        _, fds, _, _ = sk.recv_fds(ours, 1, 1)
        listener = seccomp.Listener(fds[0])
        import select
        assert select.select([listener.fd], [], [], 30)[0], "no refused call arrived"
        note = listener.receive()
        assert note is not None and proc.poll() is None      # the call waits, the process lives
        name, nr, words = NAMED[attack]
        assert note["nr"] == nr
        got, rule = seccomp.explain(note["nr"], note["arch"], note["args"])
        assert got == name and words in rule, (got, rule)
        listener.close()
    finally:
        proc.kill()
        proc.wait()
        ours.close()


# -- the checks behind the filter -------------------------------------------------------------------
MANIFEST = REPO / "harness" / "adversarial" / "cpu" / "manifest.yaml"
_, ENTRIES = load_manifest(MANIFEST)
BY_FILE = {e["file"]: e for e in ENTRIES}
UNCONFINED = {
    "trust4_lazy_outputs.cpp": ("rejected", "signal handler"),
    "trust5_timer_signal.cpp": ("rejected", "signal handler"),
    "trust6_fork_setsid_survivor.cpp": ("rejected", "process(es)"),
    "trust6_clone_thread.cpp": ("rejected", ("more than one core", "threads other than its main one")),
    "hack02_deferred_write.cpp": ("rejected", ("changed after the call returned", "still running after it returned")),
    "trust3_forged_record.cpp": ("rejected", "wrote to the harness's socket"),
    # issue 39: what a constructor opened or mapped before the filter (with it, refused and named)
    "trust39_ctor_proc_mem.cpp": ("rejected", "a descriptor on a process's memory"),
    "trust39_ctor_rwx.cpp": ("rejected", "memory both writable and executable"),
}


@pytest.mark.parametrize("name", sorted(UNCONFINED))
def test_without_seccomp_the_parent_still_catches(name, cache_dir):
    entry = BY_FILE[name]
    status, wanted = UNCONFINED[name]
    wanted = wanted if isinstance(wanted, tuple) else (wanted,)
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(entry["path"]), scenarios=entry["scenarios"],
                              cache_dir=cache_dir, confine=False, allowlist=False, with_peers=False))
    found = texts(result)
    assert result["status"] == status, found
    assert any(w in t for w in wanted for t in found), found
    assert not any("killed by its seccomp filter" in t for t in found)


def test_the_executor_runs_confined_and_says_so(cache_dir):
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), scenarios="r7-c33",
                              cache_dir=cache_dir, with_peers=False))
    assert result["status"] == "ok"
    assert not any("no seccomp filter" in m for m in result["messages"])
    timing = result["scenarios"][0]["timing"]
    assert timing["overhead_ms"]["candidate"] > 0 and timing["overhead_ms"]["reference"] > 0
    # every timed call was a candidate for the re-check, and more than two were checked
    assert len(result["scenarios"][0]["rechecked_calls"]) > 2


REMAP = """
#include <cmath>
#include <cstdint>
#include <sys/mman.h>
// Outputs computed into private pages mapped over the output buffer: the caller's process sees
// them, the harness's own mapping of the shared buffer does not.
extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  uintptr_t lo = (reinterpret_cast<uintptr_t>(y) + 4095) & ~uintptr_t(4095);
  uintptr_t hi = (reinterpret_cast<uintptr_t>(y + rows * cols)) & ~uintptr_t(4095);
  if (hi > lo) mmap(reinterpret_cast<void*>(lo), hi - lo, PROT_READ | PROT_WRITE,
                    MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(xr[c] - m);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(xr[c] - m) / s;
  }
  return 0;
}
"""


@pytest.mark.parametrize("confine", [True, False])
def test_outputs_are_read_from_the_parents_own_mapping(candidate, cache_dir, confine):
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(candidate(REMAP)), scenarios="r256-c1024",
                              cache_dir=cache_dir, confine=confine, allowlist=False, with_peers=False))
    assert result["status"] == "incorrect"
    assert "were never written" in result["scenarios"][0]["reason"]


# -- poison ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_poison_is_told_from_the_kernels_own_nan(dtype):
    ref = torch.ones(8, dtype=torch.float64)
    out = torch.empty(8, dtype=dtype)
    poison(out)
    assert bool(unwritten(out).all()) and bool(torch.isnan(out).all())
    out[:5] = 1
    ok, _, reason = check_output("y", out, ref, 1e-3)
    assert not ok and "3 of 8 values were never written" in reason and "index 5" in reason
    out[5:] = 1
    out[6] = torch.tensor(0.0, dtype=dtype) / torch.tensor(0.0, dtype=dtype)   # arithmetic NaN
    assert not bool(unwritten(out).any())
    ok, _, reason = check_output("y", out, ref, 1e-3)
    assert not ok and "your kernel's own arithmetic" in reason and "index 6" in reason


def test_arithmetic_on_poison_never_yields_poison():
    out = torch.empty(4, dtype=torch.float32)
    poison(out)
    for derived in (out + 1, out * 2, out - out, torch.exp(out), out.clone().sqrt()):
        assert not bool(unwritten(derived).any())


def test_the_executor_runs_inside_bubblewrap_without_the_checkout(candidate, cache_dir):
    from harness.sandbox import bwrap
    ok, why = bwrap.available()
    if not ok:
        pytest.skip(why)
    # A kernel that looks for the checkout from inside its process: it reports by failing.
    probe = candidate("""
        #include <cstdint>
        #include <sys/stat.h>
        #include <cmath>
        extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
          struct stat st;
          if (stat("%s", &st) == 0) return 7;   // the harness's checkout is visible
          for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * cols;
            float m = xr[0];
            for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
            double s = 0;
            for (int64_t c = 0; c < cols; ++c) s += std::exp(xr[c] - m);
            for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(xr[c] - m) / s;
          }
          return 0;
        }
    """ % (REPO / "harness" / "evaluate.py"))
    inside = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(probe), scenarios="r7-c33",
                              cache_dir=cache_dir, allowlist=False, with_peers=False))
    assert inside["status"] == "ok", texts(inside)
    outside = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(probe), scenarios="r7-c33",
                               cache_dir=cache_dir, allowlist=False, with_peers=False, sandbox=False))
    assert outside["status"] == "runtime_error" and "returned 7" in outside["scenarios"][0]["reason"], texts(outside)
    assert any("not run inside bubblewrap (turned off)" in m for m in outside["messages"])


def test_the_subtree_from_children_files_is_the_subtree_a_scan_of_proc_finds():
    # A watched call looks for processes the candidate started inside its sandbox: read from each
    # process's children files instead of every process's stat (3.2 ms a call on the GPU host).
    # Grandchildren count; a zombie child does not; an orphan re-parented away is in neither.
    import subprocess
    import time
    from harness.executor.handle import _subtree, _subtree_by_scan
    p = subprocess.Popen(["sh", "-c", "sh -c 'sleep 30' & sleep 30 & (sleep 30 &); true & wait"])
    try:
        # The shell's short-lived children (`true`, the subshell) come and go: compare once settled
        deadline = time.monotonic() + 5
        while True:
            found, scanned = sorted(_subtree(p.pid)), sorted(_subtree_by_scan(p.pid))
            if (found == scanned and len(found) >= 3) or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert found == scanned and len(found) >= 3, (found, scanned)
    finally:
        for c in _subtree_by_scan(p.pid):
            try:
                os.kill(c, 9)
            except OSError:
                pass
        p.kill()
        p.wait()
