"""flash_attn_fwd's reference (kernels/flash_attn_fwd/reference.py) against attention computed densely
in float64: the chunking over heads and query rows, GQA's head mapping and the top-left causal mask
must not change what it computes (every kernel's correctness is judged against it)."""

import itertools
import math

import pytest
import torch

from harness.task.model import load_reference, load_task

from .conftest import REPO

REF = load_reference(load_task(REPO / "kernels" / "flash_attn_fwd"))


def _dense(q, k, v, causal):
    B, H, Sq, D = q.shape
    group = H // k.shape[1]
    k = k.double().repeat_interleave(group, dim=1)
    v = v.double().repeat_interleave(group, dim=1)
    s = q.double() @ k.transpose(-1, -2) / math.sqrt(D)
    if causal:
        i = torch.arange(Sq)[:, None]
        j = torch.arange(k.shape[2])[None, :]
        s = s.masked_fill(j > i, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


@pytest.mark.parametrize("B,H,Hkv,Sq,Sk,D,causal", [
    (2, 4, 4, 37, 53, 16, 0), (1, 6, 2, 64, 40, 32, 1), (2, 4, 1, 45, 45, 16, 1), (1, 2, 2, 1, 70, 8, 0)])
def test_the_chunked_reference_is_dense_attention(monkeypatch, B, H, Hkv, Sq, Sk, D, causal):
    sc = {"B": B, "H": H, "Hkv": Hkv, "Sq": Sq, "Sk": Sk, "D": D, "causal": causal}
    inputs = REF.make_inputs(sc, 7, "cpu")
    want = _dense(inputs["q"], inputs["k"], inputs["v"], causal)
    # one chunk; several row chunks; one row at a time; each with causal rows split as large
    # scenarios split them (keys past a chunk's last row never read) and not
    for chunk, split_min in itertools.product((1 << 28, 3 * Sk, Sk), (1, 1 << 40)):
        monkeypatch.setattr(REF, "_CHUNK_ELEMS", chunk)
        monkeypatch.setattr(REF, "_CAUSAL_SPLIT_MIN", split_min)
        got = REF.reference(dict(inputs), sc)["o"]
        assert got.dtype == torch.float32 and got.shape == want.shape
        assert float((got.double() - want).abs().max()) < 1e-5, (chunk, split_min)
        low = REF.lowp(dict(inputs), sc)["o"]
        assert float((low.double() - want).abs().max()) < 0.05    # bf16 throughout: close, not exact
