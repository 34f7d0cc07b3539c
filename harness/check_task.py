"""`python3 -m harness check-task --json`: every problem of a task folder at once, each with its file,
line, field, message and a fix, before any run finds them one at a time.

load_task() stops at a task's first problem (what an evaluation needs); this walks the same rules
field by field and goes on after each: the schema's every complaint (with "did you mean" for a
misspelt choice), then what a schema cannot say: expressions, the folder name, files and folders,
the baseline's entry point and its parameters against the task's arguments (the extern "C"
declaration of a C/C++ baseline, the def of a Python one), tolerance sanity, reference.py's syntax
and functions, and, when all of that holds, reference.py run on the first scenario (its inputs'
names, dtypes and shapes against the task). Whatever load_task() still refuses is added last.
"""

import ast
import difflib
import re
from pathlib import Path

import yaml

from .errors import HarnessError, TaskError
from .task import exprs, schema
from .task.model import (DEVICE_LANGUAGES, LANGUAGES, PYTHON_PREFIX, file_problem, load_reference, load_task,
                         resolve_baseline, resolve_inside, split_python)

REFERENCE_FUNCTIONS = {"make_inputs": 3, "output_shapes": 1, "reference": 2, "lowp": 2}
ALIASES = {"f32": "float32", "float": "float32", "fp32": "float32", "f16": "float16", "fp16": "float16",
           "half": "float16", "bf16": "bfloat16", "i32": "int32", "int": "int32", "i64": "int64", "long": "int64"}
C_TYPES = {"float32": ("float",), "float16": ("__half", "half"), "bfloat16": ("__nv_bfloat16", "nv_bfloat16"),
           "int32": ("int32_t", "int"), "int64": ("int64_t", "long", "longlong", "int64")}
SCALAR_C_TYPES = {"int32": ("int32_t", "int"), "int64": ("int64_t", "long", "longlong"), "float32": ("float",),
                  "stream": ("cudaStream_t",)}


class Problems:
    def __init__(self, task_dir):
        self.task_dir = Path(task_dir)
        self.items, self.warnings = [], []
        self.lines = {}

    def add(self, file, field, message, fix, line=None):
        if line is None and file == "task.yaml":
            line = self.line_of(field)
        item = {"file": file, "line": line, "field": field, "message": message, "fix": fix}
        if not any(p["field"] == field and p["message"] == message for p in self.items):
            self.items.append(item)

    def line_of(self, field):
        """The line of the deepest node of `field` (a.b[1].c) task.yaml has."""
        parts = [p for p in re.split(r"\.|\[(\d+)\]", field or "") if p]
        best = None
        node = self.lines.get("root")
        for part in parts:
            if node is None:
                break
            child = None
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if k.value == part:
                        child, best = v, k.start_mark.line + 1
            elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
                child = node.value[int(part)]
                best = child.start_mark.line + 1
            node = child
        return best


def check_task(task_dir):
    """{"task", "problems": [...], "warnings": [...]} for a task folder."""
    p = Problems(task_dir)
    task_dir = Path(task_dir).resolve()
    p.task_dir = task_dir
    yaml_path = task_dir / "task.yaml"
    if not yaml_path.is_file():
        p.add("task.yaml", "", "file not found (a task folder needs task.yaml)",
              "write task.yaml (docs/tasks.md), or point --task-dir at a task folder")
        return _out(p, None)
    text = yaml_path.read_text(encoding="utf-8", errors="replace")
    try:
        data = yaml.safe_load(text)
        p.lines["root"] = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        p.add("task.yaml", "", f"invalid YAML: {getattr(exc, 'problem', None) or exc}",
              "fix the YAML syntax at that line (indentation, a missing colon or quote)",
              line=mark.line + 1 if mark else None)
        return _out(p, None)
    if not isinstance(data, dict):
        p.add("task.yaml", "", "the top level is not a mapping", "task.yaml is a mapping of fields (docs/tasks.md)")
        return _out(p, None)
    for field, message in schema.problems(data):
        p.add("task.yaml", field, message, _schema_fix(field, message))
    _check_fields(p, task_dir, data)
    _check_reference(p, task_dir, data)
    if not p.items:
        try:
            task = load_task(task_dir)
            p.warnings += task.warnings
            _run_reference(p, task)
        except TaskError as exc:
            file = Path(exc.where).name if exc.where else "task.yaml"
            field, _, message = exc.detail.partition(": ")
            p.add(file, field if file == "task.yaml" else "", message or exc.detail, "see docs/tasks.md for this field")
    return _out(p, data.get("name"))


