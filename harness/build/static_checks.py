"""Checks on the candidate before it runs: its source text, then its compiled object and library.

Each check returns a list of human-readable reasons; an empty list means the candidate passed.
"""

import os
import posixpath
import re

from ..errors import EnvironmentProblem
from . import allowlist
from . import denylist as dl
from . import headers

MAX_SOURCE_BYTES = 1 << 20
# `%:` is the digraph spelling of `#` (C++ [lex.digraph]): `%:include` is an #include.
_DIRECTIVE = re.compile(r"^\s*(?:#|%:)\s*(\w+)\s*(.*)$")
_RAW_ASM = re.compile(r"\b(syscall|sysenter)\b|\bint\s+\$?0x80\b")


def strip_comments(text):
    """Remove // and /* */ comments (keeping string and char literals) after joining continued lines,
    so that a commented-out #include neither counts nor hides a real one."""
    text = text.replace("\\\r\n", "").replace("\\\n", "")
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            out.append(" ")
            i = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def check_sources(source, task):
    """Reasons to refuse a candidate's sources before compiling them: one file (bytes) or a folder
    ({relative path: bytes}, build/sources.py), every file of it, each reason naming its file."""
    if not isinstance(source, dict):
        return check_source(source, task)
    total = sum(len(data) for data in source.values())
    if total > MAX_SOURCE_BYTES * 4:
        return [f"the candidate's files are {total} bytes; the limit is {MAX_SOURCE_BYTES * 4}"]
    reasons = []
    for name in sorted(source):
        reasons += [f"{name}: {r}" for r in check_source(source[name], task, name=name, own=set(source))]
    return reasons


def task_header_dirs(task):
    """The task's include folders and header packs (host paths): quoted includes may name their files."""
    dirs = [str(d) for d in getattr(task, "include_dirs", [])]
    try:
        dirs += headers.include_dirs(getattr(task, "headers", []))
    except EnvironmentProblem:
        pass     # the compile says so; here such an include is simply not found
    return dirs


def check_source(data, task, name=None, own=None):
    """Reasons to refuse one source file (bytes) before compiling it. `own`: a folder candidate's
    relative paths (its quoted includes may name them); `name`: this file's among them."""
    if len(data) > MAX_SOURCE_BYTES:
        return [f"source is {len(data)} bytes; the limit is {MAX_SOURCE_BYTES}"]
    if b"\0" in data:
        return ["source contains NUL bytes: a kernel must be a text file"]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [f"source is not UTF-8 text ({exc})"]
    fams = dl.families(task.denylist) + dl.ALWAYS
    reasons = []
    code = strip_comments(text)
    for lineno, line in enumerate(code.splitlines(), 1):
        m = _DIRECTIVE.match(line)
        if not m:
            continue
        directive, rest = m.group(1), m.group(2).strip()
        if directive in ("include_next", "import", "embed"):
            reasons.append(f"line {lineno}: #{directive} is not allowed: the candidate includes only its own "
                           f"files, the task's headers and system headers")
        elif directive == "include":
            reasons.extend(_check_include(lineno, rest, fams, name, own, task))
    if ".incbin" in code:
        reasons.append("inline assembly .incbin is not allowed: the candidate is exactly one file")
    m = _RAW_ASM.search(code)
    if m:
        line = code.count("\n", 0, m.start()) + 1
        reasons.append(f"line {line}: {m.group(0)!r}: raw system calls are not allowed")
    return reasons


def _own_file(path, name, own):
    """Whether an include of `path` from file `name` names one of the candidate's files `own`."""
    if own is None or path.startswith("/"):
        return False
    here = posixpath.dirname(name or "")
    return any(posixpath.normpath(p) in own for p in (posixpath.join(here, path), path))


def _task_file(path, task):
    return not path.startswith("/") and ".." not in path.split("/") and any(
        os.path.isfile(os.path.join(d, path)) for d in task_header_dirs(task))


