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

Issue 39, as a host that runs the service as root sees it:

- it runs as an unprivileged host uid: when this process is root, bwrap itself is started as
  KERNELSEEK_SANDBOX_UID (default 65534, "nobody") with no supplementary groups and no capabilities,
  so nothing inside is host root (bwrap started by root kept uid 0 inside, able to write host
  sysctls); bwrap then maps that uid into a user namespace of its own. Where that sandbox cannot run
  (no unprivileged user namespaces, a toolchain that uid cannot read) it runs as before, cap-dropped
  root, and `note()` says why for the result's messages;
- /proc/sys is read-only (bwrap leaves it writable when the network namespace is unshared) and no
  user namespace can be made inside (--disable-userns);
- only stdin, stdout, stderr and the descriptors the caller passes are inherited;
- `data_binds` (and read-only binds the unprivileged uid could not reach) are copied into the sandbox
  from descriptors this process opened (--ro-bind-data), so the mount table names no path of the
  evaluation's directory (the executor's files all come so); /tmp and /dev/shm are tmpfs of TMP_BYTES.
"""

import functools
import glob
import importlib.util
import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
# The unprivileged host uid (and gid) a root process starts the sandbox as (issue 39).
SANDBOX_UID_ENV = "KERNELSEEK_SANDBOX_UID"
NOBODY = 65534
# The sandbox's /tmp and /dev/shm: RAM, capped (nvcc's temporary files of a large kernel stay far below).
TMP_BYTES = 2 << 30
# A directory passed as data (each of its files copied in) holds at most this many files.
DATA_TREE_FILES = 256
SANDBOX_USER = "kernelseek"
_LOADER_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives")
_MERGED_USR = ("/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin")


class SandboxError(RuntimeError):
    """The sandbox could not be set up as asked (a bind that does not exist, bwrap missing)."""


def bwrap_path():
    return shutil.which("bwrap") or ("/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None)


@functools.lru_cache(maxsize=None)
def _version():
    path = bwrap_path()
    if path is None:
        return None
    try:
        text = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"(\d+)\.(\d+)", text)
    return (text or "bwrap"), (tuple(int(x) for x in found.groups()) if found else (0, 0))


def _probe(argv, drop):
    """(ok, why not) for one sandbox: `argv` run in it, started as `drop` ((uid, gid) or None)."""
    try:
        probe = subprocess.run(wrap(argv), capture_output=True, text=True, timeout=30,
                               **_popen_identity(drop))
    except (OSError, subprocess.TimeoutExpired, SandboxError) as exc:
        return False, f"bwrap cannot run here: {exc}"
    if probe.returncode != 0:
        tail = (probe.stderr or probe.stdout).strip().splitlines()[-1:] or ["no output"]
        return False, f"bwrap cannot create a sandbox on this host (exit {probe.returncode}): {tail[0]}"
    return True, None


@functools.lru_cache(maxsize=None)
def _setup():
    """(ok, bwrap's version or why not, the (uid, gid) to start it as or None, a note or None).

    Probed once per process: a missing bwrap, or a host that forbids user/PID namespaces (some
    container runtimes), both show here rather than as a failing compile. As root, the sandbox is
    probed as the unprivileged uid first, running this Python (which the executor needs) with the
    packages the parent has (torch): where that fails it runs as cap-dropped root, noted."""
    version = _version()
    if version is None:
        return False, ("bubblewrap (bwrap) is not installed: apt-get install bubblewrap (the GPU host "
                       "gets it from the carried .deb)"), None, None
    drop = _wanted_identity()
    if drop is not None:
        wanted = [n for n in ("torch", "numpy", "yaml") if importlib.util.find_spec(n) is not None]
        code = ("import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(n) for n in %r) else 3)"
                % (wanted,))
        ok, why = _probe([sys.executable, "-c", code], drop)
        if ok:
            return True, version[0], drop, None
        note = (f"sandboxes run as host root (capabilities dropped): uid {drop[0]} could not run one here "
                f"({why}; or it cannot read this Python's packages)")
    else:
        note = None
    ok, why = _probe(["/bin/sh", "-c", "exit 0"], None)
    if not ok:
        return False, why, None, None
    return True, version[0], None, note


def available():
    """(True, "bwrap 0.8.0") when a trivial sandbox runs here, else (False, why and how to fix it)."""
    ok, text, _, _ = _setup()
    return ok, text


def note():
    """A line for the result's messages when the sandbox is weaker than it should be (run as host
    root), else None."""
    return _setup()[3]


def identity():
    """The (uid, gid) sandboxes are started as, or None (this process's own: it is not root, or the
    unprivileged one could not run a sandbox here)."""
    return _setup()[2]


def _wanted_identity():
    if os.geteuid() != 0:
        return None
    try:
        uid = int(os.environ.get(SANDBOX_UID_ENV) or NOBODY)
    except ValueError:
        uid = NOBODY
    return (uid, uid) if uid > 0 else None


def _popen_identity(drop):
    """subprocess's arguments that start a child as `drop` (no supplementary groups)."""
    return {} if drop is None else {"user": drop[0], "group": drop[1], "extra_groups": []}


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


