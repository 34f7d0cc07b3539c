"""Messages between the trusted parent and the child that hosts the candidate.

A frame is a 4-byte big-endian length and a JSON object; a frame may be followed by raw tensor bytes
described in its "blobs" list. No pickle: the child runs the candidate's code, so anything it sends
is data to be checked, never objects to be rebuilt. The pipes are private file descriptors, not
stdout, so a candidate that prints cannot corrupt the stream.
"""

import json
import os
import select
import struct
import time

import torch

from .task.dtypes import DTYPES, element_size  # noqa: F401  (the child's too)

MAX_HEADER = 16 << 20
_SAME_SIZE_INT = {2: torch.int16, 4: torch.int32, 8: torch.int64, 1: torch.uint8}


class ChannelClosed(Exception):
    """The other side closed its end (in the parent: the child exited)."""


class ChannelTimeout(Exception):
    """Nothing arrived before the deadline."""


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


class Channel:
    def __init__(self, rfd, wfd):
        self.rfd, self.wfd = rfd, wfd

    # -- sending ---------------------------------------------------------------------------------
    def send(self, obj, blobs=None):
        """Send a JSON object; `blobs` maps a name to a tensor sent as raw bytes after the header."""
        views = []
        if blobs:
            obj = dict(obj, blobs=[])
            for name, t in blobs.items():
                view = tensor_bytes(t)
                obj["blobs"].append({"name": name, "dtype": dtype_name(t.dtype), "shape": list(t.shape),
                                     "nbytes": view.nbytes})
                views.append(view)
        data = json.dumps(obj).encode()
        self._write(struct.pack(">I", len(data)) + data)
        for view in views:
            self._write(view)

    def _write(self, data):
        view = memoryview(data)
        while view.nbytes:
            n = os.write(self.wfd, view)
            view = view[n:]

    # -- receiving -------------------------------------------------------------------------------
    def recv(self, deadline=None, max_blob_bytes=None):
        """Receive one message; returns (obj, {name: tensor}). `deadline` is a time.monotonic() value."""
        (length,) = struct.unpack(">I", bytes(self._read(4, deadline)))
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
            tensors[blob["name"]] = tensor_from_bytes(self._read(nbytes, deadline), dtype, shape)
        return obj, tensors

    def _read(self, n, deadline):
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
                    raise ChannelTimeout()
            k = os.readv(self.rfd, [view[got:]])
            if k == 0:
                raise ChannelClosed()
            got += k
        return buf
