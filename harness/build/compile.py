"""Compile one kernel source into a shared library, in a sandbox, through a verified cache.

Two steps, object then library, so that the binary checks can read the candidate's own undefined
symbols in the object: once linked, nvcc's static CUDA runtime adds its own references (dlopen,
open, pthread_create, ...) that the candidate must not be blamed for, nor hide behind.

The compiler runs inside the sandbox (sandbox/bwrap.py): it sees the toolchain, the source file and an
empty output directory, nothing else (no checkout, data dir, cache, other runs' files, network), so
no spelling of an include, `.incbin` or pragma can read what it should not. The files it did read
(`-H`, `-MD`) are checked (includes.py) and a build that read anything but system headers is refused
with its log withheld. Cache key: source bytes, language, flags, compiler version(s), harness
version; entries are verified against an index on every load (cache.py) and the ELF
information for the binary checks is read from the verified bytes each time, never from meta.json.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import HARNESS_VERSION
from ..errors import EnvironmentProblem, HarnessError
from ..sandbox import bwrap
from . import denylist as dl
from . import headers, includes
from .cache import CompileCache
from .sources import SINGLE_NAME, as_files, is_folder, sources_of
from .elf import ElfError, ElfInfo, parse_elf
from .ptxas import parse_ptxas

COMPILE_TIMEOUT_S = 300
MAX_LOG_CHARS = 20000
BUILD_DIR = "/tmp/build"     # the build directory as the sandboxed compiler sees it
SRC_DIR = "src"              # a folder candidate's files, under the build directory
_versions = {}


@dataclass
class Build:
    ok: bool                 # compiled and linked
    seconds: float = 0.0
    log: str = ""
    ptxas: dict = field(default_factory=dict)
    obj: ElfInfo = None      # the first object (a single-file candidate's only one)
    lib: ElfInfo = None
    objs: list = field(default_factory=list)   # every object of the build (a folder: one per source)
    cached: bool = False
    key: str = ""
    commands: list = field(default_factory=list)
    refused: list = field(default_factory=list)   # reasons: the compiler read what it may not
    notes: list = field(default_factory=list)     # for the result's messages (no sandbox, a bad entry)
    library: bytes = field(default=None, repr=False)   # the verified kernel.so

    def write_library(self, dest):
        """Write the verified library to `dest` (the bytes that were checked, not a cache path)."""
        if self.library is None:
            raise HarnessError("no library to write: the build failed")
        Path(dest).write_bytes(self.library)
        os.chmod(dest, 0o755)


def default_cache_dir():
    return Path(os.environ.get("KERNELSEEK_DATA_DIR") or ".kernelseek") / "compile-cache"


def _tool(language):
    if language == "cuda":
        path = os.environ.get("KERNELSEEK_NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    else:
        path = os.environ.get("KERNELSEEK_CXX") or shutil.which("g++") or "g++"
    if not (os.path.isfile(path) or shutil.which(path)):
        raise EnvironmentProblem(f"compiler not found: {path} (set KERNELSEEK_NVCC / KERNELSEEK_CXX)")
    return path


def compiler_version(language):
    """Version text of the compiler(s) a language uses; nvcc's also includes its host compiler."""
    if language not in _versions:
        tools = [_tool(language)] + ([_tool("cpp")] if language == "cuda" else [])
        parts = []
        for tool in tools:
            try:
                out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise EnvironmentProblem(f"cannot run {tool} --version: {exc}") from None
            parts.append(f"{tool}: {out.stdout.strip()}")
        _versions[language] = "\n".join(parts)
    return _versions[language]


def arch_flags(architectures):
    """sm_90 -> -gencode=arch=compute_90a,code=sm_90a: the 'a' variants (Hopper and newer) enable the
    architecture-specific instructions (wgmma, setmaxnreg, ...) that a kernel for one GPU may use."""
    flags = []
    for arch in architectures:
        num = arch[3:]
        if num.isdigit() and int(num) >= 90:
            num += "a"
        flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
    return flags


