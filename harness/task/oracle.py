"""The trusted side of correctness: inputs, reference and tolerance, computed in the parent process.

The reference is computed on a pristine clone of the inputs, in a process the candidate never runs
in, so neither modified inputs (hack 6) nor memory left behind by an allocator (hack 5) can make a
wrong output agree with it. Every value reference.py returns is checked against its contract.
"""

import time

import torch

from ..errors import TaskError
from .dtypes import DTYPES, element_size
from .refcache import fingerprint
from .tolerance import max_abs_diff, nonfinite_count, tolerance

_HIGH = {"float32": (torch.float32, torch.float64), "float16": (torch.float32, torch.float64),
         "bfloat16": (torch.float32, torch.float64), "float64": (torch.float64,),
         "int32": (torch.int32, torch.int64), "int64": (torch.int64,)}


def _key(params):
    return tuple(sorted((k, str(v)) for k, v in params.items()))


class Oracle:
    def __init__(self, task, module, device):
        self.task, self.module, self.device = task, module, device
        self.where = str(task.reference_path)
        self.input_bytes = {}   # scenario params -> bytes of one input set (sizes the timing sets)
        # The host's kept references (refcache.ReferenceCache), for expected(..., cached=True); None: off.
        self.cache = None

    def _fail(self, fn, message):
        raise TaskError(self.where, f"{fn}(): {message}")

    def inputs(self, params, seed):
        inputs = self.module.make_inputs(dict(params), seed, str(self.device))
        if not isinstance(inputs, dict):
            self._fail("make_inputs", f"must return a dict of tensors, got {type(inputs).__name__}")
        expected = {a.name: a for a in self.task.inputs()}
        if set(inputs) != set(expected):
            self._fail("make_inputs", f"returned {sorted(inputs)}, task.yaml declares inputs {sorted(expected)}")
        for name, arg in expected.items():
            t = inputs[name]
            if not isinstance(t, torch.Tensor):
                self._fail("make_inputs", f"{name!r} is a {type(t).__name__}, not a tensor")
            if t.dtype != DTYPES[arg.dtype]:
                self._fail("make_inputs", f"{name!r} has dtype {t.dtype}, task.yaml says {arg.dtype}")
            if t.device.type != self.device.type:
                self._fail("make_inputs", f"{name!r} is on {t.device}, expected the {self.device.type} device")
            if not t.is_contiguous():
                self._fail("make_inputs", f"{name!r} must be contiguous")
        key = _key(params)
        if key not in self.input_bytes:
            self.input_bytes[key] = sum(t.numel() * t.element_size() for t in inputs.values())
        return inputs

    def output_bytes(self, params):
        """Bytes of the largest output."""
        sizes = {a.name: element_size(a.dtype) for a in self.task.outputs()}
        total = 0
        for name, shape in self.output_shapes(params).items():
            n = sizes[name]
            for d in shape:
                n *= d
            total = max(total, n)
        return total

    def set_bytes(self, params):
        """Bytes of one input set plus its outputs (inputs must have been made once before)."""
        key = _key(params)
        outs = self.output_bytes(params) * max(1, len(self.task.outputs()))
        return self.input_bytes.get(key, 0) + outs

    def output_shapes(self, params):
        shapes = self.module.output_shapes(dict(params))
        names = [a.name for a in self.task.outputs()]
        if not isinstance(shapes, dict) or set(shapes) != set(names):
            self._fail("output_shapes", f"must return a dict with exactly {names}, got {shapes!r}")
        return {k: tuple(int(d) for d in v) for k, v in shapes.items()}

    def expected(self, params, seed, cached=False):
        """(inputs, reference outputs, {output: (tolerance, lowp_err)}) for one scenario and seed.
        cached: the seed is one the host has seen (the correctness seeds): the reference's outputs
        and lowp's error come from the host's cache where kept there (task/refcache.py), and are
        kept there once computed. The inputs are made afresh either way."""
        return self.expected_for(params, self.inputs(params, seed), seed if cached else None)

    def expected_for(self, params, inputs, cache_seed=None, variant=None):
        """expected() for inputs made elsewhere (task/variants.py: another distribution); with
        `cache_seed`, through the host's cache under that seed and `variant` (the transform that
        made the inputs from the seed's own; the inputs' fingerprint is checked all the same)."""
        shapes = self.output_shapes(params)
        cache = self.cache if cache_seed is not None else None
        if cache is not None:
            key = cache.key(params, cache_seed, variant)

            def fp():
                return fingerprint(inputs)
            hit = cache.get(key, {a.name: (_HIGH[a.dtype], shapes[a.name]) for a in self.task.outputs()},
                            self.device, fp)
            if hit is not None:
                ref = hit.ref if hit.ref is not None else self._reference(inputs, params, shapes)[0]
                return inputs, ref, {name: (self.tolerance_of(err), err) for name, err in hit.lowp_err.items()}
        ref, ref_s = self._reference(inputs, params, shapes)
        t0 = self._clock()
        low = self._outputs("lowp", self.module.lowp(_clone(inputs), dict(params)), shapes, high=False)
        tols = self.tolerances(low, ref)
        if cache is not None:
            cache.put(key, ref, {name: err for name, (_, err) in tols.items()}, fp, ref_s, self._clock() - t0)
        return inputs, ref, tols

    def _reference(self, inputs, params, shapes):
        """(reference outputs, checked, and the seconds they took)."""
        t0 = self._clock()
        ref = self._outputs("reference", self.module.reference(_clone(inputs), dict(params)), shapes, high=True)
        return ref, self._clock() - t0

    def _clock(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return time.perf_counter()

    def tolerance_of(self, lowp_err):
        return tolerance(lowp_err, self.task.tolerance["factor"], self.task.tolerance["atol"])

    def tolerances(self, low, ref):
        """{output: (tolerance, lowp_err)}: each output's tolerance from lowp's error against the reference."""
        tols = {}
        for arg in self.task.outputs():
            lowp_err = max_abs_diff(low[arg.name], ref[arg.name])
            tols[arg.name] = (self.tolerance_of(lowp_err), lowp_err)
        return tols

    def _outputs(self, fn, out, shapes, high):
        if not isinstance(out, dict):
            self._fail(fn, f"must return a dict of tensors, got {type(out).__name__}")
        for arg in self.task.outputs():
            t = out.get(arg.name)
            if not isinstance(t, torch.Tensor):
                self._fail(fn, f"output {arg.name!r} missing (got keys {sorted(out)})")
            if tuple(t.shape) != shapes[arg.name]:
                self._fail(fn, f"{arg.name!r} has shape {tuple(t.shape)}, output_shapes() says "
                               f"{shapes[arg.name]}")
            if high and t.dtype not in _HIGH[arg.dtype]:
                self._fail(fn, f"{arg.name!r} is {t.dtype}: the reference must be computed in higher "
                               f"precision than {arg.dtype} ({', '.join(map(str, _HIGH[arg.dtype]))})")
            if not high and t.dtype != DTYPES[arg.dtype]:
                self._fail(fn, f"{arg.name!r} is {t.dtype}: lowp must compute in the output's precision "
                               f"({arg.dtype}); it sets the tolerance")
            if nonfinite_count(t):
                self._fail(fn, f"{arg.name!r} contains NaN/Inf")
        return out


def _clone(inputs):
    return {k: v.clone() for k, v in inputs.items()}
