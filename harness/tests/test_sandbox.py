"""The sandbox (harness/sandbox/bwrap.py): each test performs the escape a candidate would try and expects it
to fail inside, with a control showing the same action works outside (so the test can fail)."""

import os
import signal
import socket
import subprocess
import sys
import time
import uuid

import pytest

from harness.sandbox import bwrap
from harness.sandbox.bwrap import SandboxError, run, wrap

from .conftest import REPO

OK, WHY = bwrap.available()
pytestmark = pytest.mark.skipif(not OK, reason=f"no usable bubblewrap here: {WHY}")
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def sh(script, **kw):
    return run(["/bin/sh", "-c", script], timeout=60, **kw)


def test_available_names_bwrap():
    assert OK and ("bwrap" in WHY.lower() or "bubblewrap" in WHY.lower())


def test_a_file_outside_the_binds_cannot_be_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the reference answer\n")
    assert subprocess.run(["cat", str(secret)], capture_output=True, text=True).stdout  # readable outside
    inside = sh(f"cat {secret}")
    assert inside.returncode != 0 and "the reference answer" not in inside.stdout
    # The checkout (harness, tasks' references) and its files are not there either.
    for path in (REPO / "harness" / "task" / "oracle.py", REPO / "kernels" / "cpu_softmax" / "reference.py"):
        assert sh(f"cat {path}").returncode != 0, path
    assert sh(f"ls {REPO}").returncode != 0


