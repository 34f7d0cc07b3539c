"""The executor's protocol: frames over its Unix socket, each a 4-byte big-endian length and a JSON
object, with file descriptors (memfds, the GPU arena) passed beside a frame. No pickle: the executor
runs the candidate's code, so what it sends is data to be checked, never objects to be rebuilt.

Both sides use it: the executor (harness/executor/process.py, inside the sandbox: standard library
only) and the parent's handle (harness/executor/handle.py), which reads replies with a smaller limit.
"""

import json
import socket
import struct

MAX_FRAME = 1 << 20


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