def _out(p, name):
    return {"task": name, "task_dir": str(p.task_dir), "ok": not p.items, "problems": p.items, "warnings": p.warnings}


def _schema_fix(field, message):
    m = re.match(r"'(.*)' is not one of (.*)$", message)
    if m:
        value, choices = m.group(1), [c.strip() for c in m.group(2).split(",")]
        close = [ALIASES[value]] if ALIASES.get(value) in choices else difflib.get_close_matches(value, choices, 1, 0.5)
        return f"did you mean {close[0]!r}?" if close else f"use one of {', '.join(choices)}"
    if message == "is required":
        return f"add {field} (docs/tasks.md, task.yaml field by field)"
    return "see docs/tasks.md for this field"


def _get(data, *keys):
    for k in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(k)
    return data


def _check_fields(p, task_dir, data):
    name, device, kernel = data.get("name"), data.get("device"), data.get("kernel") or {}
    if isinstance(name, str) and name != task_dir.name:
        p.add("task.yaml", "name", f"{name!r} must equal the folder name {task_dir.name!r}",
              f"name: {task_dir.name} (or rename the folder)")
    language = kernel.get("language") if isinstance(kernel, dict) else None
    if device in DEVICE_LANGUAGES and language in LANGUAGES and language not in DEVICE_LANGUAGES[device]:
        p.add("task.yaml", "kernel.language", f"a {device} task is written in {DEVICE_LANGUAGES[device][0]!r}, "
                                              f"not {language!r}",
              f"language: {' or '.join(DEVICE_LANGUAGES[device])}, or device: "
              f"{'cuda' if device == 'cpu' else 'cpu'}")
    if not isinstance(kernel, dict):
        return
    if isinstance(kernel.get("file"), str) and language in LANGUAGES:
        problem = file_problem(kernel["file"], language)
        if problem:
            p.add("task.yaml", "kernel.file", problem, f"a name ending in {' or '.join(LANGUAGES[language])}"
                  + ("" if language == "triton" else ", or a folder such as kernel/"))
    params = _get(data, "scenarios", "params") or []
    params = [x for x in params if isinstance(x, str)] if isinstance(params, list) else []
    args = kernel.get("args") if isinstance(kernel.get("args"), list) else []
    seen = set()
    for i, arg in enumerate(args):
        if not isinstance(arg, dict):
            continue
        if arg.get("name") in seen:
            p.add("task.yaml", f"kernel.args[{i}].name", f"duplicate argument {arg['name']!r}", "give each a name of its own")
        seen.add(arg.get("name"))
        if "value" in arg and arg["value"] is not None:
            _check_expression(p, f"kernel.args[{i}].value", arg["value"], params)
        if arg.get("kind") == "stream" and device != "cuda":
            p.add("task.yaml", f"kernel.args[{i}].kind", "a stream argument exists only for cuda tasks",
                  "remove it, or make the task device: cuda")
    if args and not any(isinstance(a, dict) and a.get("role") == "output" for a in args):
        p.add("task.yaml", "kernel.args", "at least one tensor with role: output is required",
              "mark the tensor the kernel writes with role: output")
    for key in ("flops", "bytes"):
        value = _get(data, "metrics", key)
        if value is not None:
            _check_expression(p, f"metrics.{key}", value, params)
    for i, block in enumerate(_get(data, "scenarios", "grid") or []):
        if isinstance(block, dict) and isinstance(block.get("where"), str):
            _check_expression(p, f"scenarios.grid[{i}].where", block["where"], params)
    _check_baseline(p, task_dir, kernel, language, args)
    for i, rel in enumerate(kernel.get("include_dirs") or []):
        if isinstance(rel, str):
            _, problem = resolve_inside(task_dir, rel, want_dir=True)
            if problem:
                p.add("task.yaml", f"kernel.include_dirs[{i}]", problem,
                      "create the folder in the task folder, or remove it from include_dirs")
    if kernel.get("headers"):
        try:
            from .build.headers import include_dirs
            include_dirs(kernel["headers"])
        except HarnessError as exc:
            p.warnings.append(f"kernel.headers: {exc}")
    tol = data.get("tolerance") or {}
    factor, atol = tol.get("factor"), tol.get("atol")
    if isinstance(factor, (int, float)) and 0 < factor < 1:
        p.add("task.yaml", "tolerance.factor", f"{factor} asks for less error than PyTorch's own computation in the "
                                               f"output's precision (lowp)", "a factor of 2 (FlashAttention-3's rule)")
    if isinstance(factor, (int, float)) and factor > 100:
        p.add("task.yaml", "tolerance.factor", f"{factor} lets almost any output pass", "a factor of 2 to 10")
    if isinstance(atol, (int, float)) and atol > 1e-2:
        p.add("task.yaml", "tolerance.atol", f"{atol} is larger than the error of most kernels' outputs: a wrong "
                                             f"kernel could pass", "an atol of 1e-6 (float32) to 1e-3 (float16)")
    peers = data.get("peers") if isinstance(data.get("peers"), list) else []
    names = [x.get("name") for x in peers if isinstance(x, dict)]
    goal_vs = _get(data, "goal", "vs")
    if goal_vs == "best_peer" and not peers:
        p.add("task.yaml", "goal.vs", "best_peer needs at least one peer", "goal: {vs: baseline}, or add peers")
    for i, peer in enumerate(peers):
        if not isinstance(peer, dict):
            continue
        if (peer.get("fn") is None) == (peer.get("python") is None):
            p.add("task.yaml", f"peers[{i}]", "give exactly one of fn and python",
                  "fn: a function in reference.py, or python: file.py:function of the task's signature")
        if names.count(peer.get("name")) > 1:
            p.add("task.yaml", f"peers[{i}].name", f"duplicate peer {peer.get('name')!r}", "give each peer its own name")
        if isinstance(peer.get("python"), str):
            _check_python_callable(p, task_dir, f"peers[{i}].python", PYTHON_PREFIX + peer["python"], args)


