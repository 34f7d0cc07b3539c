"""A candidate replacement for kernels/flash_attn_fwd/reference.py's fp32 reference, timed against
it by harness/tools/reference_cost.py (--variant harness.tools.flash_reference_variant:reference):
the softmax scale applied inside the first matmul (baddbmm's alpha: one pass over the fp32 scores
fewer), and causal rows taken in chunks that read only the keys they can see (top-left: key j
visible to query i iff j <= i), so a causal 16k x 16k scenario computes about 60 % of the scores."""

import math

import torch


def _dims(sc):
    return (int(sc["B"]), int(sc["H"]), int(sc["Hkv"]), int(sc["Sq"]), int(sc["Sk"]), int(sc["D"]),
            bool(int(sc["causal"])))


_CHUNK_ELEMS = 1 << 28
_CAUSAL_SPLIT = 8      # causal: at least this many row chunks, each reading keys [0, its last row]


def _attention(q, k, v, scenario):
    B, H, Hkv, Sq, Sk, D, causal = _dims(scenario)
    group = H // Hkv
    scale = 1.0 / math.sqrt(D)
    out = torch.empty((B, H, Sq, D), dtype=torch.float32, device=q.device)
    rows = max(1, min(Sq, _CHUNK_ELEMS // Sk))
    if causal:
        rows = max(1, min(rows, -(-Sq // _CAUSAL_SPLIT)))
    heads = max(1, min(H, _CHUNK_ELEMS // (rows * Sk)))
    zero = torch.zeros((1, 1, 1), dtype=torch.float32, device=q.device)
    for b in range(B):
        for h0 in range(0, H, heads):
            h1 = min(H, h0 + heads)
            kv_idx = torch.arange(h0, h1, device=q.device) // group
            kb = k[b].index_select(0, kv_idx).float()
            vb = v[b].index_select(0, kv_idx).float()
            for r0 in range(0, Sq, rows):
                r1 = min(Sq, r0 + rows)
                keys = min(Sk, r1) if causal else Sk
                qb = q[b, h0:h1, r0:r1].float()
                s = torch.baddbmm(zero, qb, kb[:, :keys].transpose(-1, -2), beta=0, alpha=scale)
                if causal and keys > r0 + 1:   # rows r0.. see keys 0..r0 at least; mask the rest
                    cols = torch.arange(keys, device=q.device)
                    rr = torch.arange(r0, r1, device=q.device)
                    s.masked_fill_(cols[None, :] > rr[:, None], float("-inf"))
                p = torch.softmax(s, dim=-1)
                del s
                out[b, h0:h1, r0:r1] = torch.matmul(p, vb[:, :keys])
                del p
    return out


def reference(inputs, scenario):
    get = getattr(torch, "get_float32_matmul_precision", None)
    saved = get() if get else None
    if saved is not None:
        torch.set_float32_matmul_precision("highest")
    try:
        return {"o": _attention(inputs["q"], inputs["k"], inputs["v"], scenario)}
    finally:
        if saved is not None:
            torch.set_float32_matmul_precision(saved)
