"""Parent side of the child process: start it, send a command, wait with a timeout, kill on a hang.

Every way the child can fail (exit, signal, hang, CUDA error, garbage on the pipe) becomes a
ChildFailure with a message that says what happened and who was running, never an exception that
escapes the evaluation.
"""

import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .sandbox import procinfo
from .sandbox.procinfo import ChildFailure, child_setup as _child_setup  # noqa: F401  (the executors' too)
from .protocol import Channel, ChannelClosed, ChannelTimeout

STARTUP_SECONDS = 120  # importing torch and initialising CUDA in a fresh process


class ChildProcess:
    def __init__(self, workdir, call_timeout, env=None):
        self.workdir = Path(workdir)
        self.call_timeout = call_timeout
        self.log_path = self.workdir / f"child-{int(time.time() * 1000)}.log"
        self.status_path = self.workdir / "child-status"
        self.status_path.write_bytes(b"\0" * 64)
        p2c_r, p2c_w = os.pipe()
        c2p_r, c2p_w = os.pipe()
        repo_root = str(Path(__file__).resolve().parent.parent)
        child_env = dict(env or os.environ)
        child_env["PYTHONPATH"] = repo_root + (os.pathsep + child_env["PYTHONPATH"]
                                               if child_env.get("PYTHONPATH") else "")
        child_env["PYTHONDONTWRITEBYTECODE"] = "1"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness.child", str(p2c_r), str(c2p_w), str(self.status_path)],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, cwd=str(self.workdir),
            env=child_env, pass_fds=(p2c_r, c2p_w), preexec_fn=functools.partial(_child_setup, os.getpid()))
        os.close(p2c_r)
        os.close(c2p_w)
        self.chan = Channel(c2p_r, p2c_w)
        self._fds = (c2p_r, p2c_w)

    def who(self):
        try:
            return self.status_path.read_bytes().split(b"\0", 1)[0].decode(errors="replace") or None
        except OSError:
            return None

    def request(self, msg, timeout=None, max_blob_bytes=None, deadline=None):
        """Send a command; return (result, tensors). Ticks from the child extend the deadline for
        progress; `deadline` (a time.monotonic() value: the evaluation's time limit) does not move."""
        timeout = timeout or self.call_timeout
        try:
            self.chan.send(msg)
        except (BrokenPipeError, OSError):
            raise self._died() from None
        while True:
            until = time.monotonic() + timeout
            try:
                obj, tensors = self.chan.recv(until if deadline is None else min(until, deadline), max_blob_bytes)
            except ChannelTimeout:
                who = self.who()
                self.kill()
                if deadline is not None and time.monotonic() >= deadline:
                    raise ChildFailure("timeout", "the evaluation's time limit was reached during this scenario"
                                       + (f" (while running {who})" if who else "")
                                       + "; the process was killed", who) from None
                raise ChildFailure("timeout", f"no progress for {timeout:.0f} s"
                                   + (f" while running {who}" if who else "")
                                   + "; the process was killed", who) from None
            except ChannelClosed:
                raise self._died() from None
            except (ValueError, KeyError) as exc:
                self.kill()
                raise ChildFailure("crash", f"garbled message from the child process: {exc}") from None
            kind = obj.get("type")
            if kind == "tick":
                continue
            if kind == "error":
                who = self.who()
                if obj.get("fatal"):
                    self.kill()
                raise ChildFailure(obj.get("kind", "harness"), obj.get("message", "unknown error")
                                   + ("\n" + obj["traceback"] if obj.get("traceback") else ""), who)
            return obj, tensors

    def _died(self):
        who = self.who()
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        what = procinfo.exit_text(code)
        tail = self.log_tail()
        return ChildFailure("crash", f"the process {what}" + (f" while running {who}" if who else "")
                            + (f"; its output ends with:\n{tail}" if tail else ""), who)

    def log_tail(self, limit=2000):
        return procinfo.log_tail(self.log, self.log_path, limit)

    def kill(self):
        """Kill the child and anything it started (it leads its own process group)."""
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
        """End the child. It holds nothing worth a clean shutdown (tearing down torch takes longer
        than the evaluation of a small scenario), so it is killed with its process group."""
        self.kill()
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()
