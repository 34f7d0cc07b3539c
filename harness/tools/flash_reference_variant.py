"""Candidate replacements for kernels/flash_attn_fwd/reference.py's fp32 reference, timed against it
by harness/tools/reference_cost.py (--variant harness.tools.flash_reference_variant:NAME):

- `reference`: the softmax scale applied inside the first matmul (baddbmm's alpha: one pass over the
  fp32 scores fewer), and causal rows taken in chunks that read only the keys they can see (top-left:
  key j visible to query i iff j <= i), so a causal 16k x 16k scenario computes about 56 % of the
  scores. The same fp32 (SIMT) matmuls.
- `reference_tc`: the same, with the matmuls on the tensor cores and fp32 out (torch >= 2.8's
  `out_dtype`): q and k are bf16, so q @ k^T's products are exact and only the accumulation differs
  from fp32's; P (fp32) is split into a bf16 head and a bf16 remainder (P = hi + lo to about 2^-17
  relative), each multiplied by v (bf16, exact) with fp32 out. Falls back to `reference` where
  `out_dtype` is missing.
"""

import math

import torch


def _dims(sc):
    return (int(sc["B"]), int(sc["H"]), int(sc["Hkv"]), int(sc["Sq"]), int(sc["Sk"]), int(sc["D"]),
            bool(int(sc["causal"])))


_CHUNK_ELEMS = 1 << 28
_CAUSAL_SPLIT = 8      # causal: at least this many row chunks, each reading keys [0, its last row]
F32 = torch.float32


def _scores_simt(qb, kt, scale, zero):
    return torch.baddbmm(zero, qb.float(), kt.float(), beta=0, alpha=scale)


def _pv_simt(p, vb):
    return torch.matmul(p, vb.float())


def _scores_tc(qb, kt, scale, zero):
    return torch.baddbmm(zero, qb, kt, out_dtype=F32, beta=0, alpha=scale)


def _pv_tc(p, vb):
    hi = p.to(torch.bfloat16)
    lo = (p - hi.float()).to(torch.bfloat16)
    out = torch.bmm(hi, vb, out_dtype=F32)
    out += torch.bmm(lo, vb, out_dtype=F32)
    return out


def _attention(q, k, v, scenario, scores, pv):
    B, H, Hkv, Sq, Sk, D, causal = _dims(scenario)
    group = H // Hkv
    scale = 1.0 / math.sqrt(D)
    out = torch.empty((B, H, Sq, D), dtype=F32, device=q.device)
    rows = max(1, min(Sq, _CHUNK_ELEMS // Sk))
    if causal:
        rows = max(1, min(rows, -(-Sq // _CAUSAL_SPLIT)))
    heads = max(1, min(H, _CHUNK_ELEMS // (rows * Sk)))
    zero = torch.zeros((1, 1, 1), dtype=F32, device=q.device)
    for b in range(B):
        for h0 in range(0, H, heads):
            h1 = min(H, h0 + heads)
            kv_idx = torch.arange(h0, h1, device=q.device) // group
            kb = k[b].index_select(0, kv_idx)
            vb = v[b].index_select(0, kv_idx)
            for r0 in range(0, Sq, rows):
                r1 = min(Sq, r0 + rows)
                keys = min(Sk, r1) if causal else Sk
                s = scores(q[b, h0:h1, r0:r1], kb[:, :keys].transpose(-1, -2), scale, zero)
                if causal and keys > r0 + 1:   # rows r0.. see keys 0..r0 at least; mask the rest
                    cols = torch.arange(keys, device=q.device)
                    rr = torch.arange(r0, r1, device=q.device)
                    s.masked_fill_(cols[None, :] > rr[:, None], float("-inf"))
                p = torch.softmax(s, dim=-1)
                del s
                out[b, h0:h1, r0:r1] = pv(p, vb[:, :keys])
                del p
    return out


def _highest(fn):
    get = getattr(torch, "get_float32_matmul_precision", None)
    saved = get() if get else None
    if saved is not None:
        torch.set_float32_matmul_precision("highest")
    try:
        return fn()
    finally:
        if saved is not None:
            torch.set_float32_matmul_precision(saved)


def reference(inputs, scenario):
    return {"o": _highest(lambda: _attention(inputs["q"], inputs["k"], inputs["v"], scenario, _scores_simt, _pv_simt))}


def _has_out_dtype(device):
    try:
        a = torch.ones((1, 2, 2), dtype=torch.bfloat16, device=device)
        return torch.bmm(a, a, out_dtype=F32).dtype == F32
    except (TypeError, RuntimeError):
        return False


def reference_tc(inputs, scenario):
    if not _has_out_dtype(inputs["q"].device):
        return reference(inputs, scenario)
    return {"o": _highest(lambda: _attention(inputs["q"], inputs["k"], inputs["v"], scenario, _scores_tc, _pv_tc))}
