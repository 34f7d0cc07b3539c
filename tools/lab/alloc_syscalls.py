"""Which system calls the stream-ordered allocator makes under the executor's seccomp filter (issue 39).

    python3 -m tools.lab.alloc_syscalls [--json out.json]

An honest rmsnorm that takes its workspace with cudaMallocAsync / cudaFreeAsync on the stream it is
given was killed by SIGSYS. This builds tools/lab/alloc_syscalls.cu with nvcc and, for each way
the executor could set the allocator up before its filter (MODES), runs it in a fresh process: CUDA
up and a stream made, the mode's set-up, then the executor's filter (harness/sandbox/seccomp.py,
the CUDA executor's variant: threads allowed) with every refusal turned into SECCOMP_RET_TRAP, then
workspaces of STEPS bytes taken, written and given back. Each refused call is printed with its
number, name, arguments and (open/openat) path, and the call fails with EPERM instead of killing
the process, so every refused call of a step is listed. Needs a GPU and nvcc; GPU host only.
"""

import argparse
import ctypes
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.sandbox import seccomp

SOURCE = Path(__file__).with_name("alloc_syscalls.cu")
RET_TRAP = 0x00030000
# (name, pre-warm bytes before the filter or 0, keep the pool's memory between synchronisations)
MODES = (("plain", 0, 0), ("prewarm", 1 << 20, 0), ("prewarm-keep", 1 << 20, 1), ("prewarm-keep-large", 1 << 30, 1))
STEPS = (1 << 20, 64 << 20, 1 << 30)


def trap_program(pid):
    """The executor's filter (CUDA: threads allowed) with each kill made a trap."""
    return [(code, jt, jf, RET_TRAP if (code == seccomp.RET and k == seccomp.RET_KILL_PROCESS) else k)
            for code, jt, jf, k in seccomp.program(pid, threads=True)]


def install(prog):
    raw = b"".join(struct.pack("<HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))
    fprog = seccomp._SockFprog(len(prog), ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(ctypes.c_long(317), ctypes.c_long(1), ctypes.c_long(1), ctypes.byref(fprog)) != 0:
        raise OSError(ctypes.get_errno(), "seccomp(SECCOMP_SET_MODE_FILTER) failed")


def names():
    """{number: name} of the system calls the filter names (FORBIDDEN and those it inspects)."""
    out = {nr: name for name, nr in seccomp.FORBIDDEN.items()}
    out.update({seccomp.SYS_OPEN: "open", seccomp.SYS_OPENAT: "openat", seccomp.SYS_MMAP: "mmap",
                seccomp.SYS_MPROTECT: "mprotect", seccomp.SYS_PKEY_MPROTECT: "pkey_mprotect",
                seccomp.SYS_CLONE: "clone", seccomp.SYS_CLONE3: "clone3", seccomp.SYS_TGKILL: "tgkill",
                seccomp.SYS_RT_SIGACTION: "rt_sigaction"})
    return out


def child(mode, library):
    lib = ctypes.CDLL(library)
    lib.probe_log.restype = ctypes.c_char_p
    lib.probe_prewarm.argtypes = [ctypes.c_size_t, ctypes.c_int]
    lib.probe_step.argtypes = [ctypes.c_size_t]
    rc = lib.probe_setup()
    if rc:
        print(f"setup failed: {rc}")
        return 1
    _, warm, keep = next(m for m in MODES if m[0] == mode)
    if warm:
        lib.probe_prewarm(warm, keep)
    install(trap_program(os.getpid()))
    fails = sum(lib.probe_step(size) for size in STEPS)   # the log goes to stderr as it is written
    os._exit(0 if fails == 0 else 3)


def build(workdir):
    nvcc = os.environ.get("KERNELSEEK_NVCC") or shutil.which("nvcc")
    if not nvcc:
        raise SystemExit("alloc_syscalls: nvcc not found")
    out = Path(workdir) / "alloc_syscalls.so"
    subprocess.run([nvcc, "-O2", "-shared", "-Xcompiler", "-fPIC", "-o", str(out), str(SOURCE)], check=True)
    return str(out)


def annotate(text):
    """The child's log with each trapped number's name."""
    known, lines = names(), []
    for line in text.splitlines():
        if "trapped nr=" in line:
            nr = int(line.split("trapped nr=")[1].split()[0])
            line += f"  [{known.get(nr, '?')}]"
        lines.append(line)
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m tools.lab.alloc_syscalls")
    p.add_argument("--json")
    p.add_argument("--child", nargs=2, metavar=("MODE", "LIBRARY"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return child(*args.child)
    report = {}
    with tempfile.TemporaryDirectory(prefix="ks-alloc-") as tmp:
        library = build(tmp)
        for mode, _, _ in MODES:
            proc = subprocess.run([sys.executable, "-m", "tools.lab.alloc_syscalls", "--child", mode, library],
                                  capture_output=True, text=True, timeout=120)
            text = annotate(proc.stderr) + (f"\nstdout: {proc.stdout.strip()[-1500:]}" if proc.stdout.strip() else "")
            report[mode] = {"rc": proc.returncode, "log": text}
            print(f"== {mode}: rc {proc.returncode} ({'every step ok' if proc.returncode == 0 else 'a step failed'})")
            print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
