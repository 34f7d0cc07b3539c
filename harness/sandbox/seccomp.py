"""A seccomp filter for the executor, built by hand as classic BPF (no libseccomp needed).

Installed in two steps around the loading of the candidate's library (issue 39: no code of the
candidate runs before the filter): before it, every rule below but one, the loader's: a file may be
mapped executable (read-only, not anonymous), so that the dynamic linker can map the library, while
writable-and-executable or anonymous executable memory is refused, as is any mprotect to PROT_EXEC
(the constructors run under this); once it is loaded, a second filter refuses PROT_EXEC in mmap
too. So what the filter forbids is what a candidate could do with its process from its first
instruction: create or change files, open a
socket, start a process, exec, trace or write another process's memory, map executable memory
(code it could not have been checked for), install a signal handler (other than glibc's own two,
which it sets up when a first thread starts) or a timer (work deferred past "done"), change its
personality (READ_IMPLIES_EXEC) or set up io_uring / userfaultfd / bpf (ways around every other
rule). A forbidden call stops the process: where the kernel gives the parent a listener
(SECCOMP_RET_USER_NOTIF, Linux 5.7 with threads), the thread waits, the parent reads the call and its
arguments from the kernel (not from the candidate's process), kills the executor and names the call
and the rule; otherwise the whole process is killed (SECCOMP_RET_KILL_PROCESS) and the parent sees
SIGSYS. The second step's one rule always kills (a filter with no listener of its own cannot notify):
a SIGSYS where a listener was in place is that rule. The check is on the system call itself, so a raw
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
RET_USER_NOTIF = 0x7FC00000
RET_ALLOW = 0x7FFF0000
# BPF opcodes: ld|w|abs, jmp|jeq|k, jmp|jge|k, jmp|jset|k, jmp|ja, ret|k
LD_ABS, JEQ, JGE, JSET, JA, RET = 0x20, 0x15, 0x35, 0x45, 0x05, 0x06
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
SYS_CLONE, SYS_CLONE3, SYS_TGKILL, SYS_RT_SIGACTION, SYS_SECCOMP = 56, 435, 234, 13, 317
# glibc's own signals (SIGCANCEL, SIGSETXID): it installs their handlers when a first thread starts.
GLIBC_SIGNALS = (32, 33)
# open modes that write or create: O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND, __O_TMPFILE
WRITE_MODES = 0x1 | 0x2 | 0x40 | 0x200 | 0x400 | 0x400000
PROT_WRITE, PROT_EXEC = 0x2, 0x4
MAP_ANONYMOUS = 0x20
CLONE_THREAD = 0x10000
# seccomp(2) flags
FLAG_TSYNC, FLAG_NEW_LISTENER, FLAG_TSYNC_ESRCH = 1, 8, 16


def supported():
    return platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")


def _ins(code, k, jt=0, jf=0):
    return (code, jt, jf, k)


def program(pid=None, threads=True, phase="all", action=RET_KILL_PROCESS):
    """The filter as a list of (code, jt, jf, k). `pid`: the only process tgkill may signal.
    threads=False (a single-threaded task): no clone at all, not even a thread.

    phase "all": every rule (the filter of one step, as tests and tools install it); "load": every
    rule but mmap's PROT_EXEC, which is refused only with PROT_WRITE or MAP_ANONYMOUS (the dynamic
    linker maps a library's code from its file); "exec": that one rule alone, mmap with PROT_EXEC
    (installed once the library is loaded). `action`: what a forbidden call gets (the "exec" step
    always kills: it has no listener of its own to notify)."""
    pid = os.getpid() if pid is None else pid
    allow = _ins(RET, RET_ALLOW)
    if phase == "exec":
        kill = _ins(RET, RET_KILL_PROCESS)
        # (another architecture's calls are the first step's to refuse: its number 9 is not mmap)
        return [_ins(LD_ABS, OFF_ARCH), _ins(JEQ, AUDIT_ARCH_X86_64, 0, 5), _ins(LD_ABS, OFF_NR),
                _ins(JEQ, SYS_MMAP, 0, 3), _ins(LD_ABS, _arg_lo(2)), _ins(JSET, PROT_EXEC, 0, 1), kill, allow]
    kill = _ins(RET, action)
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
    if phase == "load":
        # mmap with PROT_EXEC: refused with PROT_WRITE (W^X) or MAP_ANONYMOUS (code from nowhere)
        p += [_ins(JEQ, SYS_MMAP, 0, 8), _ins(LD_ABS, _arg_lo(2)), _ins(JSET, PROT_EXEC, 0, 5),
              _ins(JSET, PROT_WRITE, 3, 0), _ins(LD_ABS, _arg_lo(3)), _ins(JSET, MAP_ANONYMOUS, 1, 0),
              _ins(JA, 1), kill, _ins(LD_ABS, OFF_NR)]
    else:
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


# -- what a refused call was, in words (the parent's side) ----------------------------------------
NAMES = {v: k for k, v in FORBIDDEN.items()}
NAMES.update({SYS_OPEN: "open", SYS_OPENAT: "openat", SYS_MMAP: "mmap", SYS_MPROTECT: "mprotect",
              SYS_PKEY_MPROTECT: "pkey_mprotect", SYS_CLONE: "clone", SYS_CLONE3: "clone3",
              SYS_TGKILL: "tgkill", SYS_RT_SIGACTION: "rt_sigaction"})
_RULES = {
    "file": "no file may be created, changed, renamed, linked or removed",
    "socket": "no sockets", "process": "no new processes, sessions or process groups, no exec",
    "ptrace": "no tracing or writing another process's memory", "timer": "no timers or alarms (work deferred "
    "past the answer)", "signal": "no signals to other processes", "memfd": "no anonymous files",
    "escape": "no ways around the other rules (io_uring, bpf, userfaultfd, perf events, personality, "
              "shared memory, file handles, pidfds)",
}
_KIND = {}
for _n in ("truncate", "rename", "mkdir", "rmdir", "creat", "link", "unlink", "symlink", "chmod", "fchmod", "chown",
           "fchown", "lchown", "mknod", "mkdirat", "mknodat", "fchownat", "unlinkat", "renameat", "linkat",
           "symlinkat", "fchmodat", "renameat2", "openat2"):
    _KIND[_n] = "file"
for _n in ("socket", "connect", "accept", "bind", "listen", "socketpair", "accept4"):
    _KIND[_n] = "socket"
for _n in ("fork", "vfork", "execve", "execveat", "setpgid", "setsid"):
    _KIND[_n] = "process"
for _n in ("ptrace", "process_vm_readv", "process_vm_writev"):
    _KIND[_n] = "ptrace"
for _n in ("alarm", "setitimer", "timer_create", "timer_settime", "timerfd_create"):
    _KIND[_n] = "timer"
for _n in ("kill", "tkill", "pidfd_send_signal"):
    _KIND[_n] = "signal"
_KIND["memfd_create"] = "memfd"
for _n in ("shmget", "shmat", "personality", "open_by_handle_at", "bpf", "userfaultfd", "io_uring_setup",
           "pidfd_open", "perf_event_open"):
    _KIND[_n] = "escape"


def explain(nr, arch, args, threads=True):
    """(name, rule) of a call the filter refused: `nr`, `arch` (AUDIT_ARCH_*) and the six arguments
    as the kernel reported them."""
    if arch != AUDIT_ARCH_X86_64:
        return f"syscall {nr} of architecture {arch:#x}", "only x86-64 system calls (no int 0x80)"
    if nr & X32_BIT:
        return f"x32 syscall {nr & ~X32_BIT}", "only x86-64 system calls (no x32 ABI)"
    name = NAMES.get(nr, f"syscall {nr}")
    a = [int(x) & 0xFFFFFFFF for x in args]
    if nr in (SYS_OPEN, SYS_OPENAT):
        flags = a[1] if nr == SYS_OPEN else a[2]
        return name, f"files are opened read-only (flags {flags:#x} write or create)"
    if nr in (SYS_MMAP, SYS_MPROTECT, SYS_PKEY_MPROTECT):
        prot = a[2]
        if nr == SYS_MMAP and prot & PROT_EXEC and not (prot & PROT_WRITE) and not (a[3] & MAP_ANONYMOUS):
            return name, f"no executable mapping once the library is loaded (prot {prot:#x})"
        if nr == SYS_MMAP and prot & PROT_EXEC and a[3] & MAP_ANONYMOUS and not (prot & PROT_WRITE):
            return name, f"no anonymous executable memory (prot {prot:#x}, flags {a[3]:#x})"
        if prot & PROT_WRITE and prot & PROT_EXEC:
            return name, f"no memory both writable and executable (prot {prot:#x})"
        return name, f"no memory made executable (prot {prot:#x})"
    if nr == SYS_TGKILL:
        return name, f"signals only to the executor itself (tgid {a[0]})"
    if nr == SYS_RT_SIGACTION:
        return name, f"no signal handlers (signal {a[0]}; glibc's own 32 and 33 only)"
    if nr in (SYS_CLONE, SYS_CLONE3):
        if not threads:
            return name, "no threads on a single-threaded task, no new processes"
        return name, f"threads only, no new processes (flags {a[0]:#x})"
    return name, _RULES.get(_KIND.get(name), "a system call code under evaluation may not make")


# Named when a process dies of SIGSYS with a listener in place: the after-load step's only rule.
AFTER_LOAD_KILL = ("mmap", SYS_MMAP, "no executable mapping once the library is loaded")


# -- the parent's end of a listener ------------------------------------------------------------------
NOTIF = struct.Struct("<QIIiIQ6Q")        # struct seccomp_notif: id, pid, flags, seccomp_data
IOCTL_NOTIF_RECV = (3 << 30) | (NOTIF.size << 16) | (ord("!") << 8) | 0


class Listener:
    """A seccomp listener descriptor the executor handed over: each refused call of its process
    waits here until the parent reads it (and then kills the process)."""

    def __init__(self, fd):
        self.fd = fd

    def pending(self):
        """Whether a refused call is waiting (without blocking)."""
        import select
        try:
            return bool(select.select([self.fd], [], [], 0)[0])
        except (OSError, ValueError):
            return False

    def receive(self):
        """The waiting call as {nr, arch, ip, args, pid}, or None when it is gone (the thread died)."""
        import fcntl
        buf = bytearray(NOTIF.size)
        try:
            fcntl.ioctl(self.fd, IOCTL_NOTIF_RECV, buf, True)
        except OSError:
            return None
        _id, pid, _flags, nr, arch, ip, *args = NOTIF.unpack(bytes(buf))
        return {"nr": nr, "arch": arch, "ip": ip, "args": list(args), "pid": pid}

    def close(self):
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _seccomp(prog, flags):
    raw = b"".join(struct.pack("<HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))
    fprog = _SockFprog(len(prog), ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:     # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    libc.syscall.restype = ctypes.c_long
    rc = libc.syscall(ctypes.c_long(SYS_SECCOMP), ctypes.c_long(1), ctypes.c_long(flags), ctypes.byref(fprog))
    # with TSYNC alone a positive result is the thread that could not be synchronised
    if rc < 0 or (rc > 0 and not flags & FLAG_NEW_LISTENER):
        raise OSError(ctypes.get_errno() if rc < 0 else errno.ESRCH,
                      f"seccomp(SECCOMP_SET_MODE_FILTER, {flags:#x}) returned {rc}")
    return rc


def install(pid=None, threads=True):
    """Install every rule in one step on this process (all threads: SECCOMP_FILTER_FLAG_TSYNC),
    killing on a refused call. Irreversible."""
    _seccomp(program(pid, threads), FLAG_TSYNC)


def install_before_load(pid=None, threads=True, notify=True):
    """The first step, before anything of the candidate's is loaded: every rule but mmap's PROT_EXEC
    from a file. Returns the listener's descriptor when `notify` and the kernel gives one (then a
    refused call waits for the parent instead of killing: hand the descriptor over and close it here
    before any code of the candidate's runs), else None (a refused call kills)."""
    if notify:
        try:
            return _seccomp(program(pid, threads, "load", RET_USER_NOTIF),
                            FLAG_TSYNC | FLAG_NEW_LISTENER | FLAG_TSYNC_ESRCH)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.EBUSY, errno.ENOSYS, errno.EOPNOTSUPP):
                raise
    _seccomp(program(pid, threads, "load"), FLAG_TSYNC)
    return None


def install_after_load():
    """The second step, once the library is loaded: no PROT_EXEC in mmap either (kills)."""
    _seccomp(program(phase="exec"), FLAG_TSYNC)