def _check_include(lineno, rest, fams, name=None, own=None, task=None):
    if rest.startswith('"') and rest.count('"') >= 2:
        path = rest[1:rest.index('"', 1)]
        if _own_file(path, name, own) or (task is not None and _task_file(path, task)):
            return []
        if own is not None:
            return [f"line {lineno}: #include {rest}: not a file of the candidate's folder nor of the task's "
                    f"include folders"]
        return [f"line {lineno}: #include {rest}: quoted includes are not allowed: the candidate is "
                f"exactly one file (include system headers with <...>)"]
    if rest.startswith('"'):
        return [f"line {lineno}: #include {rest}: computed includes are not allowed"]
    if not rest.startswith("<") or ">" not in rest:
        return [f"line {lineno}: #include {rest}: computed includes are not allowed"]
    path = rest[1:rest.index(">")].strip()
    if _own_file(path, name, own) and ".." not in path.split("/"):
        return []
    if path.startswith("/") or ".." in path.split("/"):
        return [f"line {lineno}: #include <{path}>: absolute or parent-relative include paths are not "
                f"allowed"]
    fam = dl.match_header(path, fams)
    if fam:
        return [f"line {lineno}: #include <{path}>: forbidden header ({fam.why})"]
    return []


def check_objects(objs, task, use_allowlist=True):
    """check_object over every object of a build: a symbol one object references and another defines
    (a helper in another source of a folder) is the build's own, not a reference out of it."""
    if len(objs) == 1:
        return check_object(objs[0], task, use_allowlist)
    own = {s.name for o in objs for s in o.symbols if s.defined and s.name and s.binding != "local"}
    reasons = []
    for obj in objs:
        for r in check_object(obj, task, use_allowlist, own):
            if r not in reasons:
                reasons.append(r)
    return reasons


def check_object(obj_info, task, use_allowlist=True, own=frozenset()):
    """Reasons from the candidate's object file: each undefined symbol must be on the allowlist
    (allowlist.py); a denylisted family is named first, with its own reason. `use_allowlist=False`
    (tests only) leaves the denylist alone, to show that the run-time defences behind it still hold."""
    fams = dl.families(task.denylist) + dl.ALWAYS
    reasons, unlisted = [], False
    for sym in obj_info.undefined():
        if sym in own:
            continue
        hit = dl.match_symbol(sym, fams)
        if hit:
            fam, what = hit
            reasons.append(f"references {sym} ({what}: {fam.why})")
        elif use_allowlist and not allowlist.allowed(sym, task.language):
            reasons.append(f"references {sym} (not on the allowlist)")
            unlisted = True
    if unlisted:
        reasons.append(allowlist.why_not(task.language))
    return reasons


def check_library(so_info, task):
    """Reasons from the linked shared library: what it loads and what it exports."""
    fams = dl.families(task.denylist) + dl.ALWAYS
    reasons = []
    for lib in so_info.needed:
        fam = dl.match_library(lib, fams)
        if fam:
            reasons.append(f"links {lib} ({fam.why})")
    for path in so_info.rpath:
        reasons.append(f"sets a library search path {path!r}")
    for sym in so_info.exported():
        if sym == task.entry or sym in dl.TOOLCHAIN_EXPORTS:
            continue
        if not sym.startswith("_Z"):
            reasons.append(f"exports the C symbol {sym}: only the entry point {task.entry} may have C "
                           f"linkage (make helpers static); exported C names could interpose the "
                           f"runtime or timers")
        elif dl.FORBIDDEN_CXX_EXPORTS.match(sym):
            reasons.append(f"defines {sym} (operator new/delete or the C++ ABI): not allowed")
    return reasons


def entry_problem(so_info, task):
    """A compile-level problem: the library must export the task's entry point as a function."""
    for sym in so_info.symbols:
        if sym.name == task.entry and sym.defined and sym.binding != "local" and sym.visibility in (0, 3):
            if sym.type != "func":
                return f"{task.entry} is exported but is not a function"
            return None
    return (f"the library does not export {task.entry}: declare it extern \"C\" with the signature in "
            f"task.yaml")
