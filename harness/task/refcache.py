"""The reference's outputs kept on the host, so that a seed's reference is computed once per host.

A scenario's reference outputs and its low-precision twin's error depend on the task's own files,
the scenario, the seed and the device and PyTorch that computed them, never on the candidate: the
full flash_attn_fwd evaluation spent 9.9 of its 39.8 s computing them (H200, docs/harness-lab.md).
An evaluation whose correctness seeds were seen before on this host (evaluate.py draws those after
each scenario's first from the host's pool, `seed_pool`) takes them from here, keyed by the seed and
the transform of task/variants.py its inputs got. A scenario's first correctness seed is the
evaluation's own, fresh, and never comes here (correctness_stage.run_correctness).

Layout under <data dir>/reference-cache/ (the data dir: no sandbox binds it, and only the parent
writes here, values it computed itself):

    index/<key>.json      the entry: per output its lowp error, dtype, shape and the SHA-256 of each
                          CHUNK of its data (no digests: the output is not kept, see below); the
                          fingerprint of the inputs; what the reference and lowp took. With the
                          SHA-256 of its own record. Its mtime is the entry's last use.
    data/<key>.<output>   the reference output's bytes, as the device holds them
    pool.json             this host's correctness seeds (seed_pool)
    rate.json             how fast a kept output loads here, GB/s (the last hits')

An entry is used only when its index parses and matches its own digest, names exactly the task's
outputs with the dtype and shape expected of them, and every chunk of every data file matches its
digest: read once into the buffer that is used, checked there, never read again. Anything else is
discarded and computed again. The inputs are always made again from the seed (make_inputs is cheap
next to the reference) and their fingerprint compared with the entry's: a make_inputs that does not
give one seed the same values never meets another draw's reference.

What is kept: always the lowp error (one number per output: lowp is not computed again on a hit),
and the reference output only where loading it is cheaper than computing it. flash_attn_fwd's
outputs are 19.9 GB a seed in fp32; a memory-bound reference (rmsnorm's, softmax's) computes as fast
as its bytes load, attention's largest scenarios do not. So an output is stored when the reference
took longer than its bytes take to load at the rate the last hits saw (DEFAULT_GBPS before one was
seen), and dropped again (the entry keeps its lowp error) when a hit loaded it slower than it was
computed; nothing is kept where the reference and lowp took under MIN_SAVING_S. The bytes kept are
bounded by the budget: the least recently used entries go first, but never one used within
PROTECT_S; a cache full of recent entries keeps new outputs out instead of churning.

What the checks are for: disks, cut-short writes, another version's files, make_inputs that is not
deterministic. Like the compile cache's index, the digests sit beside what they cover: whoever can
write the data dir can rewrite both, and is outside the threat model (docs/harness-threats.md).
"""

import hashlib
import json
import math
import os
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

from .. import HARNESS_VERSION

# Until a hit has measured it, the load rate assumed (GB/s): pages read, checked on several cores and,
# on a GPU, copied to it.
DEFAULT_GBPS = 2.0
CHUNK = 8 << 20            # bytes per digest: the chunks of one output are checked on several threads
PROTECT_S = 3600.0         # an entry used this recently is never evicted (a run's working set)
# An entry whose reference and lowp took less than this together is not kept: reading it back costs
# about as much (a light hit on the cpu task's smallest scenario: 1 ms against 0.2-0.6 ms computed).
MIN_SAVING_S = 0.002
# Entries waiting for the writer's thread at most (each holds a host copy of its outputs).
MAX_PENDING = 4
FINGERPRINT_ELEMS = 4096   # elements of each input sampled into the inputs' fingerprint
_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_DTYPES = {str(d).replace("torch.", ""): d for d in (torch.float16, torch.bfloat16, torch.float32, torch.float64,
                                                     torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)}
_SIZES = {name: torch.empty(0, dtype=d).element_size() for name, d in _DTYPES.items()}


def identity(device_info, device_kind):
    """What besides the task, scenario and seed decides a reference's bits: the device and the
    software that computed it (on a CPU also torch's thread count, which can order a reduction)."""
    parts = {"harness": HARNESS_VERSION, "torch": torch.__version__, "cuda": torch.version.cuda,
             "device": device_kind, "name": device_info.get("name"), "arch": device_info.get("arch"),
             "driver": device_info.get("driver")}
    if device_kind == "cpu":
        parts["threads"] = torch.get_num_threads()
    return json.dumps(parts, sort_keys=True)


