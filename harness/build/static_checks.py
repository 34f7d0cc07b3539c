"""Checks on the candidate before it runs: its source text, then its compiled object and library.

Each check returns a list of human-readable reasons; an empty list means the candidate passed.
"""

import re

from . import allowlist
from . import denylist as dl

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


def check_source(data, task):
    """Reasons to refuse the candidate's source (bytes) before compiling it."""
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
            reasons.append(f"line {lineno}: #{directive} is not allowed: the candidate is exactly one "
                           f"file and includes only system headers")
        elif directive == "include":
            reasons.extend(_check_include(lineno, rest, fams))
    if ".incbin" in code:
        reasons.append("inline assembly .incbin is not allowed: the candidate is exactly one file")
    m = _RAW_ASM.search(code)
    if m:
        line = code.count("\n", 0, m.start()) + 1
        reasons.append(f"line {line}: {m.group(0)!r}: raw system calls are not allowed")
    return reasons


def _check_include(lineno, rest, fams):
    if rest.startswith('"'):
        return [f"line {lineno}: #include {rest}: quoted includes are not allowed: the candidate is "
                f"exactly one file (include system headers with <...>)"]
    if not rest.startswith("<") or ">" not in rest:
        return [f"line {lineno}: #include {rest}: computed includes are not allowed"]
    path = rest[1:rest.index(">")].strip()
    if path.startswith("/") or ".." in path.split("/"):
        return [f"line {lineno}: #include <{path}>: absolute or parent-relative include paths are not "
                f"allowed"]
    fam = dl.match_header(path, fams)
    if fam:
        return [f"line {lineno}: #include <{path}>: forbidden header ({fam.why})"]
    return []


def check_object(obj_info, task, use_allowlist=True):
    """Reasons from the candidate's object file: each undefined symbol must be on the allowlist
    (allowlist.py); a denylisted family is named first, with its own reason. `use_allowlist=False`
    (tests only) leaves the denylist alone, to show that the run-time defences behind it still hold."""
    fams = dl.families(task.denylist) + dl.ALWAYS
    reasons, unlisted = [], False
    for sym in obj_info.undefined():
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
