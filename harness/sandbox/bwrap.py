"""Run a command in a bubblewrap (`bwrap`) sandbox that sees the toolchain and nothing else it is not given.

Used for the compiler (build/compile.py) and the candidate's process (the executor): either may be driven by
code the candidate wrote (a header trick, `.incbin`, a constructor), so neither may see the checkout
(the harness, the task's reference), the data dir (other runs, the compile cache and its index) or the
network. What the sandbox shows:

- read-only: /usr (and the merged-/usr links /bin, /lib, /lib64, /sbin), what the dynamic loader
  reads in /etc, /etc/alternatives, Python's prefixes and site directories (torch, numpy, yaml), the
  CUDA toolkit; a directory among these that contains the checkout or the data dir has them hidden
  under an empty tmpfs;
- a fresh /proc (own PID namespace: no host process is visible), a minimal /dev, a private /tmp;
- /dev/nvidia* (and /sys, read-only, which the CUDA driver reads) when the host has them;
- exactly the paths the caller binds, nothing else.

It runs with every namespace unshared (no network unless asked), a cleared environment, no
capabilities, its own session (no TIOCSTI into the harness's terminal) and dies with its parent; when
its PID 1 exits the kernel kills everything left in it, so nothing started inside outlives the call.
"""

import functools
import glob
import importlib.util
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
_LOADER_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives")
_MERGED_USR = ("/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin")


class SandboxError(RuntimeError):
    """The sandbox could not be set up as asked (a bind that does not exist, bwrap missing)."""


