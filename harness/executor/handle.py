"""The trusted parent's handle on one executor process: start it, talk to it, watch it, kill it.

Everything the verdict needs about the executor is measured from here, never taken from it: the
wall clock around each request and its "done", the kernel's account of the executor's CPU time
(clock_getcpuclockid: every thread, signal handlers included), its threads, its mapped libraries,
its caught signals and POSIX timers (/proc/<pid>), and the processes it left behind. The executor's
replies are small JSON frames checked field by field; nothing from it is unpickled.
"""

import ctypes
import functools
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from ..sandbox import bwrap, procinfo, seccomp
from ..sandbox.procinfo import ChildFailure, child_setup as _child_setup
from .protocol import recv_frame, send_frame

# bound requests (issue 39), kept apart from the imports above, which the filter's side of issue 39 edits
from ..native import bound as bound_wire

REPLY_LIMIT = 64 << 10
STARTUP_SECONDS = 120

_libc = ctypes.CDLL(None, use_errno=True)


def cpu_clock(pid):
    """The clock id of a process's CPU time (all its threads), as clock_gettime_ns accepts."""
    clk = ctypes.c_int()
    err = _libc.clock_getcpuclockid(pid, ctypes.byref(clk))
    if err:
        raise OSError(err, f"clock_getcpuclockid({pid}) failed")
    return clk.value


def set_subreaper():
    """Make this process the reaper of orphans below it, so a process a candidate detaches with
    setsid/double fork is re-parented here, where it can be found and killed."""
    try:
        _libc.prctl(36, 1, 0, 0, 0)   # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


# The only harness files an executor needs (copied into the sandbox: the checkout stays outside).
PACKAGE_FILES = ("__init__.py", "api.py",
                 "executor/__init__.py", "executor/process.py", "executor/protocol.py", "executor/cuda_driver.py",
                 "executor/cuda_state.py", "executor/cupti_activity.py", "executor/python_candidate.py",
                 "executor/python_calls.py", "executor/triton_warm.py",
                 "sandbox/__init__.py", "sandbox/seccomp.py",
                 "native/__init__.py", "native/calls.py", "native/bound.py")
INSIDE = "/kernelseek"


def package_copy(workdir):
    """A copy of the executor's own files, to bind read-only into the sandbox."""
    root = Path(workdir) / "executor-package"
    pkg = root / "harness"
    if not pkg.is_dir():
        pkg.mkdir(parents=True)
        for name in PACKAGE_FILES:
            (pkg / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(__file__).resolve().parents[1] / name, pkg / name)
    return root


