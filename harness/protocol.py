"""Messages between the trusted parent and the child that hosts the candidate.

A frame is a 4-byte big-endian length and a JSON object; a frame may be followed by raw tensor bytes
described in its "blobs" list. No pickle: the child runs the candidate's code, so anything it sends
is data to be checked, never objects to be rebuilt. The pipes are private file descriptors, not
stdout, so a candidate that prints cannot corrupt the stream.
"""

import json
import mmap
import os
import select
import struct
import time

import torch

MAX_HEADER = 16 << 20
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "int32": torch.int32, "int64": torch.int64, "float64": torch.float64, "uint8": torch.uint8}
_ELEMENT_SIZE = {name: torch.empty((), dtype=d).element_size() for name, d in DTYPES.items()}
_SAME_SIZE_INT = {2: torch.int16, 4: torch.int32, 8: torch.int64, 1: torch.uint8}


class ChannelClosed(Exception):
    """The other side closed its end (in the parent: the child exited)."""


class ChannelTimeout(Exception):
    """Nothing arrived before the deadline."""


def element_size(dtype_text):
    return _ELEMENT_SIZE[dtype_text]


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def tensor_bytes(t):
    """Raw bytes of a tensor (copied to the host), as a buffer numpy can expose without pickling."""
    t = t.detach().to("cpu").contiguous()
    as_int = t.view(_SAME_SIZE_INT[t.element_size()]) if t.dtype == torch.bfloat16 else t
    return memoryview(as_int.numpy()).cast("B")


def tensor_from_bytes(buf, dtype_text, shape):
    dtype = DTYPES[dtype_text]
    if len(buf) == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(buf, dtype=dtype).reshape(shape)


# Blobs of this size or more travel in shared memory (a memfd the receiver reads through
# /proc/<pid>/fd) instead of through the pipe: one copy each way instead of pipe-sized pieces.
SHM_MIN_BYTES = 256 << 10
_HAVE_MEMFD = hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")


class Channel:
    def __init__(self, rfd, wfd, peer_pid=None):
        """`peer_pid`: the process at the other end, whose shared-memory blobs this side may read
        (the parent knows its child's; a side that does not know it accepts only piped blobs)."""
        self.rfd, self.wfd = rfd, wfd
        self.peer_pid = peer_pid
        self.shm_ok = False   # may large blobs be sent in shared memory (the peer said it can read them)
        self._held = []   # memfds of the last message sent: kept open until the peer has read them
        # Reads try first and wait only when the pipe is empty: a blob of gigabytes arrives in pipe-
        # sized pieces, and a select() before every piece cost more than the copying (rmsnorm, H200).
        os.set_blocking(rfd, False)

    # -- sending ---------------------------------------------------------------------------------
    def send(self, obj, blobs=None):
        """Send a JSON object; `blobs` maps a name to a tensor sent as raw bytes after the header,
        or, when large, in a memfd named in the header."""
        views = []
        if blobs:
            obj = dict(obj, blobs=[])
            for name, t in blobs.items():
                desc = {"name": name, "dtype": dtype_name(t.dtype), "shape": list(t.shape),
                        "nbytes": t.numel() * t.element_size()}
                fd = self._to_memfd(t, desc["nbytes"]) if desc["nbytes"] >= SHM_MIN_BYTES else None
                if fd is None:
                    view = tensor_bytes(t)
                    views.append(view)
                else:
                    desc["fd"] = fd
                obj["blobs"].append(desc)
        data = json.dumps(obj).encode()
        self._write(struct.pack(">I", len(data)) + data)
        for view in views:
            self._write(view)

    def _to_memfd(self, t, nbytes):
        """Copies the tensor (on any device) straight into a new memfd; None where there is none."""
        if not (self.shm_ok and _HAVE_MEMFD):
            return None
        try:
            fd = os.memfd_create("kernelseek-blob", os.MFD_CLOEXEC)
        except OSError:
            return None
        try:
            os.ftruncate(fd, nbytes)
            with mmap.mmap(fd, nbytes) as mm:
                dst = torch.frombuffer(mm, dtype=t.dtype, count=t.numel())
                dst.copy_(t.detach().reshape(-1))
                del dst   # the mapping closes only when no tensor views it
        except BaseException:
            os.close(fd)
            raise
        self._held.append(fd)
        return fd

    def _release_held(self):
        for fd in self._held:
            os.close(fd)
        self._held = []

    def _write(self, data):
        view = memoryview(data)
        while view.nbytes:
            n = os.write(self.wfd, view)
            view = view[n:]

    # -- receiving -------------------------------------------------------------------------------
    def recv(self, deadline=None, max_blob_bytes=None):
        """Receive one message; returns (obj, {name: tensor}). `deadline` is a time.monotonic() value."""
        (length,) = struct.unpack(">I", bytes(self._read(4, deadline)))
        # A message from the peer means it has read everything this side sent before.
        self._release_held()
        if length > MAX_HEADER:
            raise ValueError(f"message header of {length} bytes is too large")
        obj = json.loads(bytes(self._read(length, deadline)))
        tensors = {}
        for blob in obj.pop("blobs", []) if isinstance(obj, dict) else []:
            nbytes, dtype, shape = int(blob["nbytes"]), blob["dtype"], [int(s) for s in blob["shape"]]
            if dtype not in DTYPES:
                raise ValueError(f"unknown dtype {dtype!r} in message")
            numel = 1
            for s in shape:
                numel *= s
            if nbytes != numel * _ELEMENT_SIZE[dtype]:
                raise ValueError(f"blob {blob['name']!r}: {nbytes} bytes do not match {dtype}{shape}")
            if max_blob_bytes is not None and nbytes > max_blob_bytes:
                raise ValueError(f"blob {blob['name']!r} of {nbytes} bytes exceeds {max_blob_bytes}")
            data = self._read_memfd(blob, nbytes) if "fd" in blob else self._read(nbytes, deadline)
            tensors[blob["name"]] = tensor_from_bytes(data, dtype, shape)
        return obj, tensors

    def _read_memfd(self, blob, nbytes):
        """Reads a blob the peer left in a memfd; anything but a memfd of exactly that size is refused."""
        fd = blob["fd"]
        if self.peer_pid is None or not isinstance(fd, int) or isinstance(fd, bool) or fd < 0:
            raise ValueError(f"blob {blob['name']!r}: a shared-memory blob is not accepted here")
        path = f"/proc/{self.peer_pid}/fd/{fd}"
        try:
            target = os.readlink(path)
            src = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise ValueError(f"blob {blob['name']!r}: its shared memory cannot be opened: {exc}") from None
        try:
            if not target.startswith("/memfd:") or os.fstat(src).st_size != nbytes:
                raise ValueError(f"blob {blob['name']!r}: fd {fd} is not a memfd of {nbytes} bytes ({target})")
            buf = bytearray(nbytes)
            view, got = memoryview(buf), 0
            while got < nbytes:
                k = os.preadv(src, [view[got:]], got)
                if k == 0:
                    raise ValueError(f"blob {blob['name']!r}: its shared memory ended after {got} bytes")
                got += k
            return buf
        finally:
            os.close(src)

    def _read(self, n, deadline):
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            try:
                k = os.readv(self.rfd, [view[got:]])
            except BlockingIOError:
                self._wait_readable(deadline)
                continue
            if k == 0:
                raise ChannelClosed()
            got += k
        return buf

    def _wait_readable(self, deadline):
        if deadline is None:
            select.select([self.rfd], [], [])
            return
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
            raise ChannelTimeout()
