"""Reference, low-precision twin and peer for the cpu_softmax task (row-wise softmax, float32).

Imports only torch and the harness's Unsupported (guarded), so it loads on PyTorch 1.13 and 2.x.
"""

import torch

try:  # keep this module importable without the harness on the path
    from harness.api import Unsupported  # noqa: F401  (part of the reference.py contract)
except ImportError:  # pragma: no cover
    class Unsupported(Exception):
        pass


def make_inputs(scenario, seed, device):
    """x[rows, cols] = 4 * N(0, 1) + a per-row offset in [-100, 100].

    The spread makes every probability depend on the values (a constant or uniform output fails),
    and the offsets overflow exp() in float32 unless the kernel subtracts the row maximum.
    """
    rows, cols = int(scenario["rows"]), int(scenario["cols"])
    gen = torch.Generator(device="cpu")
    gen.manual_seed(int(seed))
    x = torch.randn(rows, cols, generator=gen) * 4.0
    x += (torch.rand(rows, 1, generator=gen) * 200.0 - 100.0)
    return {"x": x.to(device).contiguous()}


def output_shapes(scenario):
    return {"y": (int(scenario["rows"]), int(scenario["cols"]))}


def reference(inputs, scenario):
    """Softmax in float64."""
    return {"y": torch.softmax(inputs["x"].double(), dim=-1)}


def lowp(inputs, scenario):
    """PyTorch's float32 softmax: its error against float64 sets the tolerance."""
    return {"y": torch.softmax(inputs["x"], dim=-1)}


def peer_torch(inputs, scenario):
    """torch.softmax in float32, on the intra-op thread count the harness sets (cpu_threads)."""
    return {"y": torch.softmax(inputs["x"], dim=-1)}