class ExecutorProcess:
    # The seccomp listener the executor hands over while loading (sandbox/seccomp.Listener): each call
    # its filter refuses waits there, and is read and named here. `notifying`: one was in place.
    # `_listener_seq`: the init request whose reply may come after a listener frame. (Class defaults:
    # tests make handles without __init__.)
    listener = None
    notifying = False
    _listener_seq = None

    def __init__(self, workdir, role, call_timeout, confine=True, sandboxed=False, binds=(), module=None, extra_env=None):
        """binds: (host path, path inside) pairs the sandbox shows read-only (libraries, a task).
        module: the executor's module (default harness.executor.process; Python implementations:
        harness.executor.python_candidate); extra_env: variables added to its environment."""
        self.role = role                    # "candidate" or "reference" (baseline and peers)
        self.call_timeout = call_timeout
        self.workdir = Path(workdir)
        self.log_path = self.workdir / f"executor-{role}-{int(time.time() * 1000)}.log"
        self.log = open(self.log_path, "wb")
        self.confine = confine and seccomp.supported()
        self.sandboxed = sandboxed
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # The same hash seed in every executor: identical code must read the same in the candidate's
        # executor and its twin, and a random seed per process lays out the interpreter's dicts
        # differently (issue 14: per-evaluation offsets of a 2 us kernel measured through Python).
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONDONTWRITEBYTECODE": "1",
               "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
        if os.environ.get("CUDA_VISIBLE_DEVICES") is not None:    # the GPU the evaluation was given
            env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
        env.update(extra_env or {})
        argv = [sys.executable, "-m", module or "harness.executor.process", str(theirs.fileno())]
        setup = functools.partial(_child_setup, os.getpid())
        set_subreaper()
        # Whatever already ran below this process (the caller's watchdog, say: kernelseek starts the
        # harness beside a `sh`/`cat` that kills its group when the caller dies) is not the candidate's.
        self.preexisting = set(_children_of(os.getpid()))
        if sandboxed:
            env["PYTHONPATH"] = f"{INSIDE}/package"
            # Copied in from descriptors (issue 39): the sandbox's mount table names no path of the
            # evaluation's directory, and an unprivileged sandbox needs no access to it.
            data = bwrap.data_tree(package_copy(workdir), f"{INSIDE}/package")
            for host, inside in binds:
                data += bwrap.data_tree(host, inside) if os.path.isdir(host) else [(host, inside)]
            self.proc = bwrap.popen(argv, pass_fds=(theirs.fileno(),), env=env, cwd="/tmp", data_binds=data,
                                    stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                                    preexec_fn=setup)
        else:
            env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                                         cwd=str(self.workdir), env=env, pass_fds=(theirs.fileno(),),
                                         preexec_fn=setup)
        theirs.close()
        self.sock = ours
        self.pid = self.proc.pid      # the executor's own pid once ready() found it (bwrap's until then)
        _LIVE.add(self.pid)
        self.seq = 0
        self.pending = []            # requests sent by send() whose replies collect() has not read
        self.running = None          # what the executor is doing now (for a timeout's message)
        self.deadline = None         # the evaluation's time limit (time.monotonic()), set by the caller
        self.clock = None
        self._maps = None     # (the last /proc/PID/maps read, the libraries in it): libraries()
        self._exec_maps = None    # (the last maps read, its writable and anonymous executable regions): exposure()

    # -- talking ----------------------------------------------------------------------------------
    def request(self, msg, fds=None, timeout=None):
        """Send one command and return its checked reply (after those of earlier send()s)."""
        if self.pending:
            self.collect()
        self.seq += 1
        msg = dict(msg, seq=self.seq)
        try:
            send_frame(self.sock, msg, fds)
        except OSError:
            raise self._died() from None
        return self._reply(timeout or self.call_timeout)

    def send(self, msg, fds=None):
        """Send one command now and collect its reply later (collect()): the executor works on it
        while this process does something else. Nothing else may be sent before collect()."""
        self.seq += 1
        try:
            send_frame(self.sock, dict(msg, seq=self.seq), fds)
        except OSError:
            raise self._died() from None
        self.pending.append(self.seq)

    def collect(self, timeout=None):
        """The replies to the commands send() sent, in order (the first error raises)."""
        replies, pending, self.pending = [], self.pending, []
        for seq in pending:
            replies.append(self._reply(timeout or self.call_timeout, seq))
        return replies

    def _reply(self, timeout, seq=None):
        seq = self.seq if seq is None else seq
        # The evaluation's time limit (`deadline`, a time.monotonic() value the caller sets) holds
        # inside a call too: a call that hangs with a long call timeout must not outlive it.
        wait = timeout if self.deadline is None else max(0.0, min(timeout, self.deadline - time.monotonic()))
        end = time.monotonic() + wait
        while True:
            watched = [self.sock] + ([self.listener.fd] if self.listener is not None else [])
            ready = select.select(watched, [], [], max(0.0, end - time.monotonic()))[0]
            if self.listener is not None and self.listener.fd in ready:
                self._notified()      # raises, unless the filter's last user is gone (then the socket says so)
                continue
            if not ready:
                who = self.running
                self.kill()
                if self.deadline is not None and time.monotonic() >= self.deadline:
                    raise ChildFailure("timeout", "the evaluation's time limit was reached during this scenario"
                                       + (f" (while running {who})" if who else "") + "; the process was killed",
                                       who)
                raise ChildFailure("timeout", f"no progress for {timeout:.0f} s"
                                   + (f" while running {who}" if who else "") + "; the process was killed", who)
            fds = [] if self._listener_seq == seq else None
            try:
                reply = recv_frame(self.sock, fds, REPLY_LIMIT)
            except EOFError:
                raise self._died() from None
            except (ValueError, UnicodeDecodeError, OSError) as exc:
                self.kill()
                raise ChildFailure("forged", f"a garbled reply from the {self.role}'s executor ({exc}): something "
                                             f"in that process wrote to the harness's socket", self.running) from None
            if isinstance(reply, dict) and reply.get("type") == "listener" and reply.get("seq") == seq \
                    and self._listener_seq == seq and len(fds or ()) == 1:
                # Sent by the executor's own code between the filter's first step and the library's load,
                # once: no code of the candidate's has run yet.
                self.listener, self.notifying, self._listener_seq = seccomp.Listener(fds[0]), True, None
                continue
            for fd in fds or ():
                os.close(fd)
            break
        if not isinstance(reply, dict) or reply.get("seq") != seq or reply.get("type") not in ("done", "error"):
            self.kill()
            raise ChildFailure("forged", f"a reply from the {self.role}'s executor that is not the answer to "
                                         f"request {seq} ({str(reply)[:120]}): something in that process "
                                         f"wrote to the harness's socket", self.running)
        if self._listener_seq == seq:
            self._listener_seq = None
        if reply["type"] == "error":
            # "load": the library does not load; "call": the call failed on the device (CUDA fault).
            kind = reply.get("kind") if reply.get("kind") in ("load", "call") else "harness"
            raise ChildFailure(kind, str(reply.get("message")) + ("" if kind != "harness" else
                                                                  "\n" + str(reply.get("traceback", ""))),
                               self.running)
        return reply

    def _notified(self):
        """A call the filter refused is waiting on the listener: read it from the kernel, kill the
        executor and raise what it was. When nothing waits (the process is gone: the filter's second
        step kills, or it exited) the listener is closed and the socket tells the rest."""
        note = self.listener.receive()
        if note is None:
            if not self.listener.pending():
                return
            self.listener.close()
            self.listener = None
            return
        who = self.running
        self.kill()
        name, rule = seccomp.explain(note["nr"], note["arch"], note["args"])
        raise ChildFailure("seccomp", self._refusal(note["nr"], name, rule, who), who)

    def refused(self):
        """Raises when a call the filter refused is waiting (a thread of the candidate's may make one
        while another answers): looked at after each watched call and timed round."""
        if self.listener is not None and self.listener.pending():
            self._notified()

    def _refusal(self, nr, name, rule, who):
        return (f"the {self.role}'s executor was killed by its seccomp filter: it made the system call {name} "
                f"(number {nr}), which code under evaluation may not make ({rule})"
                + (f", while running {who}" if who else ""))

    # -- bound requests (harness/timing/bound.py; frames in harness/native/bound.py) ---------------
    def bound_open(self, table):
        """Start a session of bound requests on the slots of the executor's table `table`; raises
        ChildFailure when the executor answers the request instead (an error) or not at all."""
        self.send({"cmd": "bound", "table": table})
        head = self._raw(4)
        if int.from_bytes(head, "little") != bound_wire.MAGIC:
            self._frame_instead(head)
        self._bound_reply(head + self._raw(bound_wire.REPLY.size - 4), 0)

    def bound_call(self, slot, tag):
        """One bound request: (the entry point's return code, the synchronisation's result)."""
        try:
            self.sock.sendall(bound_wire.REQUEST.pack(int(slot), int(tag)))
        except OSError:
            raise self._died() from None
        return self._bound_reply(self._raw(bound_wire.REPLY.size), tag)

    def bound_calls(self, slots, tags, sync_each=True):
        """Several bound requests sent at once and answered in turn (a CPU scenario's batch of lean
        calls, issue 39; a CUDA batch with `sync_each` False: the device synchronised after the last
        call only): [(return code, synchronisation's result)]."""
        last = len(tags) - 1
        tags = [int(t) | (bound_wire.NOSYNC if not sync_each and i < last else 0) for i, t in enumerate(tags)]
        try:
            self.sock.sendall(b"".join(bound_wire.REQUEST.pack(int(s), t) for s, t in zip(slots, tags)))
        except OSError:
            raise self._died() from None
        return [self._bound_reply(self._raw(bound_wire.REPLY.size), t) for t in tags]

    def bound_close(self):
        """End the session: the executor's reply to the request that opened it."""
        try:
            self.sock.sendall(bound_wire.END)
        except OSError:
            raise self._died() from None
        return self.collect()[-1]

    def _bound_reply(self, data, tag):
        magic, got, rc, sync_rc = bound_wire.REPLY.unpack(data)
        if magic != bound_wire.MAGIC or got != tag:
            self.kill()
            raise ChildFailure("forged", f"a bound reply from the {self.role}'s executor that does not answer "
                                         f"request {tag} ({data.hex()}): something in that process wrote to the "
                                         f"harness's socket", self.running)
        return rc, sync_rc

    def _frame_instead(self, head):
        """The executor answered the session's request with a JSON frame (its 4-byte length in `head`)
        instead of starting the session: raise what it says, as _reply would."""
        length = int.from_bytes(head, "big")
        if length > REPLY_LIMIT:
            self.kill()
            raise ChildFailure("forged", f"a garbled reply from the {self.role}'s executor to a bound session",
                               self.running)
        self.pending = []
        try:
            reply = json.loads(self._raw(length))
        except ValueError:
            reply = None
        if isinstance(reply, dict) and reply.get("type") == "error" and reply.get("seq") == self.seq:
            kind = reply.get("kind") if reply.get("kind") in ("load", "call") else "harness"
            raise ChildFailure(kind, str(reply.get("message")), self.running)
        self.kill()
        raise ChildFailure("forged", f"a reply from the {self.role}'s executor that does not start a bound session "
                                     f"({str(reply)[:120]})", self.running)

    def _raw(self, n, timeout=None):
        """n bytes from the socket, within the call timeout (and the evaluation's limit)."""
        timeout = timeout or self.call_timeout
        wait = timeout if self.deadline is None else max(0.0, min(timeout, self.deadline - time.monotonic()))
        end, data = time.monotonic() + wait, b""
        while len(data) < n:
            # Where the filter's refusals come to the parent (a seccomp listener, `listener`), a call it
            # stopped is decided while the session waits, as _reply does.
            listener = self.listener
            watched = [self.sock] + ([listener.fd] if listener is not None else [])
            ready = select.select(watched, [], [], max(0.0, end - time.monotonic()))[0]
            if listener is not None and listener.fd in ready:
                self._notified()
                continue
            if not ready:
                who = self.running
                self.kill()
                if self.deadline is not None and time.monotonic() >= self.deadline:
                    raise ChildFailure("timeout", "the evaluation's time limit was reached during this scenario"
                                       + (f" (while running {who})" if who else "") + "; the process was killed",
                                       who)
                raise ChildFailure("timeout", f"no progress for {timeout:.0f} s"
                                   + (f" while running {who}" if who else "") + "; the process was killed", who)
            try:
                got = self.sock.recv(n - len(data))
            except OSError:
                got = b""
            if not got:
                raise self._died()
            data += got
        return data

    def ready(self, timeout=STARTUP_SECONDS):
        """Wait until the executor answers (before any candidate code is loaded) and find its pid as
        this process sees it: inside bwrap's PID namespace it is a grandchild of bwrap."""
        self.request({"cmd": "unmap", "id": -1}, timeout=timeout)
        if self.sandboxed:
            found = [p for p in _subtree(self.proc.pid) if "harness.executor" in _cmdline(p) and not _is_bwrap(p)]
            if len(found) != 1:
                raise ChildFailure("harness", f"cannot find the executor inside its sandbox (found {found})")
            _LIVE.add(found[0])
            self.pid = found[0]
        self.clock = cpu_clock(self.pid)

    def start(self, init, timeout=STARTUP_SECONDS, later=False):
        """Send init (load the library, install the filter). ready() first. `later`: its reply is
        collected with the next request's (send())."""
        msg = dict(init, cmd="init", seccomp=self.confine)
        if self.confine:
            self._listener_seq = self.seq + 1    # this request's (request() and send() number it so)
        if later:
            return self.send(msg)
        return self.request(msg, timeout=timeout)

    # -- watching ---------------------------------------------------------------------------------
    def cpu_ns(self):
        try:
            return time.clock_gettime_ns(self.clock)
        except OSError:
            raise self._died() from None

    def other_threads_cpu_ns(self):
        """CPU time of every thread but the main one, the exited ones included: the process's CPU
        clock counts them all, the main thread's schedstat only itself."""
        try:
            main = int(Path(f"/proc/{self.pid}/task/{self.pid}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return 0
        return max(0, self.cpu_ns() - main)

    def threads(self):
        try:
            return set(os.listdir(f"/proc/{self.pid}/task"))
        except OSError:
            return set()

    def _maps_raw(self):
        try:
            with open(f"/proc/{self.pid}/maps", "rb") as fh:
                return fh.read()
        except OSError:
            return None

    def libraries(self):
        """The shared objects the process maps (/proc/PID/maps), parsed again only when the maps changed
        (a CUDA executor's run to thousands of lines: 0.8 ms a parse, twice every correctness call)."""
        raw = self._maps_raw()
        if raw is None:
            return set()
        if self._maps is not None and self._maps[0] == raw:
            return set(self._maps[1])
        libs = set()
        for line in raw.decode("utf-8", "replace").splitlines():
            parts = line.split(None, 5)
            if len(parts) == 6 and ".so" in parts[5].rsplit("/", 1)[-1]:
                libs.add(parts[5].strip())
        self._maps = (raw, libs)
        return set(libs)

    def exposure(self):
        """What in the executor could carry a way past the filter into the candidate's calls (issue 39),
        as this process reads it from /proc: memory both writable and executable, anonymous
        executable memory (/proc/PID/maps), and every descriptor with what it names (/proc/PID/fd)
        and, for files and devices, whether it is open for writing (fdinfo). {"wx": set of regions,
        "anon_x": set of regions, "fds": {fd: (target, writable)}}."""
        raw = self._maps_raw() or b""
        if self._exec_maps is None or self._exec_maps[0] != raw:     # parsed again only when they changed
            wx, anon_x = set(), set()
            for line in raw.decode("utf-8", "replace").splitlines():
                parts = line.split(None, 5)
                if len(parts) < 5 or "x" not in parts[1]:
                    continue
                path = parts[5].strip() if len(parts) == 6 else ""
                region = f"{parts[0]} {parts[1]} {path or '(anonymous)'}"
                if "w" in parts[1]:
                    wx.add(region)
                if _anonymous(path):
                    anon_x.add(region)
            self._exec_maps = (raw, wx, anon_x)
        out = {"wx": set(self._exec_maps[1]), "anon_x": set(self._exec_maps[2]), "fds": {}}
        base = f"/proc/{self.pid}/fd"
        try:
            entries = os.listdir(base)
        except OSError:
            return out
        for name in entries:
            try:
                target = os.readlink(f"{base}/{name}")
            except OSError:
                continue       # closed meanwhile
            out["fds"][int(name)] = (target, None)
        return out

    def fd_writable(self, fd):
        """Whether descriptor `fd` of the executor is open for writing (its fdinfo's flags)."""
        try:
            for line in Path(f"/proc/{self.pid}/fdinfo/{fd}").read_text().splitlines():
                if line.startswith("flags:"):
                    return int(line.split()[1], 8) & 3 != 0     # O_WRONLY or O_RDWR
        except (OSError, ValueError, IndexError):
            pass
        return None

    def status_fields(self):
        """Caught signals (SigCgt, a hex mask) and the number of POSIX timers the process holds."""
        out = {"SigCgt": None, "timers": 0}
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("SigCgt:"):
                    out["SigCgt"] = int(line.split()[1], 16)
            out["timers"] = Path(f"/proc/{self.pid}/timers").read_text().count("ID:")
        except (OSError, ValueError):
            pass
        return out

    def descendants(self):
        """Processes the executor started: in a sandbox, everything in it but bwrap and the executor;
        otherwise its children and the orphans re-parented to this process (setsid, double fork)
        other than the executors themselves."""
        if self.sandboxed:
            return [p for p in _subtree(self.proc.pid) if p != self.pid and not _is_bwrap(p)]
        me, found = os.getpid(), []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == self.pid:
                continue
            fields = _stat_fields(entry)
            if not fields:
                continue
            ppid = int(fields[1])
            if fields[0] in (b"Z", b"X"):     # a zombie runs nothing; reap it if it is ours
                if ppid == me:
                    _reap(int(entry))
                continue
            if ppid == self.pid or (ppid == me and int(entry) not in _live_executors()
                                    and int(entry) not in self.preexisting):
                found.append(int(entry))
        return found

    # -- ending -----------------------------------------------------------------------------------
    def _died(self):
        who = self.running
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        tail = self.log_tail()
        if self.sandboxed and code is not None and code > 128:
            code = -(code - 128)    # bwrap passes a signal on as 128 + its number
        if code == -signal.SIGSYS and self.confine:
            if self.notifying:
                # Every other refusal waits on the listener: a kill is the filter's second step.
                name, nr, rule = seccomp.AFTER_LOAD_KILL
                return ChildFailure("seccomp", self._refusal(nr, name, rule, who), who)
            return ChildFailure("seccomp", f"the {self.role}'s executor was killed by its seccomp filter (SIGSYS)"
                                           + (f" while running {who}" if who else "") + ": it made a system "
                                           "call that code under evaluation may not make (creating or changing "
                                           "files, sockets, new processes, exec, ptrace, executable memory, "
                                           "signal handlers, timers); this kernel gave the harness no seccomp "
                                           "listener, so the call is not named", who)
        what = procinfo.exit_text(code)
        return ChildFailure("crash", f"the process {what}" + (f" while running {who}" if who else "")
                            + (f"; its output ends with:\n{tail}" if tail else ""), who)

    def log_tail(self, limit=2000):
        return procinfo.log_tail(self.log, self.log_path, limit)

    def kill(self):
        for pid in self.descendants() + ([self.pid] if self.pid != self.proc.pid else []):
            _kill(pid)
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass

    def close(self):
        self.kill()
        if self.listener is not None:
            self.listener.close()
            self.listener = None
        _LIVE.discard(self.pid)
        _LIVE.discard(self.proc.pid)
        try:
            self.sock.close()
        except OSError:
            pass
        self.log.close()


_LIVE = set()

# Executable mappings that are not a file's: the vdso and vsyscall pages are the kernel's own.
_KERNEL_PAGES = ("[vdso]", "[vsyscall]", "[uprobes]")


def _anonymous(path):
    """Whether an executable region with this /proc/PID/maps path is memory of no file's (anonymous,
    the heap or a stack, a shared anonymous mapping, which shows as /dev/zero, an anonymous file other
    than the executor's copies of its library, process.py's memfds named "<library>.copy<k>")."""
    if not path:
        return True
    if path.startswith("["):
        return path not in _KERNEL_PAGES
    if path.startswith("/memfd:"):
        return re.search(r"\.copy\d+ \(deleted\)$", path) is None
    return path.startswith("/dev/zero")


def _stat_fields(pid):
    """The fields of /proc/<pid>/stat after the command name (state, ppid, ...), or None when gone.
    Read with os.open/os.read: a scan reads every process's, on every watched call."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.rsplit(b")", 1)[-1].split()


def _parents():
    """{pid: ppid} of the live (not zombie) processes."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(entry)
            if fields and fields[0] not in (b"Z", b"X"):
                out[int(entry)] = int(fields[1])
    return out


def _reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _children(pid):
    """The live children of `pid` from /proc/<pid>/task/*/children, or None when the kernel has no
    such file (CONFIG_PROC_CHILDREN); [] when `pid` is gone."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids = set()
    for tid in tasks:
        try:
            fd = os.open(f"/proc/{pid}/task/{tid}/children", os.O_RDONLY)
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue       # the thread exited meanwhile
            return None
        except OSError:
            continue
        try:
            kids.update(int(c) for c in os.read(fd, 1 << 16).split())
        finally:
            os.close(fd)
    live = []
    for c in sorted(kids):
        fields = _stat_fields(c)
        if fields and fields[0] not in (b"Z", b"X"):
            live.append(c)
    return live


def _subtree(root):
    """Every live descendant of `root`: from each process's children files (a few reads, where a
    scan of /proc read every process's stat: 3.2 ms a watched call on the GPU host), else the scan."""
    found, todo = [], [root]
    while todo:
        p = todo.pop()
        kids = _children(p)
        if kids is None:
            return _subtree_by_scan(root)
        found += kids
        todo += kids
    return found


def _subtree_by_scan(root):
    parents, found, todo = _parents(), [], [root]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        found += kids
        todo += kids
    return found


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _is_bwrap(pid):
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "bwrap"
    except OSError:
        return False


def _children_of(pid):
    """The live processes whose parent is `pid`."""
    return [p for p, pp in _parents().items() if pp == pid]


def _live_executors():
    return _LIVE


def _kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        return
    try:
        os.waitpid(pid, 0)   # ours once re-parented: reap it
    except ChildProcessError:
        pass
