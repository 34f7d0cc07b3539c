"""A seccomp filter for the executor, built by hand as classic BPF (no libseccomp needed).

Installed in the executor after the CUDA runtime and the candidate's library are loaded, so what it
forbids is what a candidate could do with its process from then on: create or change files, open a
socket, start a process, exec, trace or write another process's memory, map executable memory
(code it could not have been checked for), install a signal handler (other than glibc's own two,
which it sets up when a first thread starts) or a timer (work deferred past "done"), change its
personality (READ_IMPLIES_EXEC) or set up io_uring / userfaultfd / bpf (ways around every other
rule). A forbidden call kills the whole process (SECCOMP_RET_KILL_PROCESS): the
parent sees SIGSYS and rejects the candidate. The check is on the system call itself, so a raw
`syscall` instruction, a libc path no name list knows (`__open_2`, `_Fork`, `__clone`) and a call
made through the Python C API are all caught the same way. The i386 and x32 entry points
(`int 0x80`, syscall numbers with bit 30) are refused outright.

The process must not run Python's shutdown afterwards (it resets SIGINT's handler): the executor
leaves with os._exit. Only x86-64 Linux; on anything else `supported()` is False and the caller
says so in the result.
"""

import ctypes
import errno
import os
import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
# BPF opcodes: ld|w|abs, jmp|jeq|k, jmp|jge|k, jmp|jset|k, ret|k
LD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
OFF_NR, OFF_ARCH = 0, 4


def _arg_lo(i):
    return 16 + 8 * i   # low 32 bits of argument i (little-endian)


# Forbidden whatever the arguments: files changed or created, processes, exec, tracing, timers,
# handlers, sockets, and ways around the rest. x86-64 numbers (asm/unistd_64.h).
FORBIDDEN = {
    "shmget": 29, "shmat": 30, "alarm": 37, "setitimer": 38,
    "socket": 41, "connect": 42, "accept": 43, "bind": 49, "listen": 50, "socketpair": 53,
    "fork": 57, "vfork": 58, "execve": 59, "kill": 62, "truncate": 76, "rename": 82, "mkdir": 83,
    "rmdir": 84, "creat": 85, "link": 86, "unlink": 87, "symlink": 88, "chmod": 90, "fchmod": 91,
    "chown": 92, "fchown": 93, "lchown": 94, "ptrace": 101, "setpgid": 109, "setsid": 112,
    "mknod": 133, "personality": 135, "tkill": 200, "timer_create": 222, "timer_settime": 223,
    "mkdirat": 258, "mknodat": 259, "fchownat": 260, "unlinkat": 263, "renameat": 264, "linkat": 265,
    "symlinkat": 266, "fchmodat": 268, "timerfd_create": 283, "accept4": 288, "perf_event_open": 298,
    "open_by_handle_at": 304, "process_vm_readv": 310, "process_vm_writev": 311, "renameat2": 316,
    "memfd_create": 319, "bpf": 321, "execveat": 322, "userfaultfd": 323, "pidfd_send_signal": 424,
    "io_uring_setup": 425, "pidfd_open": 434, "openat2": 437,
}
SYS_OPEN, SYS_OPENAT, SYS_MMAP, SYS_MPROTECT, SYS_PKEY_MPROTECT = 2, 257, 9, 10, 329
SYS_CLONE, SYS_CLONE3, SYS_TGKILL, SYS_RT_SIGACTION = 56, 435, 234, 13
# glibc's own signals (SIGCANCEL, SIGSETXID): it installs their handlers when a first thread starts.
GLIBC_SIGNALS = (32, 33)
# open modes that write or create: O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND, __O_TMPFILE
WRITE_MODES = 0x1 | 0x2 | 0x40 | 0x200 | 0x400 | 0x400000
PROT_EXEC = 0x4
CLONE_THREAD = 0x10000


def supported():
    return platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")


