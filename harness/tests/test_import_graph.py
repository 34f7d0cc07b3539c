"""The harness's import graph, read from the code (ast, nothing imported): no circle of imports, each
package importing only the packages below it, and the executor's sandboxed files importing nothing
but the standard library and each other.

A circle or an upward import is how a package stops being a layer a reader can take in alone; the
executor's files are what the candidate's process holds (executor/handle.py binds exactly
PACKAGE_FILES into its sandbox), so anything they import beyond those is code in the candidate's
reach or a missing file at run time."""

import ast
import functools
import sys
from pathlib import Path

import pytest

from harness.executor.handle import PACKAGE_FILES

HARNESS = Path(__file__).resolve().parents[1]

# What each package may import (besides itself): the layers below it. "base" is harness/__init__.py,
# errors.py and api.py; "top" is the rest (the command line, evaluate.py, the correctness stage, the
# result, tests, tools), which may import anything.
BASE = {"harness", "harness.errors", "harness.api"}
MAY_IMPORT = {
    "native": {"base"},
    "sandbox": {"base"},
    "task": {"base"},
    "build": {"base", "sandbox"},
    "executor": {"base", "native", "sandbox", "build", "task"},
    "timing": {"base", "native", "sandbox", "build", "task", "executor"},
}


def module_name(path, root):
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path, root, modules, top_level_only=False):
    """{module imported: first line} for one file: the harness's own modules, resolved (relative
    imports, `from package import module`), and other top-level names as they are."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    nodes = tree.body if top_level_only else ast.walk(tree)
    found = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.setdefault(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.setdefault(sub if sub in modules else target, node.lineno)
    return found


def import_graph(root):
    """{module: {harness module it imports: line}} for every .py file under `root` (a package)."""
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    graph = {}
    for name, path in files.items():
        graph[name] = {m: line for m, line in imports_of(path, root, files).items() if m in files and m != name}
    return graph, files


@functools.lru_cache(maxsize=None)
def harness_graph():
    """The harness's graph, read once for the tests below."""
    return import_graph(HARNESS)


def find_cycle(graph):
    """One circle of imports as [a, b, ..., a], or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def layer(module):
    if module in BASE:
        return "base"
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 and parts[1] in MAY_IMPORT else "top"


def test_a_circle_is_found_and_shown(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("from ..c import thing\n")
    (pkg / "c.py").write_text("import os\n\n\ndef f():\n    from . import a\n")
    graph, _ = import_graph(pkg)
    assert find_cycle(graph) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    (pkg / "c.py").write_text("import os\n")
    assert find_cycle(import_graph(pkg)[0]) is None


def test_the_harness_has_no_circle_of_imports():
    graph, _ = harness_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "a circle of imports: " + " -> ".join(cycle)


def test_each_package_imports_only_the_packages_below_it():
    graph, files = harness_graph()
    wrong = []
    for name, targets in sorted(graph.items()):
        own = layer(name)
        if own not in MAY_IMPORT:
            continue
        for target, line in sorted(targets.items()):
            theirs = layer(target)
            if theirs != own and theirs not in MAY_IMPORT[own]:
                wrong.append(f"{files[name].relative_to(HARNESS.parent)}:{line} ({own}) imports {target} ({theirs})")
    assert not wrong, "imports against the layers (MAY_IMPORT):\n" + "\n".join(wrong)


@pytest.mark.skipif(not hasattr(sys, "stdlib_module_names"), reason="needs Python 3.10+ (sys.stdlib_module_names)")
def test_the_executors_files_import_only_the_standard_library_and_each_other():
    _, files = harness_graph()
    sandboxed = {module_name(HARNESS / f, HARNESS) for f in PACKAGE_FILES}
    assert all((HARNESS / f).is_file() for f in PACKAGE_FILES), "PACKAGE_FILES names a file that is not there"
    # A module for Python implementations' executors only, itself imported inside a function: it may
    # import Triton at its top (a @triton.jit kernel is defined at a module's top level).
    lazy = {"harness.executor.triton_warm"}
    wrong = []
    for name in sorted(sandboxed):
        path = files[name]
        top = imports_of(path, HARNESS, files, top_level_only=True)
        for target, line in sorted(top.items()):
            if target in lazy:
                wrong.append(f"{path.relative_to(HARNESS.parent)}:{line} imports {target} at its top level")
        if name in lazy:
            top = {t: ln for t, ln in top.items() if t.split(".")[0] != "triton"}
        for target, line in sorted(imports_of(path, HARNESS, files).items()):
            where = f"{path.relative_to(HARNESS.parent)}:{line}"
            if target.split(".")[0] == "harness":
                if target not in sandboxed:
                    wrong.append(f"{where} imports {target}, which is not among PACKAGE_FILES")
            elif target.split(".")[0] in ("torch", "triton") and target not in top:
                continue     # inside a function: the peers' and Python implementations' executors only
            elif target.split(".")[0] not in sys.stdlib_module_names:
                wrong.append(f"{where} imports {target}, which is not the standard library's")
    assert not wrong, "\n".join(wrong)


def test_the_executors_files_are_what_the_executor_imports_and_no_more():
    """PACKAGE_FILES is the closure of what the executor's process imports (either module it runs:
    process.py, or python_candidate.py for Python implementations; with the packages' __init__.py
    on the way), plus api.py, the one harness module a task's reference.py may import
    (the peers' executor loads it)."""
    graph, files = harness_graph()
    needed, todo = set(), ["harness.executor.process", "harness.executor.python_candidate", "harness.api"]
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:k]) for k in range(1, len(parts))]    # the packages' __init__.py
        todo += list(graph[name])
    listed = {module_name(HARNESS / f, HARNESS) for f in PACKAGE_FILES}
    assert listed == needed, (f"missing from PACKAGE_FILES: {sorted(needed - listed)}; "
                              f"listed but not imported: {sorted(listed - needed)}")


def test_a_packages_face_imports_nothing():
    """A package's __init__.py is loaded by every import of one of its modules (the executor's
    seccomp.py loads sandbox/__init__.py into the candidate's process): it says what the package
    owns and imports nothing of the harness."""
    for package in MAY_IMPORT:
        path = HARNESS / package / "__init__.py"
        tree = ast.parse(path.read_text())
        assert ast.get_docstring(tree), f"{path} has no docstring saying what the package owns"
        harness_imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and
                           (n.level or (n.module or "").startswith("harness"))]
        assert not harness_imports, f"{path} imports the harness's modules"
