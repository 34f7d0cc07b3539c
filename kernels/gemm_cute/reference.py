"""Reference, low-precision twin and peer for gemm_cute: c = a @ b.T (fp16 in and out)."""

import torch

try:  # keep this module importable without the harness on the path
    from harness.api import Unsupported  # noqa: F401
except ImportError:  # pragma: no cover
    class Unsupported(Exception):
        pass


def make_inputs(scenario, seed, device):
    """a[m, k], b[n, k] ~ N(0, 1) / 2 in fp16, each row scaled by a factor in [0.5, 2]."""
    m, n, k = int(scenario["m"]), int(scenario["n"]), int(scenario["k"])
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    a = torch.randn(m, k, generator=gen, device=device) * 0.5
    a *= torch.rand(m, 1, generator=gen, device=device) * 1.5 + 0.5
    b = torch.randn(n, k, generator=gen, device=device) * 0.5
    return {"a": a.to(torch.float16), "b": b.to(torch.float16)}


def output_shapes(scenario):
    return {"c": (int(scenario["m"]), int(scenario["n"]))}


def reference(inputs, scenario):
    """fp32 products of the fp16 inputs (TF32 off: exact fp32 accumulation)."""
    a, b = inputs["a"].float(), inputs["b"].float()
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        return {"c": a @ b.T}
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32


def lowp(inputs, scenario):
    return {"c": inputs["a"] @ inputs["b"].T}


def peer_cublas(inputs, scenario):
    return {"c": torch.matmul(inputs["a"], inputs["b"].T)}
