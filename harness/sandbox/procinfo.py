"""What a process is running: its threads and the shared libraries mapped into it (Linux /proc)."""

import os
import signal
from pathlib import Path


def thread_ids():
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:  # not Linux: no thread accounting (documented in docs/harness.md)
        return set()


def thread_names(tids):
    names = []
    for tid in sorted(tids):
        try:
            with open(f"/proc/self/task/{tid}/comm") as fh:
                names.append(fh.read().strip())
        except OSError:
            names.append(f"tid {tid} (exited)")
    return names


def mapped_libraries():
    """Paths of shared objects mapped into this process."""
    libs = set()
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    path = parts[5].strip()
                    if ".so" in path.rsplit("/", 1)[-1]:
                        libs.add(path)
    except OSError:
        pass
    return libs


def exit_text(code):
    """How a child process ended, in words: "killed by SIGSEGV", "exited with code 3"."""
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


def log_tail(log, log_path, limit=2000):
    """The end of a child's log file (flushed first), as text."""
    try:
        log.flush()
        data = Path(log_path).read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode(errors="replace").strip()


class ChildFailure(Exception):
    def __init__(self, kind, message, who=None):
        super().__init__(message)
        self.kind = kind          # "timeout" | "crash" | "call" (CUDA error) | "harness"
        self.who = who            # which implementation was running, when known


def child_setup(parent_pid):
    """In the child before exec: no core files; its own process group (a candidate's own children
    are killed together with it); killed when the parent dies, so a harness killed by a timeout
    never leaves a candidate running."""
    import ctypes
    import resource
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    os.setpgid(0, 0)
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:   # the parent died before prctl took effect
        os._exit(1)
