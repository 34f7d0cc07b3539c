"""Load and validate a task folder (task.yaml + reference.py).

Every problem is reported as a TaskError naming the file and the field, e.g.
``kernels/x/task.yaml: kernel.args[1].dtype: 'f32' is not one of float32, ...``.
docs/tasks.md documents each field.
"""

import ast
import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..errors import TaskError
from . import exprs, schema
from .fields import Fields
from .scenarios import expand_scenarios

SCHEMA = "kernelseek.task/1"
DTYPES = ("float32", "float16", "bfloat16", "int32", "int64")
ARG_KINDS = ("tensor", "int32", "int64", "float32", "stream")
LANGUAGES = {"cpp": (".cpp", ".cc", ".cxx"), "cuda": (".cu",), "triton": (".py",)}
# The languages a device takes: Triton on a CPU only through its interpreter (TRITON_INTERPRET=1),
# for the plumbing's tests and small tasks; native C++ on a CPU, CUDA C++ on a GPU.
DEVICE_LANGUAGES = {"cpu": ("cpp", "triton"), "cuda": ("cuda", "triton")}
# Headers a task may ask for by name (kernel.headers): the pinned version the set-up installs.
HEADER_PACKS = ("cutlass",)
PYTHON_PREFIX = "python:"
KERNEL_FIELDS = ("language", "file", "baseline", "entry", "args", "compile", "include_dirs", "headers")
TOP_LEVEL = ("schema", "name", "summary", "device", "architectures", "kernel", "scenarios", "tolerance",
             "metrics", "peak", "peers", "goal", "plausibility", "denylist", "timing", "cpu_threads", "upstream")
TIMING_DEFAULTS = {"target_rse": 0.005, "min_reps": 10, "max_reps": 2000, "max_seconds": 1.0,
                   "warmup_reps": 3}
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader when PyYAML has it
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class Arg:
    name: str
    kind: str
    dtype: str = None      # tensors only
    role: str = None       # tensors only: input | output
    value: object = None   # scalars: a compiled expression over scenario params


@dataclass
class Task:
    dir: Path
    name: str
    summary: str
    device: str
    architectures: list
    language: str
    file: str              # the file the agent edits, or a folder (ends in "/") of sources and headers
    baseline: Path         # a source file, a folder of them, or the Python file of baseline_python
    entry: str
    args: list
    compile_flags: list
    param_names: list
    scenarios: list
    quick: list
    tolerance: dict
    metrics: dict
    peak: dict
    peers: list
    goal: dict
    plausibility: dict
    denylist: list
    timing: dict
    cpu_threads: int
    warnings: list = field(default_factory=list)
    # The task's own header folders (absolute, inside the task folder) and named header packs
    # (HEADER_PACKS): both on the compiler's include path, read-only, for every build of the task.
    include_dirs: list = field(default_factory=list)
    headers: list = field(default_factory=list)
    # A Python baseline (`kernel.baseline: python:file.py:fn`, or a Triton task's .py baseline): the
    # function's name in `baseline`; None for a native one.
    baseline_python: str = None

    @property
    def python(self):
        """Candidates are Python files (Triton) run by the Python executor, not native libraries."""
        return self.language == "triton"

    @property
    def folder(self):
        """The candidate is a folder of sources and headers (kernel.file ends in "/")."""
        return self.file.endswith("/")

    def python_peers(self):
        """{peer name: (file, function)} of the peers that are Python callables of the task's signature."""
        return {name: split_python(fn[len(PYTHON_PREFIX):]) for name, fn in self.peers
                if fn.startswith(PYTHON_PREFIX)}

    @property
    def yaml_path(self):
        return self.dir / "task.yaml"

    @property
    def reference_path(self):
        return self.dir / "reference.py"

    def inputs(self):
        return [a for a in self.args if a.kind == "tensor" and a.role == "input"]

    def outputs(self):
        return [a for a in self.args if a.kind == "tensor" and a.role == "output"]

    def scalar_values(self, scenario):
        """Values of the scalar (non-tensor, non-stream) arguments for one scenario."""
        values = {}
        for arg in self.args:
            if arg.kind in ("int32", "int64", "float32"):
                try:
                    value = exprs.evaluate(arg.value, scenario.params)
                except exprs.ExpressionError as exc:
                    raise TaskError(str(self.yaml_path), f"kernel.args {arg.name!r} for scenario "
                                                         f"{scenario.id}: {exc}") from None
                values[arg.name] = float(value) if arg.kind == "float32" else int(value)
        return values

    def metric(self, name, scenario):
        compiled = self.metrics.get(name)
        if compiled is None:
            return None
        try:
            return float(exprs.evaluate(compiled, scenario.params))
        except exprs.ExpressionError as exc:
            raise TaskError(str(self.yaml_path), f"metrics.{name} for scenario {scenario.id}: {exc}") from None