def include_flags(task):
    """-I for the task's own header folders and its header packs (build/headers.py), host paths: the
    sandbox shows each read-only at the same path."""
    return [f"-I{d}" for d in list(map(str, task.include_dirs)) + headers.include_dirs(task.headers)]


def plan(task, files):
    """[(source, object, depfile)] for the build: one file as kernel.cpp/.cu -> kernel.o (as ever), a
    folder's sources src/<path> -> kernel<i>.o."""
    if list(files) == [SINGLE_NAME[task.language]] :
        return [(SINGLE_NAME[task.language], "kernel.o", "kernel.d")]
    return [(f"{SRC_DIR}/{name}", f"kernel{i}.o", f"kernel{i}.d") for i, name in enumerate(sources_of(files, task.language))]


def commands(task, steps, folder=False):
    """One compile per (source, object, depfile) of `steps`, then the link of every object."""
    extra = list(task.compile_flags)
    inc = include_flags(task) + ([f"-I{BUILD_DIR}/{SRC_DIR}"] if folder else [])
    objs = [obj for _, obj, _ in steps]
    if task.language == "cuda":
        nvcc, gencode = _tool("cuda"), arch_flags(task.architectures)
        base = [nvcc, "-O3", "-std=c++17", "-Xcompiler", "-fPIC", *gencode, "-Xptxas", "-v", *extra, *inc]
        return ([base + ["-MD", "-MF", dep, "-c", src, "-o", obj] for src, obj, dep in steps]
                + [[nvcc, "-shared", *gencode, *extra, *objs, "-o", "kernel.so"]])
    cxx = _tool("cpp")
    # -save-temps=obj keeps kernel.s: the assembly as the assembler read it, inline asm included
    return ([[cxx, "-O2", "-std=c++17", "-fPIC", *extra, *inc, "-H", "-MD", "-MF", dep, "-save-temps=obj",
              "-c", src, "-o", obj] for src, obj, dep in steps]
            + [[cxx, "-shared", "-fPIC", *extra, *objs, "-o", "kernel.so"]])


def cache_key(task, source):
    """Every file of the candidate (one file: its bytes, as before folders), the language, flags,
    architectures, compilers and harness version, and the task's include folders and header packs
    (their every file)."""
    h = hashlib.sha256()
    for part in (HARNESS_VERSION, task.language, json.dumps(task.compile_flags),
                 json.dumps(task.architectures), compiler_version(task.language)):
        h.update(part.encode())
        h.update(b"\0")
    extra_dirs = list(map(str, getattr(task, "include_dirs", []))) + headers.include_dirs(getattr(task, "headers", []))
    for d in extra_dirs:
        h.update(f"include {d} {headers.tree_digest(d)}".encode() + b"\0")
    if is_folder(source):
        for name in sorted(source):
            h.update(f"file {name} {len(source[name])}".encode() + b"\0" + source[name])
    else:
        h.update(source)
    return h.hexdigest()[:32]


def build(task, source, cache_dir=None, namespace="candidate"):
    """Compile `source` (bytes: one file; {path: bytes}: a folder) for `task`; returns a Build (ok=False
    with the log on failure).

    `namespace`: "baseline" for the task's own baseline, kept apart from candidates' entries."""
    cache = CompileCache(cache_dir or default_cache_dir())
    key = cache_key(task, source)
    files, _ = cache.load(namespace, key)
    cached, notes = True, []
    if files is None:
        with cache.locked(namespace, key):   # one builder per entry; the others wait and then load it
            files, why = cache.load(namespace, key)
            if files is None:
                if why:
                    notes.append(f"compile cache entry {namespace}/{key} failed verification ({why}): "
                                 f"discarded and built again")
                cache.discard(namespace, key)
                files = _compile(task, source)
                cache.store(namespace, key, files)
                cached = False
    return _from_files(files, key, cached, notes)


