"""The executor: the process a candidate's (or the baseline's) library runs in. It decides nothing.

Threat model (docs/harness.md): whatever loads here is arbitrary native code with full control of
this process. So this process holds nothing whose integrity matters: the parent owns the inputs'
pristine copies, the reference, the clock that counts, the bookkeeping and the verdict. The
executor only loads one library, maps the shared buffers the parent hands it (memfds passed over the
socket) and, on request, calls the entry point on them and says "done". Whatever it says is checked
by the parent: a forged or garbled reply is a rejection, an early "done" shows up as CPU time after
the answer or outputs changing later, outputs are read from the parent's own mapping.

Kept free of torch (unless the executor also runs the task's peers) and of the rest of the harness,
so that the process a candidate shares is small: Python, ctypes, this file and seccomp.py.

Run as: python -m harness.executor <socket fd>
"""

import ctypes
import gc
import json
import mmap
import os
import socket
import struct
import sys
import traceback

MAX_FRAME = 1 << 20
_CTYPES = {"int32": ctypes.c_int32, "int64": ctypes.c_int64, "float32": ctypes.c_float,
           "pointer": ctypes.c_void_p}


def send_frame(sock, obj, fds=None):
    data = json.dumps(obj, separators=(",", ":")).encode()
    frame = struct.pack(">I", len(data)) + data
    if fds:
        socket.send_fds(sock, [frame], list(fds))
    else:
        sock.sendall(frame)


def _recv_exact(sock, n, fds):
    buf = bytearray()
    while len(buf) < n:
        if fds is not None:
            chunk, got, _, _ = socket.recv_fds(sock, n - len(buf), 4)
            fds.extend(got)
        else:
            chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("the other side closed the socket")
        buf += chunk
    return bytes(buf)


def recv_frame(sock, fds=None, limit=MAX_FRAME):
    """One frame: 4-byte big-endian length, JSON. `fds` (a list) collects passed descriptors."""
    (length,) = struct.unpack(">I", _recv_exact(sock, 4, fds))
    if length > limit:
        raise ValueError(f"frame of {length} bytes exceeds {limit}")
    return json.loads(_recv_exact(sock, length, fds))


class LoadFailed(Exception):
    """The library does not load (e.g. an undefined symbol): a link-level failure."""


class Executor:
    def __init__(self, sock):
        self.sock = sock
        self.fn = None
        self.buffers = {}     # id -> (mmap, base address)
        self.peers = {}
        self.torch = None

    def cmd_init(self, msg, _fds):
        if msg.get("peers"):
            # The peers are PyTorch code: torch is imported before the filter (it maps code).
            import importlib.util
            import torch
            self.torch = torch
            torch.set_num_threads(int(msg.get("threads", 1)))
            spec = importlib.util.spec_from_file_location("kernelseek_reference", msg["reference"])
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self.peers = {name: getattr(module, fn) for name, fn in msg["peers"].items()}
            self.unsupported = getattr(module, "Unsupported", ())
        if msg.get("library"):
            try:
                lib = ctypes.CDLL(msg["library"], mode=os.RTLD_NOW | os.RTLD_LOCAL)
            except OSError as exc:
                raise LoadFailed(f"the library does not load: {exc}") from None
            self.fn = getattr(lib, msg["entry"])
            self.fn.restype = ctypes.c_int
            self.fn.argtypes = [_CTYPES[k] for k in msg["argtypes"]]
        # No garbage collection inside a timed request: a collection walks every tracked object, and
        # the reference executor (torch imported) has many times the candidate's, so a collection
        # triggered by a request's own allocations would bill identical code differently.
        gc.collect()
        gc.freeze()
        gc.disable()
        confined = False
        if msg.get("seccomp"):
            from . import seccomp
            seccomp.install(threads=bool(msg.get("threads_allowed", True)))
            confined = True
        return {"pid": os.getpid(), "seccomp": confined}

    def cmd_map(self, msg, fds):
        if len(fds) != 1:
            raise ValueError(f"map needs exactly one descriptor, got {len(fds)}")
        m = mmap.mmap(fds[0], int(msg["size"]), mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        os.close(fds[0])
        base = ctypes.addressof(ctypes.c_char.from_buffer(m))
        self.buffers[int(msg["id"])] = (m, base)
        return {}

    def cmd_unmap(self, msg, _fds):
        self.buffers.pop(int(msg["id"]), None)   # the mmap closes when its last view goes
        return {}

    def _argv(self, args):
        argv = []
        for a in args:
            if isinstance(a, dict):
                argv.append(self.buffers[int(a["buf"])][1] + int(a["off"]))
            else:
                argv.append(a)
        return argv

    def cmd_call(self, msg, _fds):
        """Call the entry point `n` times on the same buffers, or once on each argument list of
        `batch` (in order: one request amortises its own cost over many calls, each on its own
        buffers and inputs); `null` does everything but the calls, which is how the parent calibrates
        the cost of a request."""
        if msg.get("peer"):
            return self._call_peer(msg)
        batch = msg["batch"] if "batch" in msg else [msg["args"]] * int(msg.get("n", 1))
        argvs = [self._argv(args) for args in batch]
        if msg.get("null"):
            return {"rc": [0] * len(argvs)}
        fn = self.fn
        return {"rc": [int(fn(*argv)) for argv in argvs]}

    def _tensors(self, specs):
        torch, tensors = self.torch, {}
        for name, spec in specs.items():
            m, _ = self.buffers[int(spec["buf"])]
            dtype = getattr(torch, spec["dtype"])
            count = 1
            for d in spec["shape"]:
                count *= int(d)
            tensors[name] = torch.frombuffer(m, dtype=dtype, count=count,
                                             offset=int(spec["off"])).view(spec["shape"])
        return tensors

    def _call_peer(self, msg):
        batch = msg["batch"] if "batch" in msg else [msg["tensors"]] * int(msg.get("n", 1))
        calls = [self._tensors(specs) for specs in batch]
        fn = self.peers[msg["peer"]]
        try:
            for tensors in calls:
                fn(tensors, dict(msg["params"]))
        except Exception as exc:  # a peer that cannot run a scenario is left out, with the reason
            kind = "unsupported" if self.unsupported and isinstance(exc, self.unsupported) else "failed"
            text = (str(exc) or "unsupported") if kind == "unsupported" else f"{type(exc).__name__}: {exc}"
            return {"rc": [0], "peer_error": kind, "message": text}
        return {"rc": [0] * len(calls)}


def main(argv):
    sock = socket.socket(fileno=int(argv[1]))
    ex = Executor(sock)
    handlers = {"init": ex.cmd_init, "map": ex.cmd_map, "unmap": ex.cmd_unmap, "call": ex.cmd_call}
    while True:
        fds = []
        try:
            msg = recv_frame(sock, fds)
        except (EOFError, OSError):
            return 0   # the parent went away
        if msg.get("cmd") == "exit":
            return 0
        try:
            reply = handlers[msg["cmd"]](msg, fds)
            reply.update(type="done", seq=msg.get("seq"))
        except Exception as exc:
            kind = "load" if isinstance(exc, LoadFailed) else "harness"
            reply = {"type": "error", "seq": msg.get("seq"), "kind": kind,
                     "message": str(exc) if isinstance(exc, LoadFailed) else f"{type(exc).__name__}: {exc}",
                     "traceback": traceback.format_exc()[-4000:]}
        send_frame(sock, reply)


if __name__ == "__main__":
    sys.stdout.flush()
    # No interpreter shutdown: it resets signal handlers, which the seccomp filter forbids.
    os._exit(main(sys.argv))
