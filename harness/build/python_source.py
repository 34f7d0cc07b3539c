"""A Python implementation's "build": a Triton candidate (or a Python baseline) checked as text.

There is nothing to compile before the device (Triton compiles its kernels on their first call, in
the executor), so this stage reads the file: UTF-8 text of a bounded size that parses, with the
entry function at the top level taking the task's arguments, and (a first filter, never the
defence: the candidate owns its process whatever it imports) imports only from the modules a
kernel needs, and none of the builtins that reach outside a kernel's business (exec, eval, open,
__import__, the interpreter's frames). The executor and the parent's checks are what hold
(docs/harness-threats.md, "Python and Triton candidates").
"""

import ast
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import HarnessError

MAX_SOURCE_BYTES = 1 << 20
ALLOWED_MODULES = ("triton", "torch", "math", "functools", "typing", "__future__", "dataclasses", "itertools",
                   "operator", "numbers", "enum")
FORBIDDEN_NAMES = ("exec", "eval", "compile", "open", "__import__", "globals", "locals", "vars", "breakpoint",
                   "input", "memoryview", "__builtins__", "__loader__", "__spec__")
FORBIDDEN_ATTRS = ("__globals__", "__code__", "__subclasses__", "__builtins__", "__dict__", "__class__",
                   "__bases__", "__mro__", "__closure__", "__func__", "__self__", "__module__", "f_back", "f_globals",
                   "f_locals", "tb_frame", "gi_frame", "cr_frame", "ctypes", "_C")
JIT_DECORATORS = ("jit", "autotune", "heuristics")


@dataclass
class PythonBuild:
    """What evaluate.py reads of a build, for a Python file (build.compile.Build's fields)."""
    source: bytes
    ok: bool = True
    seconds: float = 0.0
    log: str = ""
    ptxas: dict = field(default_factory=dict)
    cached: bool = False
    key: str = ""
    refused: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    kernels: list = field(default_factory=list)   # the @triton.jit functions found
    lib = None
    objs = ()

    def write_library(self, dest):
        """Write the checked bytes to `dest` (the executor imports this copy)."""
        Path(dest).write_bytes(self.source)
        os.chmod(dest, 0o644)


def python_build(source, entry, nargs, use_allowlist=True):
    """(PythonBuild, refusal reasons, compile error text or None) for `source` (bytes): the entry
    function `entry` must take `nargs` positional arguments."""
    b = PythonBuild(source=source, key=hashlib.sha256(source).hexdigest()[:32])
    if len(source) > MAX_SOURCE_BYTES:
        return b, [f"source is {len(source)} bytes; the limit is {MAX_SOURCE_BYTES}"], None
    if b"\0" in source:
        return b, ["source contains NUL bytes: a kernel must be a text file"], None
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError as exc:
        return b, [f"source is not UTF-8 text ({exc})"], None
    try:
        tree = ast.parse(text, "kernel.py")
    except SyntaxError as exc:
        b.ok = False
        b.log = f"kernel.py:{exc.lineno}:{exc.offset or 0}: SyntaxError: {exc.msg}"
        return b, [], b.log
    b.kernels = jit_functions(tree)
    b.ptxas = {"kernels": [{"name": k, "jit": "triton"} for k in b.kernels]}
    problem = entry_problem(tree, entry, nargs)
    if problem:
        b.ok = False
        b.log = problem
        return b, [], problem
    return b, (import_problems(tree) if use_allowlist else []), None


def jit_functions(tree):
    """Names of the top-level functions decorated with triton.jit (or autotune/heuristics around it)."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if name in JIT_DECORATORS:
                    out.append(node.name)
                    break
    return out


def entry_problem(tree, entry, nargs):
    """Why the module's top level has no function `entry` of `nargs` positional arguments, or None."""
    found = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == entry]
    if not found:
        return f"kernel.py defines no top-level function {entry}() (the task's entry point)"
    fn = found[-1]
    if isinstance(fn, ast.AsyncFunctionDef):
        return f"{entry}() is async: the entry point is a plain function"
    params = fn.args.posonlyargs + fn.args.args
    required = len(params) - len(fn.args.defaults)
    if fn.args.vararg is None and not required <= nargs <= len(params):
        return (f"{entry}() takes {len(params)} argument(s); the task passes {nargs} (its arguments in order, "
                f"the stream left out)")
    return None


def import_problems(tree):
    """The first filter's reasons: imports outside ALLOWED_MODULES, forbidden builtins and attributes."""
    reasons = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = ["." * node.level + (node.module or "")]
        for name in names:
            if name.split(".")[0] not in ALLOWED_MODULES:
                reasons.append(f"line {node.lineno}: import {name}: a kernel imports only "
                               f"{', '.join(ALLOWED_MODULES[:3])} and a few standard modules")
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            reasons.append(f"line {node.lineno}: {node.id}: not allowed in a kernel")
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRS:
            reasons.append(f"line {node.lineno}: .{node.attr}: not allowed in a kernel")
    return reasons[:20]


def read_python(path):
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from None
