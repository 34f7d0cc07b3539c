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
from . import includes
from .cache import CompileCache
from .elf import ElfError, ElfInfo, parse_elf
from .ptxas import parse_ptxas

COMPILE_TIMEOUT_S = 300
MAX_LOG_CHARS = 20000
BUILD_DIR = "/tmp/build"     # the build directory as the sandboxed compiler sees it
_versions = {}


@dataclass
class Build:
    ok: bool                 # compiled and linked
    seconds: float = 0.0
    log: str = ""
    ptxas: dict = field(default_factory=dict)
    obj: ElfInfo = None
    lib: ElfInfo = None
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


def commands(task, src_name):
    extra = list(task.compile_flags)
    if task.language == "cuda":
        nvcc, gencode = _tool("cuda"), arch_flags(task.architectures)
        base = [nvcc, "-O3", "-std=c++17", "-Xcompiler", "-fPIC", *gencode, "-Xptxas", "-v", *extra]
        return [base + ["-MD", "-MF", "kernel.d", "-c", src_name, "-o", "kernel.o"],
                [nvcc, "-shared", *gencode, *extra, "kernel.o", "-o", "kernel.so"]]
    cxx = _tool("cpp")
    # -save-temps=obj keeps kernel.s: the assembly as the assembler read it, inline asm included
    return [[cxx, "-O2", "-std=c++17", "-fPIC", *extra, "-H", "-MD", "-MF", "kernel.d", "-save-temps=obj",
             "-c", src_name, "-o", "kernel.o"],
            [cxx, "-shared", "-fPIC", *extra, "kernel.o", "-o", "kernel.so"]]


def cache_key(task, source):
    h = hashlib.sha256()
    for part in (HARNESS_VERSION, task.language, json.dumps(task.compile_flags),
                 json.dumps(task.architectures), compiler_version(task.language)):
        h.update(part.encode())
        h.update(b"\0")
    h.update(source)
    return h.hexdigest()[:32]



def build(task, source, cache_dir=None, namespace="candidate"):
    """Compile `source` (bytes) for `task`; returns a Build (ok=False with the log on failure).

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
            b.obj = parse_elf(files["kernel.o"], "kernel.o")
            b.lib = parse_elf(files["kernel.so"], "kernel.so")
            b.library = files["kernel.so"]
        except (KeyError, ElfError) as exc:
            b.ok, b.obj, b.lib, b.library = False, None, None, None
            b.log += f"\ncannot read the compiled binary: {exc}"
    return b


def _run(cmd, work, use_sandbox, language):
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
                       ro_binds=toolkit, env={"PATH": path, "TMPDIR": "/tmp"})


def _roots(language):
    roots = includes.system_include_dirs(_tool("cpp"))
    if language == "cuda":
        roots += includes.cuda_include_dirs(shutil.which(_tool("cuda")) or _tool("cuda"))
    return roots


def _compile(task, source):
    """Run the compiler on `source` in a fresh directory outside the cache; {name: bytes} to store."""
    t0 = time.monotonic()
    src_name = "kernel.cu" if task.language == "cuda" else "kernel.cpp"
    use_sandbox, why = bwrap.available()
    notes = [] if use_sandbox else [f"compiled without a sandbox: {why}"]
    cmds = commands(task, src_name)
    work = Path(tempfile.mkdtemp(prefix="kernelseek-build-"))
    try:
        (work / src_name).write_bytes(source)
        meta, log_parts, refused, ok = {}, [], [], True
        for i, cmd in enumerate(cmds):
            try:
                proc = _run(cmd, work, use_sandbox, task.language)
            except subprocess.TimeoutExpired:
                log_parts.append(f"$ {' '.join(cmd)}\ncompiler timed out after {COMPILE_TIMEOUT_S} s")
                ok = False
                break
            output = f"{proc.stdout}{proc.stderr}"
            listed = True
            if i == 0:
                output, refused = _check_reads(task, work, src_name, proc)
                listed = (work / "kernel.d").is_file()
                if proc.returncode == 0 and not listed:   # never use a build whose includes went unchecked
                    output += "\nthe compiler wrote no list of the files it read (kernel.d): cannot check them"
                if proc.returncode == 0 and not refused:
                    refused = _assembler_reads(work / "kernel.s")
            log_parts.append(f"$ {' '.join(cmd)}\n{output}".rstrip())
            if refused or proc.returncode != 0 or not listed:
                ok = False
                break
        log = "\n".join(log_parts)
        meta = {"ok": ok, "seconds": round(time.monotonic() - t0, 3), "log": _truncate(log),
                "ptxas": parse_ptxas(log) if task.language == "cuda" and not refused else {},
                "commands": cmds, "refused": refused, "notes": notes}
        files = {"meta.json": json.dumps(meta).encode()}
        if ok:
            for name in ("kernel.o", "kernel.so"):
                path = work / name
                if path.is_symlink() or not path.is_file():
                    raise HarnessError(f"the compiler did not write {name} as a plain file")
                files[name] = path.read_bytes()
        return files
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


def _check_reads(task, work, src_name, proc):
    """(log to show, refusal reasons) for the compile step, from the files the compiler read."""
    output = f"{proc.stdout}{proc.stderr}"
    heads = []
    if task.language != "cuda":
        heads, output = includes.parse_h(proc.stderr)
        output = f"{proc.stdout}{output}"
    dep = work / "kernel.d"
    deps = includes.parse_depfile(dep.read_text(errors="replace")) if dep.is_file() and not dep.is_symlink() \
        else []
    depth_unknown = None if task.language == "cuda" else 0   # g++'s -H gives depths; nvcc's list does not
    files = heads + [(depth_unknown, d) for d in deps]
    roots = _roots(task.language)
    own = {src_name, f"{BUILD_DIR}/{src_name}", str(work / src_name)}
    fams = dl.families(task.denylist) + dl.ALWAYS
    refused = includes.check(files, roots, own, fams, inside_dir=BUILD_DIR, host_dir=str(work))
    if refused:
        return ("[the compiler's output is withheld: it read files other than the candidate and the "
                "system headers, and its messages would show their lines]"), refused

    def allowed_file(name):
        if name in own or os.path.basename(name) == src_name and os.path.dirname(name) in ("", BUILD_DIR):
            return True
        return includes.root_of(os.path.realpath(name), roots) is not None
    return includes.filter_log(output, allowed_file), []


def _truncate(text):
    if len(text) <= MAX_LOG_CHARS:
        return text
    return text[:MAX_LOG_CHARS] + f"\n... [{len(text) - MAX_LOG_CHARS} more characters]"