def _ins(code, k, jt=0, jf=0):
    return (code, jt, jf, k)


def program(pid=None, threads=True):
    """The filter as a list of (code, jt, jf, k). `pid`: the only process tgkill may signal.
    threads=False (a single-threaded task): no clone at all, not even a thread."""
    pid = os.getpid() if pid is None else pid
    kill, allow = _ins(RET, RET_KILL_PROCESS), _ins(RET, RET_ALLOW)
    p = [_ins(LD_ABS, OFF_ARCH), _ins(JEQ, AUDIT_ARCH_X86_64, 1, 0), kill,
         _ins(LD_ABS, OFF_NR), _ins(JGE, X32_BIT, 0, 1), kill]
    forbidden = set(FORBIDDEN.values()) | (set() if threads else {SYS_CLONE, SYS_CLONE3})
    for nr in sorted(forbidden):
        p += [_ins(JEQ, nr, 0, 1), kill]
    # clone3 cannot be inspected (its flags are in memory): glibc falls back to clone on ENOSYS.
    p += [_ins(JEQ, SYS_CLONE3, 0, 1), _ins(RET, RET_ERRNO | errno.ENOSYS)]

    def arg_rule(nr, arg, mask=None, equal=None):
        """nr with (arg & mask) != 0, or arg != equal -> kill; A holds nr again afterwards."""
        test = _ins(JSET, mask, 0, 1) if mask is not None else _ins(JEQ, equal, 1, 0)
        return [_ins(JEQ, nr, 0, 4), _ins(LD_ABS, _arg_lo(arg)), test, kill, _ins(LD_ABS, OFF_NR)]

    p += arg_rule(SYS_OPEN, 1, mask=WRITE_MODES)
    p += arg_rule(SYS_OPENAT, 2, mask=WRITE_MODES)
    p += arg_rule(SYS_MMAP, 2, mask=PROT_EXEC)
    p += arg_rule(SYS_MPROTECT, 2, mask=PROT_EXEC)
    p += arg_rule(SYS_PKEY_MPROTECT, 2, mask=PROT_EXEC)
    p += arg_rule(SYS_TGKILL, 0, equal=pid)
    # rt_sigaction for any other signal -> kill (jt/jf count the instructions skipped)
    p += [_ins(JEQ, SYS_RT_SIGACTION, 0, 5), _ins(LD_ABS, _arg_lo(0)), _ins(JEQ, GLIBC_SIGNALS[0], 2, 0),
          _ins(JEQ, GLIBC_SIGNALS[1], 1, 0), kill, _ins(LD_ABS, OFF_NR)]
    # clone without CLONE_THREAD is a new process: the test is inverted (set -> allowed).
    p += [_ins(JEQ, SYS_CLONE, 0, 4), _ins(LD_ABS, _arg_lo(0)), _ins(JSET, CLONE_THREAD, 1, 0), kill,
          _ins(LD_ABS, OFF_NR)]
    p.append(allow)
    for code, jt, jf, k in p:
        assert jt < 256 and jf < 256 and k < (1 << 32), (code, jt, jf, k)
    return p


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(pid=None, threads=True):
    """Install the filter on this process (all threads: SECCOMP_FILTER_FLAG_TSYNC). Irreversible."""
    prog = program(pid, threads)
    raw = b"".join(struct.pack("<HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))
    fprog = _SockFprog(len(prog), ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:     # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    libc.syscall.restype = ctypes.c_long
    # seccomp(SECCOMP_SET_MODE_FILTER=1, SECCOMP_FILTER_FLAG_TSYNC=1, &fprog); syscall 317
    rc = libc.syscall(ctypes.c_long(317), ctypes.c_long(1), ctypes.c_long(1), ctypes.byref(fprog))
    if rc != 0:
        raise OSError(ctypes.get_errno(), f"seccomp(SECCOMP_SET_MODE_FILTER) returned {rc}")