def _check_expression(p, field, text, params):
    try:
        node, source = exprs.compile_expression(text)
    except exprs.ExpressionError as exc:
        p.add("task.yaml", field, str(exc), "an expression of the scenario's params, numbers, + - * / // % ** and "
                                            "sqrt/log/ceil/min/max... (docs/tasks.md, Expressions)")
        return
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id not in params and sub.id not in exprs.FUNCTIONS and sub.id != "math":
            close = difflib.get_close_matches(sub.id, params, 1)
            p.add("task.yaml", field, f"unknown name {sub.id!r} in {source!r}; scenario params are "
                                      f"{', '.join(params)}",
                  f"did you mean {close[0]!r}?" if close else "add it to scenarios.params")


def _check_baseline(p, task_dir, kernel, language, args):
    text, entry = kernel.get("baseline"), kernel.get("entry")
    if not isinstance(text, str) or language not in LANGUAGES or not isinstance(entry, str):
        return
    path, fn, problem = resolve_baseline(task_dir, text, language, entry)
    if problem:
        p.add("task.yaml", "kernel.baseline", problem, "a file or folder inside the task folder, or python:file.py:fn")
        return
    if fn is not None:
        _check_python_callable(p, task_dir, "kernel.baseline", PYTHON_PREFIX + text.split(PYTHON_PREFIX)[-1]
                               if text.startswith(PYTHON_PREFIX) else f"{PYTHON_PREFIX}{text}:{entry}", args)
        return
    files = sorted(path.rglob("*")) if path.is_dir() else [path]
    _check_c_entry(p, task_dir, files, entry, args)