def wrap(argv, *, ro_binds=(), rw_binds=(), dev_binds=(), env=None, cwd=None, network=False, gpu=None,
         data_fds=()):
    """The bwrap argv that runs `argv` sandboxed.

    Binds are paths (same inside) or (host path, path inside) pairs. `env` is the whole environment
    inside (PATH, LANG, HOME=/tmp, USER and LOGNAME are defaults it may override). `gpu`: bind /dev/nvidia* and
    /sys read-only; None means "when the host has /dev/nvidiactl". File descriptors are inherited by
    bwrap and kept open for the command: pass them with popen(pass_fds=...). `data_fds`: (descriptor,
    path inside) of files copied in read-only (popen opens them). Started by root, the argv is meant
    for a child started as identity() (popen does so)."""
    path = bwrap_path()
    if path is None:
        raise SandboxError(available()[1])
    version = (_version() or ("", (0, 0)))[1]
    args = [path, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if version >= (0, 8):
        args.append("--disable-userns")      # no nested user namespace (issue 39)
    if network:
        args.append("--share-net")
    # The private /tmp first: a bind below /tmp (a build dir, a test's toolchain) lands on top of it.
    # /proc/sys read-only: bwrap leaves it writable when the network namespace is unshared.
    args += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev",
             "--size", str(TMP_BYTES), "--tmpfs", "/dev/shm", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
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
    for fd, dest in data_fds:
        args += ["--perms", "0444", "--ro-bind-data", str(fd), os.fspath(dest)]
    # USER and LOGNAME: the sandbox's uid has no /etc/passwd entry inside, and Python's getpass.getuser()
    # (torch.compile's cache directory, Triton's) asks the environment first, pwd after, which fails
    full_env = {"PATH": DEFAULT_PATH, "LANG": "C.UTF-8", "HOME": "/tmp", "USER": SANDBOX_USER, "LOGNAME": SANDBOX_USER}
    full_env.update(env or {})
    args.append("--clearenv")
    for key, value in full_env.items():
        args += ["--setenv", key, str(value)]
    if cwd is not None:
        args += ["--chdir", os.fspath(cwd)]
    return args + ["--", *map(os.fspath, argv)]


def data_tree(src, dest):
    """(host file, path inside) for every file below directory `src` (DATA_TREE_FILES at most): a
    folder passed as data (popen's data_binds), so that the mount table names none of its host paths."""
    out = []
    for root, dirs, files in os.walk(src, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            host = os.path.join(root, name)
            if os.path.islink(host) or not os.path.isfile(host):
                continue
            out.append((host, os.path.join(os.fspath(dest), os.path.relpath(host, src))))
            if len(out) > DATA_TREE_FILES:
                raise SandboxError(f"{src} holds more than {DATA_TREE_FILES} files: too many to copy into a sandbox")
    return out


def popen(argv, *, pass_fds=(), ro_binds=(), rw_binds=(), dev_binds=(), data_binds=(), env=None, cwd=None,
          network=False, gpu=None, **kwargs):
    """subprocess.Popen of `argv` in the sandbox; `pass_fds` stay open inside under the same numbers
    (every other descriptor of the caller is closed). `data_binds`: (host file, path inside) pairs
    copied in read-only from descriptors this process opens. Started by root, bwrap runs as
    identity(): a read-only bind that uid cannot reach is copied in as data, a writable one is given
    to that uid first."""
    drop = identity() if _wanted_identity() is not None else None
    data_binds = list(data_binds)
    if drop is not None:
        # bwrap, started as the unprivileged uid, reaches a bind's path itself: a path it cannot reach
        # (below a private directory of root's) is copied in as data when read-only, and refused when
        # writable (a writable one is given to that uid; its parents must let it through).
        ro_kept = []
        for src, dest in _bind_pairs(ro_binds, "read-only bind"):
            if _reachable(src, drop):
                ro_kept.append((src, dest))
            else:
                data_binds += data_tree(src, dest) if os.path.isdir(src) else [(src, dest)]
        ro_binds = ro_kept
        for src, dest in _bind_pairs(rw_binds, "writable bind"):
            _give(src, drop)
            if not _reachable(src, drop):
                raise SandboxError(f"writable bind {src}: the sandbox's uid {drop[0]} cannot reach it (a parent "
                                   f"directory is private to root); use a directory it can traverse (e.g. below /tmp)")
    opened, data_fds = [], []
    try:
        for host, dest in data_binds:
            fd = os.open(os.fspath(host), os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
            opened.append(fd)
            data_fds.append((fd, dest))
        argv = wrap(argv, ro_binds=ro_binds, rw_binds=rw_binds, dev_binds=dev_binds, env=env, cwd=cwd,
                    network=network, gpu=gpu, data_fds=data_fds)
        kwargs.update(_popen_identity(drop))
        return subprocess.Popen(argv, pass_fds=tuple(pass_fds) + tuple(opened), close_fds=True, **kwargs)
    finally:
        for fd in opened:      # bwrap has its own copies
            os.close(fd)


def _reachable(path, drop):
    """Whether uid/gid `drop` may look up `path` (every directory above it lets it through) and read it."""
    uid, gid = drop
    path = os.path.realpath(path)
    parts = Path(path).parts
    for i in range(1, len(parts) + 1):
        p = os.path.join(*parts[:i])
        try:
            st = os.stat(p)
        except OSError:
            return False
        need = 0o1 if i < len(parts) else (0o5 if os.path.isdir(p) else 0o4)
        mode = st.st_mode >> 6 if st.st_uid == uid else st.st_mode >> 3 if st.st_gid == gid else st.st_mode
        if mode & need != need:
            return False
    return True


def _give(path, drop):
    """A writable bind's directory (and what is in it) owned by the sandbox's uid."""
    uid, gid = drop
    os.chown(path, uid, gid, follow_symlinks=False)
    for root, dirs, files in os.walk(path, followlinks=False):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)


def run(argv, *, timeout=None, ro_binds=(), rw_binds=(), dev_binds=(), data_binds=(), env=None, cwd=None,
        network=False, gpu=None, pass_fds=()):
    """Run `argv` in the sandbox to completion: CompletedProcess with text stdout/stderr. On a timeout
    the sandbox (and everything in it) is killed before subprocess.TimeoutExpired is raised."""
    proc = popen(argv, pass_fds=pass_fds, ro_binds=ro_binds, rw_binds=rw_binds, dev_binds=dev_binds,
                 data_binds=data_binds, env=env, cwd=cwd, network=network, gpu=gpu, stdin=subprocess.DEVNULL,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()   # bwrap is PID 1's parent: with --die-with-parent the whole sandbox goes with it
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