def _from_files(files, key, cached, notes):
    try:
        meta = json.loads(files["meta.json"])
    except (KeyError, ValueError) as exc:
        raise HarnessError(f"compile cache entry {key}: meta.json is unreadable: {exc}") from None
    b = Build(ok=meta["ok"], seconds=meta["seconds"], log=meta["log"], ptxas=meta.get("ptxas") or {},
              cached=cached, key=key, commands=meta.get("commands", []), refused=meta.get("refused", []),
              notes=notes + meta.get("notes", []))
    if b.ok:
        try:   # read from the verified bytes on every load: meta.json says nothing about symbols
            names = sorted((n for n in files if n.endswith(".o")), key=lambda n: (len(n), n))
            b.objs = [parse_elf(files[n], n) for n in names]
            b.obj = b.objs[0]
            b.lib = parse_elf(files["kernel.so"], "kernel.so")
            b.library = files["kernel.so"]
        except (KeyError, ElfError, IndexError) as exc:
            b.ok, b.obj, b.objs, b.lib, b.library = False, None, [], None, None
            b.log += f"\ncannot read the compiled binary: {exc}"
    return b


def _run(cmd, work, use_sandbox, language, extra_ro=()):
    if not use_sandbox:
        return subprocess.run(cmd, cwd=work, capture_output=True, text=True, errors="replace",
                              timeout=COMPILE_TIMEOUT_S)
    tool_dirs = [os.path.dirname(shutil.which(_tool(language)) or "")] + ([os.path.dirname(
        shutil.which(_tool("cpp")) or "")] if language == "cuda" else [])
    path = ":".join([d for d in tool_dirs if d] + [bwrap.DEFAULT_PATH])
    # The toolkit where nvcc says it is (a wrapper script's directory says nothing about it).
    toolkit = includes.cuda_toolkit_roots(shutil.which(_tool("cuda")) or _tool("cuda")) if language == "cuda" \
        else ()
    return bwrap.run(cmd, timeout=COMPILE_TIMEOUT_S, rw_binds=[(work, BUILD_DIR)], cwd=BUILD_DIR,
                       ro_binds=tuple(toolkit) + tuple(extra_ro), env={"PATH": path, "TMPDIR": "/tmp"})


def _roots(language, extra=()):
    roots = includes.system_include_dirs(_tool("cpp"))
    if language == "cuda":
        roots += includes.cuda_include_dirs(shutil.which(_tool("cuda")) or _tool("cuda"))
    return tuple(roots) + tuple(os.path.realpath(d) for d in extra)


def _compile(task, source):
    """Run the compiler on `source` in a fresh directory outside the cache; {name: bytes} to store."""
    t0 = time.monotonic()
    files = as_files(source, task.language)
    folder = is_folder(source)
    steps = plan(task, files)
    use_sandbox, why = bwrap.available()
    notes = [] if use_sandbox else [f"compiled without a sandbox: {why}"]
    cmds = commands(task, steps, folder)
    extra_dirs = list(map(str, task.include_dirs)) + headers.include_dirs(task.headers)
    work = Path(tempfile.mkdtemp(prefix="kernelseek-build-"))
    try:
        own = set()
        for name, data in files.items():
            dest = work / (f"{SRC_DIR}/{name}" if folder else name)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
            own.add(f"{SRC_DIR}/{name}" if folder else name)
        meta, log_parts, refused, ok = {}, [], [], True
        for i, cmd in enumerate(cmds):
            compiling = i < len(steps)
            try:
                proc = _run(cmd, work, use_sandbox, task.language, extra_dirs)
            except subprocess.TimeoutExpired:
                log_parts.append(f"$ {' '.join(cmd)}\ncompiler timed out after {COMPILE_TIMEOUT_S} s")
                ok = False
                break
            output = f"{proc.stdout}{proc.stderr}"
            listed = True
            if compiling:
                _, obj, dep = steps[i]
                output, refused = _check_reads(task, work, own, proc, dep, extra_dirs)
                listed = (work / dep).is_file()
                if proc.returncode == 0 and not listed:   # never use a build whose includes went unchecked
                    output += f"\nthe compiler wrote no list of the files it read ({dep}): cannot check them"
                if proc.returncode == 0 and not refused:
                    refused = _assembler_reads(work / (obj[:-2] + ".s"))
            log_parts.append(f"$ {' '.join(cmd)}\n{output}".rstrip())
            if refused or proc.returncode != 0 or not listed:
                ok = False
                break
        log = "\n".join(log_parts)
        meta = {"ok": ok, "seconds": round(time.monotonic() - t0, 3), "log": _truncate(log),
                "ptxas": parse_ptxas(log) if task.language == "cuda" and not refused else {},
                "commands": cmds, "refused": refused, "notes": notes}
        files_out = {"meta.json": json.dumps(meta).encode()}
        if ok:
            for name in [obj for _, obj, _ in steps] + ["kernel.so"]:
                path = work / name
                if path.is_symlink() or not path.is_file():
                    raise HarnessError(f"the compiler did not write {name} as a plain file")
                files_out[name] = path.read_bytes()
        return files_out
    finally:
        shutil.rmtree(work, ignore_errors=True)


