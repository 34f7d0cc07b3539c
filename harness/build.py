"""Compile one kernel source into a shared library, through a content-addressed cache.

Two steps, object then library, so that the binary checks can read the candidate's own undefined
symbols in the object: once linked, nvcc's static CUDA runtime adds its own references (dlopen,
open, pthread_create, ...) that the candidate must not be blamed for, nor hide behind.

Cache key: source bytes, language, flags, compiler version(s), harness version. Each build runs in a
fresh temporary directory inside the cache and is renamed into place atomically, so concurrent
evaluations never see a half-written entry. Failed compiles are cached too (same input, same log).
"""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import HARNESS_VERSION
from .elf import ElfError, ElfInfo, Symbol, read_elf
from .errors import EnvironmentProblem, HarnessError
from .ptxas import parse_ptxas

COMPILE_TIMEOUT_S = 300
MAX_LOG_CHARS = 20000
_versions = {}


@dataclass
class Build:
    ok: bool                 # compiled and linked
    so_path: Path = None
    seconds: float = 0.0
    log: str = ""
    ptxas: dict = field(default_factory=dict)
    obj: ElfInfo = None
    lib: ElfInfo = None
    cached: bool = False
    key: str = ""
    commands: list = field(default_factory=list)


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
        return [base + ["-c", src_name, "-o", "kernel.o"],
                [nvcc, "-shared", *gencode, *extra, "kernel.o", "-o", "kernel.so"]]
    cxx = _tool("cpp")
    return [[cxx, "-O2", "-std=c++17", "-fPIC", *extra, "-c", src_name, "-o", "kernel.o"],
            [cxx, "-shared", "-fPIC", *extra, "kernel.o", "-o", "kernel.so"]]


def cache_key(task, source):
    h = hashlib.sha256()
    for part in (HARNESS_VERSION, task.language, json.dumps(task.compile_flags),
                 json.dumps(task.architectures), compiler_version(task.language)):
        h.update(part.encode())
        h.update(b"\0")
    h.update(source)
    return h.hexdigest()[:32]


def build(task, source, cache_dir=None):
    """Compile `source` (bytes) for `task`; returns a Build (ok=False with the log on failure)."""
    cache_dir = Path(cache_dir or default_cache_dir()).resolve()
    cache_dir.mkdir(parents=True, exist_ok=True)
    key = cache_key(task, source)
    final = cache_dir / key
    if final.exists():
        result = _load(final, key)
        if result is not None:
            return result
        shutil.rmtree(final, ignore_errors=True)   # unreadable (e.g. edited by hand): build it again
    work = Path(tempfile.mkdtemp(prefix=f".build-{key[:8]}-", dir=cache_dir))
    try:
        src_name = "kernel.cu" if task.language == "cuda" else "kernel.cpp"
        (work / src_name).write_bytes(source)
        meta = _compile(task, work, src_name)
        (work / "meta.json").write_text(json.dumps(meta))
        try:
            os.rename(work, final)   # atomic: readers see a complete entry or none
        except OSError:
            shutil.rmtree(work, ignore_errors=True)   # another evaluation built it first
        work = None
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    result = _load(final, key)
    if result is None:
        raise HarnessError(f"compile cache entry {final} is unreadable after building it")
    result.cached = False
    return result


def _compile(task, work, src_name):
    t0 = time.monotonic()
    cmds = commands(task, src_name)
    log_parts, ok = [], True
    for cmd in cmds:
        try:
            proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log_parts.append(f"$ {' '.join(cmd)}\ncompiler timed out after {COMPILE_TIMEOUT_S} s")
            ok = False
            break
        log_parts.append(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}".rstrip())
        if proc.returncode != 0:
            ok = False
            break
    log = "\n".join(log_parts)
    meta = {"ok": ok, "seconds": round(time.monotonic() - t0, 3), "log": _truncate(log),
            "ptxas": parse_ptxas(log) if task.language == "cuda" else {}, "commands": cmds}
    if ok:
        try:
            meta["obj"] = _elf_to_json(read_elf(work / "kernel.o"))
            meta["lib"] = _elf_to_json(read_elf(work / "kernel.so"))
        except ElfError as exc:
            meta.update(ok=False, log=meta["log"] + f"\ncannot read the compiled binary: {exc}")
    return meta


def _truncate(text):
    if len(text) <= MAX_LOG_CHARS:
        return text
    return text[:MAX_LOG_CHARS] + f"\n... [{len(text) - MAX_LOG_CHARS} more characters]"


def _elf_to_json(info):
    return {"kind": info.kind, "needed": info.needed, "rpath": info.rpath,
            "symbols": [[s.name, s.binding, s.type, s.defined, s.visibility] for s in info.symbols
                        if s.binding != "local" and s.name]}


def _elf_from_json(data):
    return ElfInfo(kind=data["kind"], needed=data["needed"], rpath=data["rpath"],
                   symbols=[Symbol(*row) for row in data["symbols"]])


def _load(entry, key):
    try:
        meta = json.loads((entry / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    so_path = entry / "kernel.so"
    if meta["ok"] and not so_path.is_file():
        return None
    return Build(ok=meta["ok"], so_path=so_path if meta["ok"] else None, seconds=meta["seconds"],
                 log=meta["log"], ptxas=meta.get("ptxas") or {},
                 obj=_elf_from_json(meta["obj"]) if meta.get("obj") else None,
                 lib=_elf_from_json(meta["lib"]) if meta.get("lib") else None,
                 cached=True, key=key, commands=meta.get("commands", []))
