"""Which files the compiler read, whether the candidate may include them, and a log that shows nothing else.

The source check reads `#include` lines as text, and text has too many spellings (`%:include`,
macros, continued lines). The compiler knows what it opened: g++'s `-H` lists every header with its
depth, and `-MD -MF` (g++ and nvcc) writes the full list. Every file read must be the candidate's own
or a header under the compiler's system include directories (or the CUDA toolkit's); the headers the
candidate includes directly must not belong to a denylisted family. Inside the sandbox other files do
not exist anyway; this check names what was tried, and keeps the log of a refused build to itself.
"""

import functools
import glob
import os
import re
import subprocess
from pathlib import Path

from . import denylist as dl

_H_LINE = re.compile(r"^(\.+) (\S.*)$")
_SEARCH_START, _SEARCH_END = "#include <...> search starts here:", "End of search list."
# A diagnostic's location: gcc `file:12:3: error`, EDG/cudafe `file(12): error`, `In file included from file:3`.
_LOCATION = re.compile(r"^(?:In file included from |\s+from )?(?P<file>[^\s:()]+?)(?:\((?P<l>\d+)\)|:\d+(?::\d+)?)[:,]")


@functools.lru_cache(maxsize=None)
def system_include_dirs(cxx):
    """The compiler's own `#include <...>` search list (real paths)."""
    try:
        out = subprocess.run([cxx, "-xc++", "-std=c++17", "-E", "-v", "-"], input="", capture_output=True,
                             text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired):
        return ()
    lines = out.splitlines()
    if _SEARCH_START not in lines:
        return ()
    dirs = []
    for line in lines[lines.index(_SEARCH_START) + 1:]:
        if line.strip() == _SEARCH_END:
            break
        path = line.strip().split(" (framework directory)")[0]
        if os.path.isdir(path):
            dirs.append(os.path.realpath(path))
    return tuple(dirs)


@functools.lru_cache(maxsize=None)
def _nvcc_dryrun(nvcc):
    try:
        return subprocess.run([nvcc, "--dryrun", "-c", "-x", "cu", "/dev/null", "-o", "/dev/null"],
                              capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired):
        return ""


def cuda_toolkit_roots(nvcc):
    """The toolkit's top directory as nvcc itself reports it (`--dryrun`'s TOP), so that a wrapper
    script or a symlinked nvcc still leads to the real toolkit."""
    tops = re.findall(r"^#\$ TOP=(\S+)", _nvcc_dryrun(nvcc), re.M)
    roots = [os.path.realpath(t) for t in tops] or [str(Path(nvcc).resolve().parent.parent)]
    return tuple(sorted({r for r in roots if os.path.isdir(r)}))


def cuda_include_dirs(nvcc):
    """The toolkit's include directories (nvcc's INCLUDES and SYSTEM_INCLUDES, and the usual places)."""
    dirs = re.findall(r'-(?:I|isystem"?\s+"?)([^"\s]+)', _nvcc_dryrun(nvcc))
    for root in map(Path, cuda_toolkit_roots(nvcc)):
        dirs += [str(root / "include")] + glob.glob(str(root / "targets" / "*" / "include"))
    return tuple(sorted({os.path.realpath(d) for d in dirs if os.path.isdir(d)}))


def parse_depfile(text):
    """Prerequisites of a make rule written by -MD/-MF (`kernel.o: a.cpp /usr/include/b.h \\ ...`)."""
    text = text.replace("\\\n", " ")
    rules = [line for line in text.splitlines() if ":" in line and not line.startswith(" ")]
    out = []
    for rule in rules:
        _target, _, deps = rule.partition(": ")
        for dep in re.split(r"(?<!\\)\s+", deps.strip()):
            if dep:
                out.append(dep.replace("\\ ", " "))
    return out


def parse_h(stderr):
    """(depth, path) for every header `-H` reported, in order; and stderr without those lines."""
    heads, rest, in_guards = [], [], False
    for line in stderr.splitlines():
        m = _H_LINE.match(line)
        if m:
            heads.append((len(m.group(1)), m.group(2)))
            in_guards = False
        elif line.startswith("Multiple include guards may be useful for:"):
            in_guards = True   # -H's closing list of headers without guards: bare paths, dropped
        elif in_guards and re.match(r"^[^\s:]+$", line):
            continue
        else:
            in_guards = False
            rest.append(line)
    return heads, "\n".join(rest)


def root_of(real, roots):
    best = None
    for r in roots:
        if real == r or real.startswith(r.rstrip("/") + "/"):
            if best is None or len(r) > len(best):
                best = r
    return best


def check(files, roots, own, fams, inside_dir=None, host_dir=None):
    """Reasons to refuse a build from the files the compiler read.

    `files`: (depth, path) pairs; depth 1 is a header the candidate included itself, None when the
    compiler does not say (then the family rule applies to every header's first path component).
    `own`: names of the candidate's own source file. Paths under `inside_dir` (the build dir as the
    sandbox sees it) are mapped to `host_dir`."""
    reasons, seen = [], set()
    # -H lists headers in order with their depth: the includer of one at depth d is the last one at
    # d - 1 (the main file at 0). A header a candidate's own file includes (a folder's header
    # including another) is held to the family rule as one the main file includes.
    own_at = {0: True}
    for depth, path in files:
        mine = path in own or os.path.basename(path) in own and os.path.dirname(path) in ("", inside_dir)
        if depth is not None and depth > 0:
            own_at[depth] = mine
            if own_at.get(depth - 1) and depth > 1:
                depth = 1     # included by one of the candidate's own files
        if mine:
            continue
        shown = path
        if inside_dir and host_dir and path.startswith(inside_dir.rstrip("/") + "/"):
            path = os.path.join(host_dir, path[len(inside_dir.rstrip("/")) + 1:])
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        root = root_of(real, roots)
        if root is None:
            reasons.append(f"#include <{shown}>: the compiler read a file outside the system headers: the "
                           f"candidate is exactly one file and includes only system headers")
            continue
        rel = os.path.relpath(real, root)
        if depth == 1:
            fam = dl.match_header_path(rel, fams)
        elif depth is None:   # libstdc++ includes <pthread.h> itself: threads are refused by symbol
            fam = dl.match_header(rel, [f for f in fams if f.name != "pthread"])
        else:
            fam = None
        if fam:
            reasons.append(f"#include <{rel}>: forbidden header ({fam.why})")
    return reasons


def filter_log(log, allowed_file):
    """The log without the lines a diagnostic in a file that is not allowed would show (its source
    lines, quoted tokens): each line belongs to the file of the last location seen before it."""
    out, keep, withheld = [], True, 0
    for line in log.splitlines():
        if line.startswith("$ "):
            keep = True
        else:
            m = _LOCATION.match(line)
            if m:
                keep = allowed_file(m.group("file"))
        if keep:
            out.append(line)
        else:
            withheld += 1
    if withheld:
        out.append(f"[{withheld} line(s) about files outside the allowed headers withheld]")
    return "\n".join(out)