def _check_python_callable(p, task_dir, field, spec, args):
    file, fn = split_python(spec[len(PYTHON_PREFIX):])
    path, problem = resolve_inside(task_dir, file)
    if problem or not path.is_file():
        p.add("task.yaml", field, problem or f"{file!r} is not a file", "name a .py file inside the task folder")
        return
    try:
        tree = ast.parse(path.read_text(errors="replace"), str(path))
    except SyntaxError as exc:
        p.add(file, "", f"SyntaxError: {exc.msg}", "fix the syntax at that line", line=exc.lineno)
        return
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fn]
    if not defs:
        close = difflib.get_close_matches(fn, [n.name for n in tree.body if isinstance(n, ast.FunctionDef)], 1)
        p.add("task.yaml", field, f"{file} defines no top-level function {fn}()",
              f"did you mean {close[0]!r}?" if close else f"define {fn}() in {file}")
        return
    want = [a.get("name") for a in args if isinstance(a, dict) and a.get("kind") != "stream"]
    params = defs[-1].args.posonlyargs + defs[-1].args.args
    if defs[-1].args.vararg is None and len(params) != len(want):
        p.add(file, "", f"{fn}() takes {len(params)} argument(s) ({', '.join(a.arg for a in params)}); the task "
                        f"passes {len(want)} ({', '.join(map(str, want))})",
              f"def {fn}({', '.join(map(str, want))})", line=defs[-1].lineno)


def _strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _check_c_entry(p, task_dir, files, entry, args):
    found = None
    for path in files:
        if not path.is_file() or path.suffix not in (".cu", ".cpp", ".cc", ".cxx", ".h", ".hpp", ".cuh"):
            continue
        raw = path.read_text(errors="replace")
        code = _strip(raw)
        m = re.search(r"([\w:<>\s\*]*?)\b" + re.escape(entry) + r"\s*\(([^)]*)\)\s*\{", code)
        if m and 'extern "C"' in code[:m.start() + len(m.group(1))]:
            found = (path, raw[:raw.find(entry)].count("\n") + 1 if entry in raw else None, m.group(2))
            break
    rel = lambda path: str(path.relative_to(task_dir))   # noqa: E731
    if found is None:
        p.add("task.yaml", "kernel.entry", f"no extern \"C\" definition of {entry}() in the baseline",
              f"define extern \"C\" int {entry}(...) in the baseline, or correct kernel.entry")
        return
    path, line, params = found
    params = [x.strip() for x in params.split(",") if x.strip() and x.strip() != "void"]
    want = [a for a in args if isinstance(a, dict)]
    if len(params) != len(want):
        p.add(rel(path), "", f"{entry}() takes {len(params)} parameter(s); task.yaml's kernel.args has {len(want)}",
              f"make them agree, in order: {', '.join(str(a.get('name')) for a in want)}", line=line)
        return
    for i, (decl, arg) in enumerate(zip(params, want)):
        words = re.sub(r"\b(const|__restrict__|restrict|__restrict|volatile|struct|unsigned|signed|std::)\b", " ",
                       decl.replace("*", " * ")).split()
        pointer = "*" in words
        words = [w for w in words if w != "*"]
        base = "".join(words[:-1]) if len(words) > 1 else (words[0] if words else "")
        kind, dtype = arg.get("kind"), arg.get("dtype")
        if kind == "tensor":
            ok = pointer and base in C_TYPES.get(dtype, ())
            expect = f"{'const ' if arg.get('role') == 'input' else ''}{C_TYPES.get(dtype, ('?',))[0]}*"
        else:
            ok = not pointer and base in SCALAR_C_TYPES.get(kind, ())
            expect = SCALAR_C_TYPES.get(kind, ("?",))[0]
        if not ok:
            p.add(rel(path), f"kernel.args[{i}]", f"{entry}() parameter {i + 1} is `{decl}`; task.yaml says "
                                                  f"{arg.get('name')} is {kind}{' ' + dtype if dtype else ''}",
                  f"declare it as {expect} {arg.get('name')}, or correct kernel.args[{i}]", line=line)