@pytest.fixture
def open_tmp():
    """A directory every uid can traverse (pytest's tmp_path is private to its user): a writable bind
    below it works for the unprivileged uid a root harness starts its sandboxes as."""
    import shutil
    import tempfile
    from pathlib import Path
    path = Path(tempfile.mkdtemp(prefix="ks-sandbox-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_binds_show_exactly_what_is_given_read_only_or_writable(open_tmp):
    tmp_path = open_tmp
    ro, rw = tmp_path / "ro", tmp_path / "rw"
    ro.mkdir()
    rw.mkdir()
    (ro / "in.txt").write_text("input\n")
    (tmp_path / "sibling.txt").write_text("not bound\n")
    res = sh(f"cat {ro}/in.txt && echo out > {rw}/o.txt && ! echo x > {ro}/x.txt 2>/dev/null "
             f"&& ! cat {tmp_path}/sibling.txt 2>/dev/null", ro_binds=[ro], rw_binds=[rw])
    assert res.returncode == 0, res.stderr
    assert res.stdout == "input\n" and (rw / "o.txt").read_text() == "out\n"
    assert not (ro / "x.txt").exists()
    moved = sh("cat /inside/in.txt", ro_binds=[(ro, "/inside")])
    assert moved.stdout == "input\n"
    with pytest.raises(SandboxError, match="does not exist"):
        wrap(["true"], ro_binds=[tmp_path / "missing"])


def test_the_data_dir_is_hidden_even_inside_a_bound_toolchain_dir(open_tmp, monkeypatch):
    tmp_path = open_tmp
    # A data dir that happens to live under a directory the sandbox binds (here: bound by the caller
    # as a whole) stays invisible: it is covered by an empty tmpfs before the caller's binds.
    tool = tmp_path / "toolchain"
    (tool / "data").mkdir(parents=True)
    (tool / "data" / "index.json").write_text("{}")
    (tool / "bin.txt").write_text("tool\n")
    monkeypatch.setenv("KERNELSEEK_DATA_DIR", str(tool / "data"))
    monkeypatch.setattr(bwrap, "toolchain_dirs", lambda: ["/usr", str(tool)])
    res = sh(f"cat {tool}/bin.txt; ls -A {tool}/data")
    assert res.stdout == "tool\n", res


def test_environment_is_cleared(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-should-not-leak")
    res = sh("env")
    assert "sk-ant" not in res.stdout and "HOME=/tmp" in res.stdout
    assert "X=1" in sh("env", env={"X": "1"}).stdout


def test_code_that_asks_who_runs_it_gets_an_answer():
    # torch.compile's cache directory is named after getpass.getuser(): with the sandbox's uid absent
    # from /etc/passwd inside, pwd fails ("getpwuid(): uid not found: 65534", an H200 run of the Triton
    # example's torch.compile peer), so the environment answers first
    res = run([PY, "-c", "import getpass; print(getpass.getuser())"], timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "kernelseek", res


def test_no_network():
    # Redis listens on 127.0.0.1:6379 in CI; fall back to a listener of our own.
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), 3); print('connected')"
    try:
        assert run([PY, "-c", code], timeout=60, network=True).stdout.strip() == "connected"  # control
        res = run([PY, "-c", code], timeout=60)
        assert res.returncode != 0 and "connected" not in res.stdout
    finally:
        srv.close()


def test_host_processes_are_not_visible():
    res = sh("ls /proc | grep -E '^[0-9]+$'")
    pids = set(res.stdout.split())
    # (a parent that is init, as under a detached shell, shares its number with the sandbox's own 1)
    assert str(os.getpid()) not in pids and (os.getppid() == 1 or str(os.getppid()) not in pids)
    assert len(pids) <= 4, pids      # the sandbox's own few processes only


def test_python_with_torch_runs_inside():
    res = run([PY, "-c", "import torch, yaml, numpy; print(torch.__version__)"], timeout=120)
    assert res.returncode == 0, res.stderr


def _pids_with(marker):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = open(f"/proc/{entry}/cmdline", "rb").read()
            except OSError:
                continue
            if marker.encode() in cmd and b"bwrap" not in cmd and b"/bin/sh" not in cmd:
                out.append(int(entry))
    return out


def _wait_for(predicate, seconds=10):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_it_dies_with_its_parent_and_leaves_nothing_behind():
    # The parent (a separate interpreter) starts a sandboxed process that forks a daemon of its own
    # (setsid + background), then the parent is SIGKILLed: nothing of the sandbox may survive it.
    marker = f"{uuid.uuid4().int % 10**6}.{uuid.uuid4().int % 10**3}"
    parent_code = (
        "import subprocess, sys, time\n"
        "from harness.sandbox.bwrap import wrap\n"
        f"p = subprocess.Popen(wrap(['/bin/sh', '-c', 'setsid sleep {marker} & sleep {marker}']))\n"
        "print('started', flush=True)\n"
        "time.sleep(600)\n")
    parent = subprocess.Popen([PY, "-c", parent_code], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "started"
        assert _wait_for(lambda: len(_pids_with(f"sleep\0{marker}")) == 2), "both sleeps should start"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert _wait_for(lambda: not _pids_with(f"sleep\0{marker}")), _pids_with(f"sleep\0{marker}")
    finally:
        if parent.poll() is None:
            parent.kill()
        for pid in _pids_with(f"sleep\0{marker}"):
            os.kill(pid, signal.SIGKILL)


def test_a_timeout_kills_the_sandbox():
    marker = f"{uuid.uuid4().int % 10**6}.5"
    with pytest.raises(subprocess.TimeoutExpired):
        run(["/bin/sh", "-c", f"sleep {marker}"], timeout=1)
    assert _wait_for(lambda: not _pids_with(f"sleep\0{marker}"))


def test_passed_descriptors_stay_open_inside():
    r, w = os.pipe()
    try:
        proc = bwrap.popen([PY, "-c", f"import os; os.write({w}, b'through\\n')"], pass_fds=[w])
        proc.wait(timeout=60)
        os.close(w)
        w = None
        assert os.read(r, 100) == b"through\n"
    finally:
        os.close(r)
        if w is not None:
            os.close(w)


def test_no_unix_socket_of_the_host_either(tmp_path):
    """PostgreSQL's socket (or any host Unix socket, abstract ones included) is out of reach: /run is
    not bound, /tmp is private and the network namespace has its own abstract socket space."""
    path = str(tmp_path / "s.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(b"\0kernelseek-test-" + uuid.uuid4().hex.encode())
    abstract.listen(1)
    code = ("import socket, sys\n"
            "for addr in sys.argv[1:]:\n"
            "    s = socket.socket(socket.AF_UNIX)\n"
            "    a = addr.encode().replace(b'@', b'\\0', 1) if addr.startswith('@') else addr\n"
            "    try:\n"
            "        s.connect(a); print('connected', addr)\n"
            "    except OSError as e:\n"
            "        print('refused', addr, e)\n")
    name = "@" + abstract.getsockname()[1:].decode()
    targets = [path, name] + (["/run/postgresql/.s.PGSQL.5432"] if os.path.exists("/run/postgresql") else [])
    try:
        outside = subprocess.run([PY, "-c", code, path, name], capture_output=True, text=True).stdout
        assert [ln.split()[0] for ln in outside.splitlines()] == ["connected"] * 2, outside   # control
        inside = run([PY, "-c", code, *targets], timeout=60).stdout
        assert [ln.split()[0] for ln in inside.splitlines()] == ["refused"] * len(targets), inside
    finally:
        srv.close()
        abstract.close()


# -- issue 39: what a sandbox may do to the host when the harness runs as root ---------------------
ROOT = os.geteuid() == 0
SYSCTL = "/proc/sys/vm/stat_interval"


def _rewrite_sysctl():
    """Writes a sysctl's own value back (changes nothing on the host): 'ok' or the error."""
    return f"v=$(cat {SYSCTL}); (echo $v > {SYSCTL}) 2>&1 && echo ok"


@pytest.mark.skipif(not ROOT, reason="the host root case: run as root (CI and the service's container do)")
def test_as_root_the_sandbox_is_no_host_root_and_cannot_write_proc_sys():
    assert subprocess.run(["/bin/sh", "-c", _rewrite_sysctl()], capture_output=True, text=True).stdout.strip() == "ok"
    inside = sh(_rewrite_sysctl())
    assert "ok" not in inside.stdout.split() and "Read-only" in inside.stdout, inside
    assert bwrap.identity() is not None and bwrap.note() is None, bwrap.note()
    # Its processes, seen from the host, are not uid 0.
    marker = f"{uuid.uuid4().int % 10**6}.7"
    proc = bwrap.popen(["/bin/sh", "-c", f"sleep {marker}"])
    try:
        assert _wait_for(lambda: _pids_with(f"sleep\0{marker}"))
        for pid in _pids_with(f"sleep\0{marker}"):
            uids = next(ln for ln in open(f"/proc/{pid}/status") if ln.startswith("Uid:")).split()[1:]
            assert "0" not in uids, uids
    finally:
        proc.kill()
        proc.wait()


def test_proc_sys_is_read_only_whoever_runs_it():
    # Also when the sandbox cannot drop to an unprivileged uid (a root fallback): mounted read-only.
    res = sh(f"grep -E ' /proc/sys ' /proc/self/mountinfo; {_rewrite_sysctl()}")
    assert " ro," in res.stdout.split("\n")[0] or " ro " in res.stdout.split("\n")[0], res.stdout
    assert "ok" not in res.stdout.split(), res.stdout


def test_no_user_namespace_can_be_made_inside():
    outside = subprocess.run(["unshare", "-U", "true"], capture_output=True, text=True)
    if outside.returncode != 0:
        pytest.skip(f"this host makes no user namespace at all: {outside.stderr.strip()}")
    inside = sh("unshare -U true 2>&1 && echo made")
    assert "made" not in inside.stdout, inside


def test_only_stdio_and_passed_descriptors_are_inherited(tmp_path):
    extra = os.open(str(tmp_path), os.O_RDONLY)       # inheritable, not passed: must not arrive
    os.set_inheritable(extra, True)
    r, w = os.pipe()
    # (the listing's own descriptor is closed once it returns: readlink fails on it)
    code = ("import os\nout = []\nfor f in os.listdir('/proc/self/fd'):\n"
            "    try:\n        os.readlink('/proc/self/fd/' + f)\n        out.append(int(f))\n"
            "    except OSError:\n        pass\nprint(sorted(out))")
    try:
        res = run([PY, "-c", code], timeout=60, pass_fds=[w])
        assert res.returncode == 0, res.stderr
        assert res.stdout.strip() == str(sorted({0, 1, 2, w})), (res.stdout, extra)
    finally:
        for fd in (extra, r, w):
            os.close(fd)


def test_data_binds_name_no_host_path_in_the_mount_table(open_tmp):
    secret_dir = open_tmp / "kernelseek-data-dir-7d1e"
    secret_dir.mkdir()
    (secret_dir / "lib.so").write_bytes(b"\x7fELF not really")
    show = "cat /kernelseek/lib.so >/dev/null && cat /proc/self/mountinfo"
    bound = sh(show, ro_binds=[(secret_dir / "lib.so", "/kernelseek/lib.so")])
    assert "kernelseek-data-dir-7d1e" in bound.stdout           # control: a bind names its source
    copied = sh(show, data_binds=[(secret_dir / "lib.so", "/kernelseek/lib.so")])
    assert copied.returncode == 0, copied.stderr
    assert "kernelseek-data-dir-7d1e" not in copied.stdout and str(open_tmp) not in copied.stdout


def test_tmp_is_capped():
    res = sh("dd if=/dev/zero of=/tmp/fill bs=1M count=%d 2>&1; ls -l /tmp/fill" % ((bwrap.TMP_BYTES >> 20) + 8))
    assert "No space left" in res.stdout, res.stdout