def task_digest(task):
    """SHA-256 of the task's files that make inputs and references: task.yaml and every .py file."""
    h = hashlib.sha256()
    for path in [task.yaml_path] + sorted(p for p in Path(task.dir).glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def fingerprint(inputs):
    """SHA-256 over each input's name, dtype, shape and FINGERPRINT_ELEMS of its elements spread
    evenly over it (their bits): the same seed must give the same values."""
    h = hashlib.sha256()
    for name in sorted(inputs):
        t = inputs[name]
        h.update(f"{name}\0{t.dtype}\0{tuple(t.shape)}\0".encode())
        flat = t.detach().reshape(-1)
        n = flat.numel()
        if n == 0:
            continue
        if n > FINGERPRINT_ELEMS:
            step = n // FINGERPRINT_ELEMS      # exact in int64 (a float linspace rounds past the end)
            idx = torch.arange(0, step * FINGERPRINT_ELEMS, step, device=flat.device, dtype=torch.long)
            flat = flat.index_select(0, idx)
        h.update(_as_bytes(flat.cpu()))
    return h.hexdigest()


def _as_bytes(t):
    """A contiguous CPU tensor's bytes (any dtype numpy lacks, bfloat16 included)."""
    t = t.contiguous().reshape(-1)
    return t.view(_INT_OF_SIZE[t.element_size()]).numpy().tobytes() if t.numel() else b""


def _record_digest(record):
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


class Hit:
    """A verified entry: `lowp_err` {output: float}, `ref` {output: tensor on the device} or None
    where the outputs are not kept, `load_s` (what reading and checking them took)."""

    def __init__(self, lowp_err, ref, load_s, ref_s):
        self.lowp_err, self.ref, self.load_s, self.ref_s = lowp_err, ref, load_s, ref_s


class ReferenceCache:
    def __init__(self, root, budget_bytes, identity_text, task_digest_text):
        self.root = Path(root).resolve()
        self.budget = int(budget_bytes)
        self.identity, self.task = identity_text, task_digest_text
        for sub in ("index", "data"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.used = set()          # keys read or written by this process: never evicted by it
        self._sizes = None         # {key: bytes on disk}, read at the first store
        self._old = None           # the keys eviction may take, most recently used first (_room)
        self._staging = None       # CUDA: a pinned buffer the outputs are read into, reused
        # Entries hashed and written on a thread of their own while the evaluation goes on (evaluate()
        # turns it on and close()s the cache); off, put() returns once the entry is on disk.
        self.background = False
        self._writer, self._pending = None, []
        self.stats = {"hits": 0, "light_hits": 0, "misses": 0, "stored": 0, "stored_light": 0, "cheap": 0,
                      "discarded": 0, "dropped": 0, "evicted": 0, "load_s": 0.0, "load_bytes": 0}
        self.notes = []            # what went wrong, once per kind (the evaluation's messages)

    # ---- keys and files -------------------------------------------------------------------------
    def key(self, params, seed, variant=None):
        """`variant`: the task/variants.py transform the inputs were made with (None: the seed's own)."""
        what = {"identity": self.identity, "task": self.task, "seed": int(seed),
                "params": sorted((str(k), str(v)) for k, v in dict(params).items())}
        if variant is not None:
            what["variant"] = str(variant)
        text = json.dumps(what, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:40]

    def _index(self, key):
        return self.root / "index" / f"{key}.json"

    def _data(self, key, output):
        return self.root / "data" / f"{key}.{output}"

    def _note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    # ---- reading --------------------------------------------------------------------------------
    def get(self, key, expected, device, inputs_fp):
        """A Hit for `key`, or None (missing, or discarded: then computed and stored again).
        `expected`: {output: (allowed dtypes, shape)} the task says the reference gives;
        `inputs_fp`: the inputs' fingerprint, or a function that makes it (called only when there
        is an entry to compare it with)."""
        path = self._index(key)
        try:
            text = path.read_text()
        except OSError:
            self.stats["misses"] += 1
            return None
        why = None
        try:
            wrapped = json.loads(text)
            record = wrapped["record"]
            if _record_digest(record) != wrapped["digest"]:
                why = "its index does not match its own SHA-256"
        except (ValueError, KeyError, TypeError):
            why, record = "its index does not parse", None
        if why is None:
            why = self._check_record(record, expected, inputs_fp() if callable(inputs_fp) else inputs_fp)
        hit = None
        if why is None:
            t0 = time.perf_counter()
            ref, why = self._load(key, record, device)
            load_s = time.perf_counter() - t0
            if why is None:
                hit = Hit({n: float(o["lowp_err"]) for n, o in record["outputs"].items()}, ref, load_s,
                          float(record.get("ref_s", 0.0)))
        if hit is None:
            self.stats["misses"] += 1
            self.stats["discarded"] += 1
            self._note(f"reference cache: an entry was discarded and computed again: {why}")
            self.discard(key)
            return None
        self.used.add(key)
        try:
            os.utime(path)        # its last use (the LRU order)
        except OSError:
            pass
        if ref is None:
            self.stats["light_hits"] += 1
        else:
            self.stats["hits"] += 1
            nbytes = sum(o["bytes"] for o in record["outputs"].values())
            self.stats["load_s"] += load_s
            self.stats["load_bytes"] += nbytes
            self._seen_rate(nbytes, load_s)
            if load_s > hit.ref_s:
                # Loading took longer than computing did: keep the lowp error only from now on.
                self._drop_outputs(key, record)
        return hit

    def _check_record(self, record, expected, inputs_fp):
        try:
            outputs = record["outputs"]
            if record.get("inputs") != inputs_fp:
                return "the inputs made from its seed are not those it was computed from (make_inputs differs)"
            if set(outputs) != set(expected):
                return f"it names outputs {sorted(outputs)}, the task {sorted(expected)}"
            for name, o in outputs.items():
                err = float(o["lowp_err"])
                if not err >= 0 or err == float("inf"):
                    return f"{name}: lowp error {err!r}"
                dtypes, shape = expected[name]
                if o["dtype"] not in _DTYPES or _DTYPES[o["dtype"]] not in dtypes or tuple(o["shape"]) != shape:
                    return f"{name}: {o['dtype']} {o['shape']}, expected {shape} in {dtypes}"
                if o.get("chunks") is None:
                    continue
                n = 1
                for d in shape:
                    n *= d
                if o["bytes"] != n * _SIZES[o["dtype"]]:
                    return f"{name}: {o['bytes']} bytes for {shape}"
                if len(o["chunks"]) != max(1, -(-o["bytes"] // CHUNK)):
                    return f"{name}: {len(o['chunks'])} chunk digests for {o['bytes']} bytes"
        except (KeyError, TypeError, ValueError) as exc:
            return f"its index is malformed ({type(exc).__name__}: {exc})"
        return None

    def _load(self, key, record, device):
        """({output: tensor on `device`} or None where nothing is kept, None) or (None, why not)."""
        kept = {n: o for n, o in record["outputs"].items() if o.get("chunks") is not None}
        if not kept:
            return None, None
        out = {}
        for name, o in kept.items():
            path = self._data(key, name)
            try:
                if path.is_symlink() or os.path.getsize(path) != o["bytes"]:
                    return None, f"{path.name} is not a plain file of {o['bytes']} bytes"
                buf = self._buffer(o["bytes"], device)
                with open(path, "rb", buffering=0) as fh:
                    view = memoryview(buf.numpy()) if o["bytes"] else memoryview(b"")
                    got = fh.readinto(view) if o["bytes"] else 0
                    if got != o["bytes"] or fh.read(1):
                        return None, f"{path.name} changed size while it was read"
            except OSError as exc:
                return None, f"{path.name} cannot be read ({exc.strerror or exc})"
            if _chunk_digests(view) != o["chunks"]:
                return None, f"{path.name} does not match the SHA-256 recorded in its index"
            t = buf.view(_DTYPES[o["dtype"]]).reshape(tuple(o["shape"]))
            out[name] = t.to(device, copy=True) if device.type != "cpu" else t
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return out, None

    def _buffer(self, nbytes, device):
        """Where an output's bytes are read: a fresh tensor on a CPU device (it is the output), a
        pinned staging buffer reused for a GPU (copied to the device straight after)."""
        if device.type != "cuda":
            return torch.empty(nbytes, dtype=torch.uint8)
        if self._staging is None or self._staging.numel() < nbytes:
            self._staging = torch.empty(max(nbytes, 1), dtype=torch.uint8, pin_memory=True)
        return self._staging[:nbytes]

    # ---- writing --------------------------------------------------------------------------------
    def put(self, key, ref, lowp_err, inputs_fp, ref_s, lowp_s, always=False):
        """Keep a computed entry: the lowp errors always, the reference outputs where they pay
        (module docstring; `always`: whatever they cost, as tools/lab/reference_cost.py measures)
        and fit; nothing where the reference and lowp cost less than MIN_SAVING_S. `inputs_fp` as
        get() takes it. Never raises for a full disk or a race: a cache that cannot write is a
        cache that misses."""
        if ref_s + lowp_s < MIN_SAVING_S and not always:
            self.stats["cheap"] += 1
            return
        try:
            self._put(key, ref, lowp_err, inputs_fp, ref_s, lowp_s, always)
        except OSError as exc:
            self._note(f"reference cache: an entry could not be written ({exc.strerror or exc})")

    def _put(self, key, ref, lowp_err, inputs_fp, ref_s, lowp_s, always):
        nbytes = sum(t.numel() * t.element_size() for t in ref.values())
        keep = always or ref_s >= nbytes / (self.rate() * 1e9)
        if keep and not self._room(key, nbytes):
            keep = False
            self._note(f"reference cache: full ({self.budget / 2**30:.1f} GiB of entries used within "
                       f"{PROTECT_S / 3600:g} h): new outputs are not kept")
        outputs, datas = {}, {}
        for name, t in ref.items():
            outputs[name] = {"lowp_err": float(lowp_err[name]), "dtype": str(t.dtype).replace("torch.", ""),
                             "shape": list(t.shape), "bytes": t.numel() * t.element_size(), "chunks": None}
            if keep:       # a copy of its own on the host: what is written is what was computed
                data = t.detach().reshape(-1)
                datas[name] = data.cpu() if data.device.type != "cpu" else data.clone()
        if callable(inputs_fp):
            inputs_fp = inputs_fp()
        record = {"outputs": outputs, "inputs": inputs_fp, "ref_s": ref_s, "lowp_s": lowp_s, "stored": time.time()}
        self.used.add(key)
        if keep and self._sizes is not None:
            self._sizes[key] = nbytes       # held for it now: the next store's room counts it
        if self.background:
            if self._writer is None:
                self._writer = ThreadPoolExecutor(max_workers=1)
            self._settle(MAX_PENDING - 1)        # the host copies waiting to be written stay few
            self._pending.append(self._writer.submit(self._write, key, record, datas))
        else:
            self._write(key, record, datas)

    def _write(self, key, record, datas):
        """Hash and write an entry's data, then its index (on the writer's thread when `background`)."""
        try:
            for name, data in datas.items():
                view = memoryview(data.view(torch.uint8).numpy()) if data.numel() else memoryview(b"")
                record["outputs"][name]["chunks"] = _chunk_digests(view)
                _write_atomic(self._data(key, name), view)
            text = json.dumps({"record": record, "digest": _record_digest(record)})
            _write_atomic(self._index(key), memoryview(text.encode()))
        except OSError as exc:
            self._note(f"reference cache: an entry could not be written ({exc.strerror or exc})")
            self.discard(key)
            return
        self.stats["stored" if datas else "stored_light"] += 1
        if self._sizes is not None:
            self._sizes[key] = len(text) + sum(d.numel() * d.element_size() for d in datas.values())

    def _settle(self, left):
        """Waits, oldest first, until at most `left` entries are still being written."""
        while len(self._pending) > left or (self._pending and self._pending[0].done()):
            f = self._pending.pop(0)
            try:
                f.result()
            except Exception as exc:  # noqa: BLE001 - the evaluation's result matters more than one entry
                self._note(f"reference cache: writing an entry failed ({type(exc).__name__}: {exc})")

    def close(self):
        """Waits for the entries still being written (evaluate() calls it before the result's summary)."""
        self._settle(0)
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None

    def _room(self, key, nbytes):
        """Whether `nbytes` more fit the budget, evicting the least recently used entries (never one
        used within PROTECT_S or by this process) until they do."""
        sizes = self._disk_sizes()
        total = sum(sizes.values())
        if total + nbytes <= self.budget:
            return True
        if self._old is None:     # the entries not used within PROTECT_S, least recently used first
            now, old = time.time(), []
            for k in sizes:
                try:
                    used = os.path.getmtime(self._index(k))
                except OSError:
                    used = 0.0       # data without an index: a store cut short, the first to go
                if now - used > PROTECT_S:
                    old.append((used, k))
            self._old = [k for _, k in sorted(old, reverse=True)]
        while self._old and total + nbytes > self.budget:
            k = self._old.pop()
            if k in self.used or k == key or k not in sizes:
                continue
            total -= sizes[k]
            self.discard(k)
            self.stats["evicted"] += 1
        return total + nbytes <= self.budget

    def _disk_sizes(self):
        if self._sizes is None:
            sizes = {}
            for sub in ("index", "data"):
                with os.scandir(self.root / sub) as it:
                    for e in it:
                        if e.name.startswith("."):     # a store in flight, or one cut short long ago
                            if time.time() - e.stat(follow_symlinks=False).st_mtime > PROTECT_S:
                                _unlink(Path(e.path))
                            continue
                        if e.is_file(follow_symlinks=False):
                            k = e.name.split(".", 1)[0]
                            sizes[k] = sizes.get(k, 0) + e.stat(follow_symlinks=False).st_size
            self._sizes = sizes
        return self._sizes

    def discard(self, key):
        """The entry and its data gone (a miss from now on)."""
        _unlink(self._index(key))
        for p in (self.root / "data").glob(f"{key}.*"):
            _unlink(p)
        if self._sizes is not None:
            self._sizes.pop(key, None)

    def _drop_outputs(self, key, record):
        for name, o in record["outputs"].items():
            o["chunks"] = None
            _unlink(self._data(key, name))
        text = json.dumps({"record": record, "digest": _record_digest(record)})
        try:
            _write_atomic(self._index(key), memoryview(text.encode()))
        except OSError:
            return
        self.stats["dropped"] += 1
        if self._sizes is not None:
            self._sizes[key] = len(text)

    # ---- the load rate and the seed pool ---------------------------------------------------------
    def rate(self):
        """GB/s at which kept outputs loaded on the last hits here; DEFAULT_GBPS before any."""
        try:
            gbps = float(json.loads((self.root / "rate.json").read_text())["gbps"])
            return gbps if gbps > 0 and math.isfinite(gbps) else DEFAULT_GBPS
        except (OSError, ValueError, KeyError, TypeError):
            return DEFAULT_GBPS

    def _seen_rate(self, nbytes, seconds):
        if nbytes < (1 << 20) or seconds <= 0:
            return      # a small output's load is its fixed costs, not a rate
        now = nbytes / seconds / 1e9
        try:
            before = float(json.loads((self.root / "rate.json").read_text())["gbps"])
        except (OSError, ValueError, KeyError, TypeError):
            before = None
        gbps = now if before is None or not before > 0 or not math.isfinite(before) else 0.5 * (before + now)
        try:
            _write_atomic(self.root / "rate.json", memoryview(json.dumps({"gbps": gbps}).encode()))
        except OSError:
            pass

    def summary(self):
        """What this process saw, for the result (`time_spent`'s neighbour, `reference_cache`)."""
        s = dict(self.stats)
        s["load_s"] = round(s["load_s"], 3)
        return s


def seed_pool(root, size):
    """This host's `size` correctness base seeds (evaluate.py draws one per evaluation), drawn once
    from a secret source and kept in `root`/pool.json."""
    path = Path(root) / "pool.json"
    try:
        pool = [int(s) for s in json.loads(path.read_text())["seeds"]]
    except (OSError, ValueError, KeyError, TypeError):
        pool = []
    if len(pool) < size:
        pool += [secrets.randbelow(1 << 31) for _ in range(size - len(pool))]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic(path, memoryview(json.dumps({"seeds": pool}).encode()))
        except OSError:
            pass
    return pool[:size]


def _chunk_digests(view):
    """SHA-256 of each CHUNK of `view` (a byte memoryview), on several threads (hashlib lets go
    of the GIL on large buffers)."""
    n = len(view)
    starts = list(range(0, n, CHUNK)) or [0]
    if len(starts) == 1:
        return [hashlib.sha256(view[:n]).hexdigest()]
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1, len(starts))) as pool:
        return list(pool.map(lambda s: hashlib.sha256(view[s:s + CHUNK]).hexdigest(), starts))


def _write_atomic(path, view):
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(view)
        os.replace(tmp, path)
    finally:
        _unlink(tmp)


def _unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass

