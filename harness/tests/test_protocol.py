"""The parent-child channel: blobs through the pipe and, when large, through shared memory."""

import json
import os
import struct
import tempfile

import pytest
import torch

from harness import protocol
from harness.protocol import Channel


def _pair(sender_body, shm, peer_known=True):
    """Forks a sender that runs `sender_body(channel)`; returns what the receiver gets (obj, tensors)
    or raises what recv raised. The sender waits for one message before it exits, as the child
    waits for the parent's next command."""
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(a_r)
            os.close(b_w)
            ch = Channel(b_r, a_w)
            ch.shm_ok = shm
            sender_body(ch)
            ch.recv()
        except BaseException:
            code = 1
        os._exit(code)
    os.close(a_w)
    os.close(b_r)
    ch = Channel(a_r, b_w, peer_pid=pid if peer_known else None)
    try:
        return ch.recv(deadline=None)
    finally:
        ch.send({"type": "done"})
        os.waitpid(pid, 0)
        os.close(a_r)
        os.close(b_w)


BIG = protocol.SHM_MIN_BYTES // 2 + 7     # bf16 elements: just over the shared-memory threshold


@pytest.mark.parametrize("shm", [True, False])
def test_blobs_arrive_intact_by_either_path(shm, monkeypatch):
    via_shm = []
    real = Channel._read_memfd

    def spy(self, blob, nbytes):
        via_shm.append(blob["name"])
        return real(self, blob, nbytes)
    monkeypatch.setattr(Channel, "_read_memfd", spy)
    big = torch.randn(BIG).to(torch.bfloat16)
    small = torch.arange(12, dtype=torch.float32).reshape(3, 4)

    def body(ch):
        ch.send({"type": "result", "n": 1}, {"big": big.reshape(-1, 1), "small": small})

    obj, tensors = _pair(body, shm)
    assert obj == {"type": "result", "n": 1}
    assert torch.equal(tensors["big"].reshape(-1), big) and tensors["big"].shape == (BIG, 1)
    assert tensors["big"].dtype == torch.bfloat16
    assert torch.equal(tensors["small"], small)
    assert via_shm == (["big"] if shm else [])   # only the large blob, and only when allowed


def _forged(blob):
    """A sender that writes a header by hand, naming whatever fd it likes."""
    def body(ch):
        data = json.dumps({"type": "result", "blobs": [blob]}).encode()
        ch._write(struct.pack(">I", len(data)) + data)
    return body


def test_a_blob_that_points_at_a_regular_file_is_refused():
    with tempfile.TemporaryFile() as f:
        f.write(b"\0" * 64)
        f.flush()
        blob = {"name": "y", "dtype": "uint8", "shape": [64], "nbytes": 64, "fd": f.fileno()}
        with pytest.raises(ValueError, match="is not a memfd of 64 bytes"):
            _pair(_forged(blob), shm=True)


def test_a_shared_memory_blob_is_refused_where_the_sender_is_unknown():
    blob = {"name": "y", "dtype": "uint8", "shape": [64], "nbytes": 64, "fd": 0}
    with pytest.raises(ValueError, match="a shared-memory blob is not accepted here"):
        _pair(_forged(blob), shm=True, peer_known=False)


def test_a_shared_memory_blob_of_the_wrong_size_is_refused():
    def body(ch):
        fd = os.memfd_create("x")
        os.ftruncate(fd, 32)
        ch._held.append(fd)
        _forged({"name": "y", "dtype": "uint8", "shape": [64], "nbytes": 64, "fd": fd})(ch)
    with pytest.raises(ValueError, match="is not a memfd of 64 bytes"):
        _pair(body, shm=True)