def bwrap_path():
    return shutil.which("bwrap") or ("/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None)


@functools.lru_cache(maxsize=None)
def available():
    """(True, "bwrap 0.8.0") when a trivial sandbox runs here, else (False, why and how to fix it).

    Probed once per process: a missing bwrap, or a host that forbids user/PID namespaces (some
    container runtimes), both show here rather than as a failing compile."""
    path = bwrap_path()
    if path is None:
        return False, ("bubblewrap (bwrap) is not installed: apt-get install bubblewrap (the GPU host "
                       "gets it from the carried .deb)")
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        probe = subprocess.run(wrap(["/bin/sh", "-c", "exit 0"]), capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired, SandboxError) as exc:
        return False, f"bwrap cannot run here: {exc}"
    if probe.returncode != 0:
        tail = (probe.stderr or probe.stdout).strip().splitlines()[-1:] or ["no output"]
        return False, f"bwrap cannot create a sandbox on this host (exit {probe.returncode}): {tail[0]}"
    return True, version or "bwrap"


def protected_paths():
    """What no sandbox may see even inside a bound toolchain directory: the checkout and the data dir."""
    data = os.environ.get("KERNELSEEK_DATA_DIR") or ".kernelseek"
    return [str(REPO), os.path.realpath(data)]


def _python_dirs():
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    try:
        dirs.update(site.getsitepackages())
        dirs.add(site.getusersitepackages())
    except AttributeError:   # a virtualenv's old site.py lacks these
        pass
    for name in ("torch", "numpy", "yaml"):
        spec = importlib.util.find_spec(name)   # finds the package without importing it
        if spec is not None and spec.origin:
            dirs.add(str(Path(spec.origin).resolve().parent.parent))
    return dirs


def _cuda_dirs():
    dirs = set()
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs.add(os.environ[var])
    for nvcc in (os.environ.get("KERNELSEEK_NVCC"), shutil.which("nvcc")):
        if nvcc and shutil.which(nvcc):
            dirs.add(str(Path(shutil.which(nvcc)).resolve().parent.parent))
    dirs.update(glob.glob("/usr/local/cuda*"))
    cxx = os.environ.get("KERNELSEEK_CXX")
    if cxx and shutil.which(cxx):
        dirs.add(str(Path(shutil.which(cxx)).resolve().parent.parent))
    return dirs


def toolchain_dirs():
    """Read-only directories every sandbox gets (real paths, outermost only, existing ones)."""
    candidates = {"/usr"} | _python_dirs() | _cuda_dirs()
    real = set()
    for d in candidates:
        if d and os.path.exists(d):
            real.add(os.path.realpath(d))
            if os.path.islink(d):
                real.add(d)   # /usr/local/cuda -> cuda-12.8: both names resolve inside
    out = []
    for d in sorted(real, key=len):
        if d == "/" or any(_within(d, o) for o in out if not os.path.islink(o)):
            continue
        out.append(d)
    return out


def _within(path, parent):
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _bind_pairs(binds, what):
    pairs = []
    for b in binds:
        src, dest = (b, b) if isinstance(b, (str, os.PathLike)) else b
        src, dest = os.fspath(src), os.fspath(dest)
        if not os.path.exists(src):
            raise SandboxError(f"{what} {src} does not exist")
        pairs.append((os.path.realpath(src), dest))
    return pairs


def wrap(argv, *, ro_binds=(), rw_binds=(), dev_binds=(), env=None, cwd=None, network=False, gpu=None):
    """The bwrap argv that runs `argv` sandboxed.

    Binds are paths (same inside) or (host path, path inside) pairs. `env` is the whole environment
    inside (PATH, LANG and HOME=/tmp are defaults it may override). `gpu`: bind /dev/nvidia* and
    /sys read-only; None means "when the host has /dev/nvidiactl". File descriptors are inherited by
    bwrap and kept open for the command: pass them with popen(pass_fds=...)."""
    path = bwrap_path()
    if path is None:
        raise SandboxError(available()[1])
    args = [path, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if network:
        args.append("--share-net")
    # The private /tmp first: a bind below /tmp (a build dir, a test's toolchain) lands on top of it.
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for d in toolchain_dirs():
        args += ["--ro-bind", d, d]
    for p in _MERGED_USR:   # keep the host's layout: links on a merged-/usr host, directories otherwise
        if os.path.islink(p):
            args += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p) and not any(_within(p, d) for d in toolchain_dirs()):
            args += ["--ro-bind", p, p]
    for p in _LOADER_FILES:
        if os.path.exists(p):
            args += ["--ro-bind", p, p]
    bound = toolchain_dirs()
    for p in protected_paths():   # hidden even where a toolchain directory contains it
        if os.path.isdir(p) and any(_within(p, d) for d in bound):
            args += ["--tmpfs", p]
    if gpu is None:
        gpu = os.path.exists("/dev/nvidiactl")
    if gpu:
        for dev in sorted(glob.glob("/dev/nvidia*")):
            args += ["--dev-bind", dev, dev]
        if os.path.isdir("/sys"):
            args += ["--ro-bind", "/sys", "/sys"]
    for src, dest in _bind_pairs(ro_binds, "read-only bind"):
        args += ["--ro-bind", src, dest]
    for src, dest in _bind_pairs(rw_binds, "writable bind"):
        args += ["--bind", src, dest]
    for src, dest in _bind_pairs(dev_binds, "device bind"):
        args += ["--dev-bind", src, dest]
    full_env = {"PATH": DEFAULT_PATH, "LANG": "C.UTF-8", "HOME": "/tmp"}
    full_env.update(env or {})
    args.append("--clearenv")
    for key, value in full_env.items():
        args += ["--setenv", key, str(value)]
    if cwd is not None:
        args += ["--chdir", os.fspath(cwd)]
    return args + ["--", *map(os.fspath, argv)]


def popen(argv, *, pass_fds=(), ro_binds=(), rw_binds=(), dev_binds=(), env=None, cwd=None, network=False,
          gpu=None, **kwargs):
    """subprocess.Popen of `argv` in the sandbox; `pass_fds` stay open inside under the same numbers
    (every other descriptor of the caller is closed)."""
    argv = wrap(argv, ro_binds=ro_binds, rw_binds=rw_binds, dev_binds=dev_binds, env=env, cwd=cwd,
                network=network, gpu=gpu)
    return subprocess.Popen(argv, pass_fds=tuple(pass_fds), close_fds=True, **kwargs)


def run(argv, *, timeout=None, ro_binds=(), rw_binds=(), dev_binds=(), env=None, cwd=None, network=False,
        gpu=None, pass_fds=()):
    """Run `argv` in the sandbox to completion: CompletedProcess with text stdout/stderr. On a timeout
    the sandbox (and everything in it) is killed before subprocess.TimeoutExpired is raised."""
    proc = popen(argv, pass_fds=pass_fds, ro_binds=ro_binds, rw_binds=rw_binds, dev_binds=dev_binds, env=env,
                 cwd=cwd, network=network, gpu=gpu, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True, errors="replace")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()   # bwrap is PID 1's parent: with --die-with-parent the whole sandbox goes with it
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