_ASM_READS = re.compile(r"^\s*(?:[\w.$]+:\s*)*\.(incbin|include)\b(.*)$", re.M)


def _assembler_reads(asm_path):
    """Reasons from the generated assembly: `.incbin`/`.include` make the assembler read a file (the
    source check sees only literal spellings; string pasting or macros build them, kernel.s has the
    result). Inside the sandbox only toolchain files could be read; without it, any file."""
    if not asm_path.is_file() or asm_path.is_symlink():
        return []
    text = asm_path.read_text(errors="replace")
    return [f"inline assembly .{m.group(1)}{m.group(2).rstrip()}: the assembler would read a file; the "
            f"candidate is exactly one file" for m in _ASM_READS.finditer(text)][:3]


def _check_reads(task, work, own_names, proc, depfile="kernel.d", extra_dirs=()):
    """(log to show, refusal reasons) for a compile step, from the files the compiler read. `own_names`:
    the candidate's files as written in the build directory; `extra_dirs`: the task's include folders
    and header packs, read like system headers."""
    output = f"{proc.stdout}{proc.stderr}"
    heads = []
    if task.language != "cuda":
        heads, output = includes.parse_h(proc.stderr)
        output = f"{proc.stdout}{output}"
    dep = work / depfile
    deps = includes.parse_depfile(dep.read_text(errors="replace")) if dep.is_file() and not dep.is_symlink() \
        else []
    depth_unknown = None if task.language == "cuda" else 0   # g++'s -H gives depths; nvcc's list does not
    # As spelled (src/detail/../a.h): normalised, so a folder's own files are known by one name.
    files = [(depth, os.path.normpath(path)) for depth, path in heads + [(depth_unknown, d) for d in deps]]
    roots = _roots(task.language, extra_dirs)
    own = set()
    for name in own_names:
        own |= {name, f"{BUILD_DIR}/{name}", str(work / name)}
    fams = dl.families(task.denylist) + dl.ALWAYS
    refused = includes.check(files, roots, own, fams, inside_dir=BUILD_DIR, host_dir=str(work))
    if refused:
        return ("[the compiler's output is withheld: it read files other than the candidate and the "
                "system headers, and its messages would show their lines]"), refused

    def allowed_file(name):
        if name in own or os.path.normpath(os.path.join(BUILD_DIR, name)) in own:
            return True
        return includes.root_of(os.path.realpath(name), roots) is not None
    return includes.filter_log(output, allowed_file), []


def _truncate(text):
    if len(text) <= MAX_LOG_CHARS:
        return text
    return text[:MAX_LOG_CHARS] + f"\n... [{len(text) - MAX_LOG_CHARS} more characters]"
