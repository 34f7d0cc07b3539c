"""Reference, low-precision twin and peers for the rmsnorm task: y = x * rsqrt(mean(x^2) + eps) * w.

Imports only torch (and the harness's Unsupported, guarded); imports on PyTorch 1.13 and 2.11.
"""
import torch

try:  # the harness recognises this class; keep the module importable without the harness package
    from harness.api import Unsupported
except ImportError:  # pragma: no cover - only without the harness on the path

    class Unsupported(Exception):
        """A peer cannot run this scenario."""


EPS = 1e-6  # task.yaml passes the same constant as the `eps` argument


def make_inputs(scenario, seed, device):
    rows, cols = int(scenario["rows"]), int(scenario["cols"])
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    # Rows of different magnitudes (x0.25 .. x4), so a wrong row's statistics cannot pass.
    row_scale = torch.exp2(torch.rand(rows, 1, generator=gen, device=device) * 4 - 2)
    x = torch.randn(rows, cols, generator=gen, device=device) * row_scale
    w = 1 + 0.5 * torch.randn(cols, generator=gen, device=device)
    return {"x": x.to(torch.bfloat16), "w": w.to(torch.bfloat16)}


def output_shapes(scenario):
    return {"y": (int(scenario["rows"]), int(scenario["cols"]))}


def _fp32(x, w):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()


def reference(inputs, scenario):
    return {"y": _fp32(inputs["x"], inputs["w"])}


def lowp(inputs, scenario):
    """The same formula with every intermediate rounded to bf16."""
    x, w = inputs["x"], inputs["w"]
    ms = (x * x).mean(-1, keepdim=True)
    return {"y": x * torch.rsqrt(ms + EPS) * w}


def peer_torch(inputs, scenario):
    """A plain PyTorch composition in fp32, cast back to bf16."""
    return {"y": _fp32(inputs["x"], inputs["w"]).to(torch.bfloat16)}


def peer_torch_rms_norm(inputs, scenario):
    fn = getattr(torch.nn.functional, "rms_norm", None)
    if fn is None:
        raise Unsupported("torch %s has no torch.nn.functional.rms_norm" % torch.__version__)
    x, w = inputs["x"], inputs["w"]
    return {"y": fn(x, (x.shape[-1],), w, EPS)}