def _check_reference(p, task_dir, data):
    path = task_dir / "reference.py"
    if not path.is_file():
        p.add("reference.py", "", "file not found (a task folder needs reference.py)",
              "write make_inputs, output_shapes, reference and lowp (docs/tasks.md, reference.py)")
        return
    try:
        tree = ast.parse(path.read_text(errors="replace"), str(path))
    except SyntaxError as exc:
        p.add("reference.py", "", f"SyntaxError: {exc.msg}", "fix the syntax at that line", line=exc.lineno)
        return
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    wanted = dict(REFERENCE_FUNCTIONS)
    for peer in data.get("peers") or []:
        if isinstance(peer, dict) and isinstance(peer.get("fn"), str):
            wanted[peer["fn"]] = 2
    for fn, nargs in wanted.items():
        if fn not in defs:
            close = difflib.get_close_matches(fn, list(defs), 1)
            p.add("reference.py", "", f"function {fn}() is missing",
                  f"did you mean {close[0]!r}?" if close else f"define {fn}() (docs/tasks.md, reference.py)")
            continue
        a = defs[fn].args
        params = a.posonlyargs + a.args
        if a.vararg is None and not len(params) - len(a.defaults) <= nargs <= len(params):
            p.add("reference.py", "", f"{fn}() takes {len(params)} argument(s), the harness passes {nargs}",
                  f"def {fn}({', '.join(['scenario', 'seed', 'device'] if fn == 'make_inputs' else ['scenario'] if nargs == 1 else ['inputs', 'scenario'])})",
                  line=defs[fn].lineno)


def _run_reference(p, task):
    """reference.py run on the first scenario, on the CPU (a CUDA task's on its GPU when there is one)."""
    import torch

    from .task.dtypes import DTYPES as TORCH_DTYPES
    device = "cpu"
    if task.device == "cuda":
        if not torch.cuda.is_available():
            p.warnings.append("reference.py was not run: no CUDA GPU here (its syntax and functions were checked)")
            return
        device = "cuda:0"
    scenario = task.scenarios[0]
    try:
        module = load_reference(task)
        inputs = module.make_inputs(dict(scenario.params), 0, device)
        shapes = module.output_shapes(dict(scenario.params))
    except TaskError as exc:
        p.add("reference.py", "", exc.detail, "see docs/tasks.md, reference.py")
        return
    except Exception as exc:   # the task's code: its failure is a problem to report
        p.add("reference.py", "", f"running make_inputs/output_shapes on scenario {scenario.id} raised "
                                  f"{type(exc).__name__}: {exc}", "fix reference.py", line=_tb_line(exc))
        return
    for arg in task.inputs():
        t = inputs.get(arg.name) if isinstance(inputs, dict) else None
        if t is None:
            p.add("reference.py", "", f"make_inputs() returns no {arg.name!r} (scenario {scenario.id})",
                  f"return every role: input tensor: {', '.join(a.name for a in task.inputs())}")
        elif t.dtype != TORCH_DTYPES[arg.dtype]:
            p.add("reference.py", "", f"make_inputs()[{arg.name!r}] is {t.dtype}, task.yaml says {arg.dtype}",
                  f"make it {arg.dtype}, or correct kernel.args' dtype")
    for arg in task.outputs():
        if not isinstance(shapes, dict) or arg.name not in shapes:
            p.add("reference.py", "", f"output_shapes() gives no shape for {arg.name!r}",
                  f"return every role: output tensor's shape: {', '.join(a.name for a in task.outputs())}")


def _tb_line(exc):
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith("reference.py"):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
