"""The compile cache: entries whose every byte is checked against an index before it is used.

Layout under the cache directory (in the data dir, which no sandbox binds):

    entries/<namespace>/<key>/   meta.json, kernel.o, kernel.so   (what a build produced)
    index/<namespace>-<key>.json  {"files": {name: sha256}}        (written by the harness only)
    locks/<namespace>-<key>.lock  one builder per entry at a time

An entry is used only when its files are exactly those the index names, with those hashes; anything
else (kernel.so swapped, meta.json edited, a file added, the index missing) discards the entry and it
is built again. The harness reads the bytes once, checks them and hands out those bytes (never a
path to re-read later), so an entry changed after the check is not used either. The baseline lives
in its own namespace: a candidate with the baseline's exact source never shares its entry.
"""

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from ..errors import HarnessError

NAMESPACES = ("candidate", "baseline")
LOCK_TIMEOUT_S = 900   # longer than a build (the compiler's own limit is 300 s per step)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


class CompileCache:
    def __init__(self, root):
        self.root = Path(root).resolve()
        for sub in ("entries", "index", "locks"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    def entry(self, ns, key):
        if ns not in NAMESPACES:
            raise ValueError(f"unknown cache namespace {ns!r}")
        return self.root / "entries" / ns / key

    def _index(self, ns, key):
        return self.root / "index" / f"{ns}-{key}.json"

    @contextmanager
    def locked(self, ns, key, timeout=LOCK_TIMEOUT_S):
        """Hold the entry's lock. Bounded: a lock held for longer (by a stuck builder, or by anything
        that can write the data dir) fails this build instead of hanging the worker."""
        with open(self.root / "locks" / f"{ns}-{key}.lock", "a") as fh:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise HarnessError(f"the compile cache entry {ns}/{key} has been locked for more than "
                                           f"{timeout:g} s (another build, or a stale holder of "
                                           f"{fh.name})") from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def load(self, ns, key):
        """(files {name: bytes}, None) for a verified entry; (None, why) for none or a bad one."""
        entry, index = self.entry(ns, key), self._index(ns, key)
        if not entry.exists() and not entry.is_symlink():
            return None, None
        try:
            record = json.loads(index.read_text())
            expected = dict(record["files"])
        except (OSError, ValueError, KeyError, TypeError):
            return None, "it has no index record (written by something other than the harness, or cut short)"
        if entry.is_symlink() or not entry.is_dir():
            return None, "it is not a directory"
        present = sorted(p.name for p in entry.iterdir())
        if present != sorted(expected):
            return None, f"its files are {present}, the index lists {sorted(expected)}"
        files = {}
        for name, digest in expected.items():
            path = entry / name
            if path.is_symlink() or not path.is_file():
                return None, f"{name} is not a plain file"
            data = path.read_bytes()
            if sha256(data) != digest:
                return None, f"{name} does not match the SHA-256 recorded in the index"
            files[name] = data
        return files, None

    def discard(self, ns, key):
        entry = self.entry(ns, key)
        self._index(ns, key).unlink(missing_ok=True)
        if entry.is_symlink() or entry.is_file():
            entry.unlink()
        elif entry.exists():
            shutil.rmtree(entry, ignore_errors=True)

    def store(self, ns, key, files):
        """Write an entry from {name: bytes} (call under locked()): index first, then the entry is
        renamed into place in one step, so a reader sees a complete, indexed entry or none."""
        self.discard(ns, key)
        parent = self.entry(ns, key).parent
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".store-{key[:8]}-", dir=parent))
        try:
            for name, data in files.items():
                (tmp / name).write_bytes(data)
            record = json.dumps({"files": {name: sha256(data) for name, data in files.items()}})
            fd, tmp_index = tempfile.mkstemp(dir=self.root / "index", prefix=".tmp-")
            with os.fdopen(fd, "w") as fh:
                fh.write(record)
            os.replace(tmp_index, self._index(ns, key))
            os.rename(tmp, self.entry(ns, key))
            tmp = None
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
