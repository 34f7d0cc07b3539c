"""The parent-child channel: blobs through the pipe and, when large, through shared memory.

The sender is a fresh interpreter, as the harness's child is: a forked copy of a process that has
used torch's thread pool can deadlock in its first parallel copy (it did, on the GPU host).
"""

import os
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from harness import protocol
from harness.protocol import Channel

from .conftest import REPO

BIG = protocol.SHM_MIN_BYTES // 2 + 7     # bf16 elements: just over the shared-memory threshold

SENDER = """
import json, os, struct, sys, tempfile
import torch
from harness.protocol import Channel
ch = Channel(int(sys.argv[1]), int(sys.argv[2]))
ch.shm_ok = sys.argv[3] == "1"
BIG = int(sys.argv[4])
def forged(blob):
    data = json.dumps({"type": "result", "blobs": [blob]}).encode()
    ch._write(struct.pack(">I", len(data)) + data)
"""


def _expected_big():
    return (torch.arange(BIG) % 251 - 125).to(torch.bfloat16)


def _exchange(body, shm=True, peer_known=True):
    """Runs SENDER + body in a new process; returns what this side receives (obj, tensors) or
    raises what recv raised. The sender then waits for one message before it exits, as the child
    waits for the parent's next command."""
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    script = SENDER + textwrap.dedent(body) + "\nch.recv()\n"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", script, str(b_r), str(a_w), "1" if shm else "0", str(BIG)],
                            pass_fds=(b_r, a_w), env=env, stderr=subprocess.PIPE)
    os.close(a_w)
    os.close(b_r)
    ch = Channel(a_r, b_w, peer_pid=proc.pid if peer_known else None)
    try:
        return ch.recv(deadline=time.monotonic() + 60)
    finally:
        try:
            ch.send({"type": "done"})
        except OSError:
            pass
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode(errors="replace")
        os.close(a_r)
        os.close(b_w)


@pytest.mark.parametrize("shm", [True, False])
def test_blobs_arrive_intact_by_either_path(shm, monkeypatch):
    via_shm = []
    real = Channel._read_memfd

    def spy(self, blob, nbytes):
        via_shm.append(blob["name"])
        return real(self, blob, nbytes)
    monkeypatch.setattr(Channel, "_read_memfd", spy)
    obj, tensors = _exchange("""
        big = (torch.arange(BIG) % 251 - 125).to(torch.bfloat16)
        small = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        ch.send({"type": "result", "n": 1}, {"big": big.reshape(-1, 1), "small": small})
    """, shm=shm)
    assert obj == {"type": "result", "n": 1}
    assert tensors["big"].shape == (BIG, 1) and tensors["big"].dtype == torch.bfloat16
    assert torch.equal(tensors["big"].reshape(-1), _expected_big())
    assert torch.equal(tensors["small"], torch.arange(12, dtype=torch.float32).reshape(3, 4))
    assert via_shm == (["big"] if shm else [])   # only the large blob, and only when allowed


def test_a_blob_that_points_at_a_regular_file_is_refused():
    with pytest.raises(ValueError, match="is not a memfd of 64 bytes"):
        _exchange("""
            f = tempfile.TemporaryFile()
            f.write(b"\\0" * 64)
            f.flush()
            forged({"name": "y", "dtype": "uint8", "shape": [64], "nbytes": 64, "fd": f.fileno()})
        """)


def test_a_shared_memory_blob_is_refused_where_the_sender_is_unknown():
    with pytest.raises(ValueError, match="a shared-memory blob is not accepted here"):
        _exchange("""
            forged({"name": "y", "dtype": "uint8", "shape": [64], "nbytes": 64, "fd": 0})
        """, peer_known=False)


def test_a_shared_memory_blob_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError, match="is not a memfd of 64 bytes"):
        _exchange("""
            fd = os.memfd_create("x")
            os.ftruncate(fd, 32)
            forged({"name": "y", "dtype": "uint8", "shape": [64], "nbytes": 64, "fd": fd})
        """)
