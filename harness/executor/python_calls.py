"""Python functions of a task's signature, loaded inside an executor: the file imported, the function
found, and the peers' adapter (their tensors by name, the scenario's scalars looked up by params).
Standard library only; shared by python_candidate.py (a Python candidate or baseline) and process.py
(Python peers in the peers' executor), so that neither imports the other."""

import importlib.util
import json
import os
import sys


class NotLoaded(Exception):
    """The file does not import, or has no such function."""


def load_function(path, fn_name, module_name):
    """Import the Python file `path` and return its function `fn_name` (NotLoaded otherwise)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise NotLoaded(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:   # SystemExit included: the import is the module's own failure
        raise NotLoaded(f"importing {os.path.basename(path)} failed: {type(exc).__name__}: {exc}"[:2000]) from None
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise NotLoaded(f"{os.path.basename(path)} has no function {fn_name}() (the task's entry point)")
    return fn


def python_peers(peers, base_dir, args, scalars):
    """{peer name: fn(tensors, params)} for the peers named `python:file.py:function` in `peers`: the
    function takes the task's arguments in order (the stream left out), the scalars looked up by
    the scenario's params in `scalars` (python_roles.peer_scalars)."""
    out = {}
    for name, spec in peers.items():
        if not spec.startswith("python:"):
            continue
        file, _, fn_name = spec[len("python:"):].rpartition(":")
        fn = load_function(os.path.join(base_dir, file), fn_name, f"kernelseek_peer_{name}")
        out[name] = _peer_adapter(fn, spec, args, scalars or {})
    return out


def _peer_adapter(fn, spec, args, scalars):
    def call(tensors, params):
        values = scalars.get(json.dumps(params, sort_keys=True))
        if values is None:
            raise ValueError(f"{spec}: no scalar arguments for scenario {params}")
        argv = [tensors[a["name"]] if a["kind"] == "tensor" else values[a["name"]] for a in args
                if a["kind"] != "stream"]
        rc = fn(*argv)
        if rc not in (None, 0):
            raise RuntimeError(f"{spec} returned {rc!r}")
    return call
