"""Reference, low-precision twin and peer for softmax_triton (row-wise softmax, float16 in and out)."""

import torch

try:  # keep this module importable without the harness on the path
    from harness.api import Unsupported  # noqa: F401
except ImportError:  # pragma: no cover
    class Unsupported(Exception):
        pass


def make_inputs(scenario, seed, device):
    """x = 3 * N(0, 1) + a per-row offset in [-8, 8] (float16): every probability depends on the values."""
    rows, cols = int(scenario["rows"]), int(scenario["cols"])
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    x = torch.randn(rows, cols, generator=gen, device=device) * 3.0
    x += torch.rand(rows, 1, generator=gen, device=device) * 16.0 - 8.0
    return {"x": x.to(torch.float16).contiguous()}


def output_shapes(scenario):
    return {"y": (int(scenario["rows"]), int(scenario["cols"]))}


def reference(inputs, scenario):
    return {"y": torch.softmax(inputs["x"].float(), dim=-1)}


def lowp(inputs, scenario):
    return {"y": torch.softmax(inputs["x"], dim=-1)}


def peer_torch(inputs, scenario):
    return {"y": torch.softmax(inputs["x"], dim=-1)}