def load_task(task_dir):
    """Read, validate and return the Task in `task_dir` (raises TaskError)."""
    task_dir = Path(task_dir).resolve()
    yaml_path = task_dir / "task.yaml"
    where = str(yaml_path)
    if not task_dir.is_dir():
        raise TaskError(str(task_dir), "task folder not found")
    if not yaml_path.is_file():
        raise TaskError(where, "file not found (a task folder needs task.yaml)")
    try:
        data = yaml.load(yaml_path.read_text(encoding="utf-8"), Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        raise TaskError(where, f"invalid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise TaskError(where, f"(top level): expected a mapping, got {type(data).__name__}")
    # The shape first, from the schema file the TypeScript side checks too; then what no schema
    # can say (files, the folder name, scenario expansion, expressions, names across fields).
    found = schema.problems(data)
    if found:
        field_path, message = found[0]
        raise TaskError(where, f"{field_path or '(top level)'}: {message}")
    warnings = []
    top = Fields(where, "", data, TOP_LEVEL, warnings)

    version = top.get("schema", str, required=True)
    if version != SCHEMA:
        top.fail("schema", f"expected {SCHEMA!r}, got {version!r}")
    name = top.get("name", str, required=True)
    if not re.match(r"^[a-z0-9_]+$", name):
        top.fail("name", f"{name!r} must match [a-z0-9_]+")
    if name != task_dir.name:
        top.fail("name", f"{name!r} must equal the folder name {task_dir.name!r}")
    summary = top.get("summary", str, required=True)
    device = top.choice("device", ("cpu", "cuda"), required=True)
    architectures = top.string_list("architectures")
    for i, arch in enumerate(architectures):
        if not re.match(r"^sm_\d+[a-z]?$", arch):
            top.fail(f"architectures[{i}]", f"{arch!r} is not an architecture like sm_90")
    if device == "cuda" and not architectures:
        top.fail("architectures", "a cuda task needs at least one architecture (e.g. [sm_90])")

    kernel = top.sub("kernel", KERNEL_FIELDS, warnings, required=True)
    language = kernel.choice("language", tuple(LANGUAGES), required=True)
    if language not in DEVICE_LANGUAGES[device]:
        kernel.fail("language", f"a {device} task is written in {DEVICE_LANGUAGES[device][0]!r}, not {language!r}")
    kfile = kernel.get("file", str, required=True)
    problem = file_problem(kfile, language)
    if problem:
        kernel.fail("file", problem)
    entry = kernel.get("entry", str, required=True)
    if not _IDENT.match(entry):
        kernel.fail("entry", f"{entry!r} is not a C identifier")
    baseline_rel = kernel.get("baseline", str, required=True)
    baseline, baseline_python, problem = resolve_baseline(task_dir, baseline_rel, language, entry)
    if problem:
        kernel.fail("baseline", problem)
    args = _load_args(kernel, device)
    compile_flags = kernel.sub("compile", ("flags",), warnings).string_list("flags")
    include_dirs = []
    for i, rel in enumerate(kernel.string_list("include_dirs")):
        found, problem = resolve_inside(task_dir, rel, want_dir=True)
        if problem:
            kernel.fail(f"include_dirs[{i}]", problem)
        include_dirs.append(found)
    headers = kernel.string_list("headers")
    for i, pack in enumerate(headers):
        if pack not in HEADER_PACKS:
            kernel.fail(f"headers[{i}]", f"{pack!r} is not one of {', '.join(HEADER_PACKS)}")
        if language == "triton":
            kernel.fail(f"headers[{i}]", "header packs are for C++ and CUDA kernels, not Triton")

    scenarios_field = top.sub("scenarios", ("params", "grid", "list", "id", "quick"), warnings, required=True)
    param_names, scenarios, quick = expand_scenarios(scenarios_field)
    for arg in args:
        if arg.value is not None:
            _check_names(kernel, f"args.{arg.name}.value", arg.value, param_names)

    tol = top.sub("tolerance", ("rule", "factor", "atol"), warnings, required=True)
    tol.choice("rule", ("lowp_relative",), required=True)
    tolerance = {"rule": "lowp_relative", "factor": tol.number("factor", required=True, positive=True),
                 "atol": tol.number("atol", required=True, minimum=0)}

    met = top.sub("metrics", ("flops", "bytes"), warnings)
    metrics = {}
    for key in ("flops", "bytes"):
        text = met.get(key, (str, int, float))
        if text is not None:
            try:
                metrics[key] = exprs.compile_expression(text)
            except exprs.ExpressionError as exc:
                met.fail(key, str(exc))
            _check_names(met, key, metrics[key], param_names)

    pk = top.sub("peak", ("tflops", "gbps"), warnings)
    peak = {"tflops": pk.number("tflops", positive=True), "gbps": pk.number("gbps", positive=True)}

    peers = []
    for i, item in enumerate(top.get("peers", list, [])):
        pf = Fields(where, f"peers[{i}]", item, ("name", "fn", "python"), warnings)
        pname, fn, py = pf.get("name", str, required=True), pf.get("fn", str), pf.get("python", str)
        if not _IDENT.match(pname) or pname in ("candidate", "baseline"):
            pf.fail("name", f"{pname!r} must be an identifier other than candidate/baseline")
        if pname in [p[0] for p in peers]:
            pf.fail("name", f"duplicate peer {pname!r}")
        if (fn is None) == (py is None):
            pf.fail("fn", "give exactly one of fn (a function in reference.py) and python (file.py:function "
                          "of the task's signature)")
        if fn is not None and not _IDENT.match(fn):
            pf.fail("fn", f"{fn!r} is not a function name")
        if py is not None:
            _, _, problem = resolve_baseline(task_dir, PYTHON_PREFIX + py, "triton", None)
            if problem:
                pf.fail("python", problem)
        peers.append((pname, fn if fn is not None else PYTHON_PREFIX + py))

    gl = top.sub("goal", ("vs", "speedup"), warnings)
    goal = {"vs": gl.get("vs", str, "best_peer" if peers else "baseline"),
            "speedup": gl.number("speedup", 1.0, positive=True)}
    if goal["vs"] not in ("best_peer", "baseline", *[p[0] for p in peers]):
        gl.fail("vs", f"{goal['vs']!r} must be best_peer, baseline or a peer name")
    if goal["vs"] == "best_peer" and not peers:
        gl.fail("vs", "best_peer needs at least one peer")

    pl = top.sub("plausibility", ("max_speedup_vs_baseline", "max_pct_of_peak"), warnings)
    plausibility = {"max_speedup_vs_baseline": pl.number("max_speedup_vs_baseline", 1000, positive=True),
                    "max_pct_of_peak": pl.number("max_pct_of_peak", 100, positive=True)}
    denylist = top.string_list("denylist")

    tm = top.sub("timing", tuple(TIMING_DEFAULTS), warnings)
    timing = {
        "target_rse": tm.number("target_rse", TIMING_DEFAULTS["target_rse"], positive=True),
        "min_reps": int(tm.number("min_reps", TIMING_DEFAULTS["min_reps"], minimum=3)),
        "max_reps": int(tm.number("max_reps", TIMING_DEFAULTS["max_reps"], minimum=3)),
        "max_seconds": tm.number("max_seconds", TIMING_DEFAULTS["max_seconds"], positive=True),
        "warmup_reps": int(tm.number("warmup_reps", TIMING_DEFAULTS["warmup_reps"], minimum=0)),
    }
    if timing["max_reps"] < timing["min_reps"]:
        tm.fail("max_reps", f"must be >= min_reps ({timing['min_reps']})")
    cpu_threads = int(top.number("cpu_threads", 1, minimum=1))

    task = Task(dir=task_dir, name=name, summary=summary, device=device, architectures=architectures,
                language=language, file=kfile, baseline=baseline, entry=entry, args=args,
                compile_flags=compile_flags, param_names=param_names, scenarios=scenarios, quick=quick,
                tolerance=tolerance, metrics=metrics, peak=peak, peers=peers, goal=goal,
                plausibility=plausibility, denylist=denylist, timing=timing, cpu_threads=cpu_threads,
                warnings=warnings, include_dirs=include_dirs, headers=headers, baseline_python=baseline_python)
    for pack in headers:
        if pack in [d.lower() for d in denylist] or (pack == "cutlass" and "cute" in denylist):
            top.fail("denylist", f"the task asks for the {pack} headers (kernel.headers) and denies them here")
    return task


def file_problem(kfile, language):
    """Why `kernel.file` is not a plain file name of the language (or a folder: "kernel/"), or None."""
    folder = kfile.endswith("/")
    name = kfile[:-1] if folder else kfile
    if not name or "/" in name or "\\" in name or name in (".", "..") or not re.match(r"^[A-Za-z0-9_.-]+$", name):
        return f"{kfile!r} must be a plain file name, or a folder name ending in / (kernel/)"
    if folder and language == "triton":
        return f"{kfile!r}: a Triton candidate is one .py file"
    if not folder and not name.endswith(LANGUAGES[language]):
        return f"{kfile!r} must end in {' or '.join(LANGUAGES[language])} (or be a folder: kernel/)"
    return None


def resolve_inside(task_dir, rel, want_dir=False):
    """(absolute path, None) for `rel` inside the task folder, or (None, why not)."""
    if rel.startswith("/") or ".." in Path(rel).parts:
        return None, f"{rel!r} must be a path inside the task folder"
    path = (task_dir / rel).resolve()
    if task_dir not in path.parents and path != task_dir:
        return None, f"{rel!r} leads outside the task folder"
    if want_dir and not path.is_dir():
        return None, f"{rel!r} is not a folder inside the task folder"
    if not want_dir and not path.exists():
        return None, f"{rel!r} is not a file inside the task folder"
    return path, None


def split_python(spec):
    """"file.py:fn" -> ("file.py", "fn"); ("", "") when it has no colon."""
    file, _, fn = spec.rpartition(":")
    return file, fn


def resolve_baseline(task_dir, text, language, entry):
    """(path, Python function or None, problem or None) for `kernel.baseline`: a source file or folder
    of the task's language, a Triton task's .py file (its function is the entry), or
    `python:file.py:function` (a Python callable of the task's signature, for any language)."""
    if text.startswith(PYTHON_PREFIX):
        file, fn = split_python(text[len(PYTHON_PREFIX):])
        if not file.endswith(".py") or not _IDENT.match(fn or ""):
            return None, None, f"{text!r} must read python:file.py:function"
        path, problem = resolve_inside(task_dir, file)
        if problem is None and not path.is_file():
            problem = f"{file!r} is not a file"
        return path, fn, problem
    path, problem = resolve_inside(task_dir, text)
    if problem:
        return None, None, problem
    if language == "triton":
        if not path.is_file() or path.suffix != ".py":
            return None, None, f"{text!r}: a Triton task's baseline is a .py file (or python:file.py:function)"
        return path, entry, None
    if path.is_dir():
        return path, None, None
    if not path.is_file() or not path.name.endswith(LANGUAGES[language]):
        return None, None, f"{text!r} must be a {' or '.join(LANGUAGES[language])} file or a folder of sources"
    return path, None, None


def _load_args(kernel, device):
    raw = kernel.get("args", list, required=True)
    args, seen = [], set()
    for i, item in enumerate(raw):
        f = Fields(kernel.where, f"{kernel.path}.args[{i}]", item, ("name", "kind", "dtype", "role", "value"))
        name = f.get("name", str, required=True)
        if not _IDENT.match(name) or name in seen:
            f.fail("name", f"{name!r} must be a unique identifier")
        seen.add(name)
        kind = f.choice("kind", ARG_KINDS, required=True)
        arg = Arg(name=name, kind=kind)
        if kind == "tensor":
            arg.dtype = f.choice("dtype", DTYPES, required=True)
            arg.role = f.choice("role", ("input", "output"), required=True)
        elif kind == "stream":
            if device != "cuda":
                f.fail("kind", "a stream argument exists only for cuda tasks")
        else:
            value = f.get("value", (str, int, float), required=True)
            try:
                arg.value = exprs.compile_expression(value)
            except exprs.ExpressionError as exc:
                f.fail("value", str(exc))
        args.append(arg)
    if not any(a.role == "output" for a in args):
        kernel.fail("args", "at least one tensor with role: output is required")
    if sum(a.kind == "stream" for a in args) > 1:
        kernel.fail("args", "at most one stream argument")
    return args


def _check_names(fields, key, compiled, param_names):
    """Evaluate once with dummy values so an unknown name fails at load time, not mid-evaluation."""
    node, source = compiled
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id not in param_names and sub.id not in exprs.FUNCTIONS \
                and sub.id != "math":
            fields.fail(key, f"unknown name {sub.id!r} in {source!r}; scenario params are "
                             f"{', '.join(param_names)}")


_loaded_modules = {}


def load_reference(task):
    """Import the task's reference.py (once per process) and check the functions the task names."""
    path = task.reference_path
    if not path.is_file():
        raise TaskError(str(path), "file not found (a task folder needs reference.py)")
    key = str(path)
    if key not in _loaded_modules:
        module_name = f"kernelseek_task_{task.name}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # any import-time failure is the task's fault
            del sys.modules[module_name]
            raise TaskError(key, f"import failed: {type(exc).__name__}: {exc}") from None
        _loaded_modules[key] = module
    module = _loaded_modules[key]
    needed = ["make_inputs", "output_shapes", "reference", "lowp"] + [fn for _, fn in task.peers
                                                                        if not fn.startswith(PYTHON_PREFIX)]
    for fn in needed:
        if not callable(getattr(module, fn, None)):
            raise TaskError(key, f"function {fn}() is missing (see docs/tasks.md, reference.py contract)")
    return module
