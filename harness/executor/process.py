"""The executor: the process a candidate's (or the baseline's) library runs in. It decides nothing.

Threat model (docs/harness-threats.md): whatever loads here is arbitrary native code with full control of
this process. So this process holds nothing whose integrity matters: the parent owns the inputs'
pristine copies, the reference, the clock that counts, the bookkeeping and the verdict. The
executor only loads one library, maps the shared buffers the parent hands it (memfds passed over the
socket) and, on request, calls the entry point on them and says "done". Whatever it says is checked
by the parent: a forged or garbled reply is a rejection, an early "done" shows up as CPU time after
the answer or outputs changing later, outputs are read from the parent's own mapping.

Kept free of torch (unless the executor also runs the task's peers) and of the rest of the harness,
so that the process a candidate shares is small: Python, ctypes, this file, native/calls.py and
sandbox/seccomp.py.

Run as: python -m harness.executor.process <socket fd>
"""

import ctypes
import gc
import mmap
import os
import socket
import sys
import time
import traceback

from ..native.calls import Table, native_batch
from .cupti_activity import Activity, call_layout, call_span_ms, timestamp_step
from .protocol import recv_frame, send_frame

# bound requests (issue 39), kept apart from the imports above, which the filter's side of issue 39 edits
from ..native import bound as bound_wire

_CTYPES = {"int32": ctypes.c_int32, "int64": ctypes.c_int64, "float32": ctypes.c_float,
           "pointer": ctypes.c_void_p}


def _copy_fds(path, count):
    """count - 1 memfds holding the library's bytes, made before the filter (which forbids
    memfd_create): the copies _load_copies maps."""
    fds = []
    try:
        if count > 1:
            with open(path, "rb") as fh:
                data = fh.read()
        for k in range(1, count):
            fds.append(os.memfd_create(f"{os.path.basename(path)}.copy{k}", 0))
            with os.fdopen(fds[-1], "wb", closefd=False) as out:
                out.write(data)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return fds


def _load_copies(path, fds):
    """The library, and a copy of it from each of `fds` (_copy_fds: the same bytes, so that the
    dynamic linker maps each anew, a second dlopen of one file, or of one name, returning the first)
    at an address of its own. The timed calls go through the copies at random (harness/native/
    batch.c: where code lies changes what it costs). The descriptors are closed here. `fds` may be
    a count instead (the copies made here, outside any filter)."""
    if isinstance(fds, int):
        fds = _copy_fds(path, fds)
    try:
        libs = [ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)]
        for fd in fds:
            # Each under its own descriptor's name, all open until the last is loaded: a name already
            # loaded (a descriptor number closed and reused) would return the earlier copy.
            libs.append(ctypes.CDLL(f"/proc/self/fd/{fd}", mode=os.RTLD_NOW | os.RTLD_LOCAL))
    finally:
        for fd in fds:
            os.close(fd)
    return libs


class LoadFailed(Exception):
    """The library does not load (e.g. an undefined symbol): a link-level failure."""


class CallFailed(Exception):
    """A call failed on the device (a fault, an illegal address): reported as the call's failure."""


class Executor:
    def __init__(self, sock):
        self.sock = sock
        self.fn = None
        self.buffers = {}     # id -> (mmap, base address)
        self.peers = {}
        self.torch = None
        self.gpu = None       # CUDA tasks: the driver, the shared arena, the candidate's stream (cmd_cuda)
        self.batch = None     # CPU tasks: the native batch call (harness/native/batch.c)
        self.tables = {}      # buffer id -> Table of its slots' argument lists
        self.bound = None     # CPU tasks: bound.c's serve loop, when the parent built it (cmd_init)
        self.kinds = []

    def cmd_preload(self, _msg, _fds):
        """The peers' executor, as soon as it is up: import torch while the parent compiles."""
        import torch   # noqa: F401
        return {}

    def cmd_init(self, msg, _fds):
        """Load the library (and the peers), between the two steps of the seccomp filter."""
        if msg.get("peers"):
            # The peers are PyTorch code: torch is imported before the filter (it maps code).
            import importlib.util
            import torch
            self.torch = torch
            torch.set_num_threads(int(msg.get("threads", 1)))
            spec = importlib.util.spec_from_file_location("kernelseek_reference", msg["reference"])
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self.peers = {name: getattr(module, fn) for name, fn in msg["peers"].items()
                          if not fn.startswith("python:")}
            if len(self.peers) < len(msg["peers"]):   # Python callables of the task's signature
                from .python_calls import python_peers
                self.peers.update(python_peers(msg["peers"], os.path.dirname(msg["reference"]), msg["args"],
                                               msg.get("scalars")))
            self.unsupported = getattr(module, "Unsupported", ())
        # Issue 39: no code of the candidate's runs before the filter. Its library's constructors run
        # as it is loaded, so the first step of the filter comes first (the dynamic linker may map a
        # file's code, nothing may be writable and executable or anonymous and executable), the
        # second (no executable mapping at all) once it is loaded. Everything the load needs that the
        # filter forbids is done before: the copies' memfds.
        fds = _copy_fds(msg["library"], max(1, int(msg.get("copies", 1)))) if msg.get("library") else []
        confined = False
        if msg.get("seccomp"):
            from ..sandbox import seccomp
            listener = seccomp.install_before_load(threads=bool(msg.get("threads_allowed", True)))
            if listener is not None:
                # The parent reads every refused call from here on (the call and its arguments, from the
                # kernel); this process keeps no copy (a thread of the candidate's could answer it).
                try:
                    send_frame(self.sock, {"type": "listener", "seq": msg.get("seq")}, [listener])
                finally:
                    os.close(listener)
            confined = True
        if msg.get("library"):
            try:
                libs = _load_copies(msg["library"], fds)
            except OSError as exc:
                raise LoadFailed(f"the library does not load: {exc}") from None
            fns = []
            for lib in libs:
                fn = getattr(lib, msg["entry"])
                fn.restype = ctypes.c_int
                fn.argtypes = [_CTYPES[k] for k in msg["argtypes"]]
                fns.append(fn)
            self.fn = fns[0]
            self.kinds = list(msg["argtypes"])
            if msg.get("batcher"):
                self.batch = native_batch(msg["batcher"], fns, msg["argtypes"], int(msg.get("layout_seed", 0)))
        # No garbage collection inside a timed request: a collection walks every tracked object, and
        # the reference executor (torch imported) has many times the candidate's, so a collection
        # triggered by a request's own allocations would bill identical code differently.
        gc.collect()
        gc.freeze()
        gc.disable()
        # CPU tasks: the bound requests' native loop (harness/timing/bound.py), loaded while code may be.
        if msg.get("bound") and self.gpu is None and self.fn is not None:
            self.bound = bound_wire.load_server(msg["bound"])
        if confined:
            seccomp.install_after_load()
        return {"pid": os.getpid(), "seccomp": confined}

    def cmd_cuda(self, msg, fds):
        """CUDA tasks, before anything is loaded: the device's primary context (the one the candidate's
        CUDA runtime and torch also use), the arena the parent shares (one descriptor, imported and
        mapped here as buffer 0), a blocking stream for the calls, timing events and the pad kernel;
        the pad runs once so that its module is loaded before the seccomp filter."""
        if len(fds) != 1:
            raise ValueError(f"cuda needs exactly one descriptor (the arena), got {len(fds)}")
        if msg.get("torch"):
            import torch    # the peers' executor: torch first, so that it owns the context setup
            self.torch = torch
            torch.zeros(1, device="cuda").add_(1)
            torch.cuda.synchronize()
        from . import cuda_driver
        from .cuda_state import DeviceState
        drv = cuda_driver.Driver(int(msg.get("ordinal", 0)))
        handle = drv.import_shared(fds[0])
        os.close(fds[0])
        size = int(msg["size"])
        base = drv.map(handle, size)
        # After the correctness stage, the first scenario timed read high on the H200 (r1-c1024's
        # baseline 2.37-2.42 us timed first, 2.14-2.18 us last); with every page of the arena used once
        # here first, through this process's mapping, it read 2.18-2.24 us first (docs/harness-threats.md,
        # "Sixth session"). The peers' offset was not this (evaluate.timing_order).
        drv.touch(base, size)
        self.buffers[0] = (None, base)
        pad = drv.pad_kernel(msg["pad_ptx"].encode())
        self.gpu = {"drv": drv, "stream": drv.stream(), "start": drv.event(), "end": drv.event(),
                    "after": drv.event(), "pad": pad,
                    "state": DeviceState(), "base": base, "size": size}
        pad.launch(0.001)
        drv.synchronize()
        # The stream-ordered allocator set up now (cuda_driver.Driver.prewarm_pool): an honest kernel's
        # cudaMallocAsync on its stream then needs no system call the filter refuses (up to pool_bytes).
        pool = None
        if msg.get("pool_bytes"):
            try:
                pool = drv.prewarm_pool(self.gpu["stream"], int(msg["pool_bytes"])) or "on"
            except RuntimeError as exc:
                pool = f"not set up: {exc}"
        # Bound requests (cmd_bound): their native loop, loaded now (the filter forbids mapping code later).
        if msg.get("bound"):
            self.gpu["bound"] = bound_wire.load_server(msg["bound"])
        if self.torch is not None:
            self.gpu["u8"] = self.torch.as_tensor(cuda_driver.DeviceRange(base, size), device="cuda")
        return {"pad": {"grid": pad.grid, "threads": pad.threads}, "cupti": self._cupti(msg.get("cupti")),
                "pool": pool}

    def _cupti(self, path):
        """CUPTI's activity records for the timed calls (harness/executor/cupti_activity.py), enabled here,
        before anything is loaded; "on", or why not (the calls are then timed by their events only)."""
        if not path:
            return "not asked"
        g = self.gpu
        try:
            act = Activity(path)
            act.take()
            g["pad"].launch(0.01)
            g["drv"].synchronize()
            span = call_span_ms(act.take(), 0.0)
        except (OSError, RuntimeError, AttributeError) as exc:
            return f"unavailable: {type(exc).__name__}: {exc}"
        if span is None or span < 0.009:
            return f"unavailable: a 0.01 ms pad read {span} ms"
        g["cupti"] = act
        # How fine the GPU's timestamps are in this process (said in device_info.timing_clock).
        for i in range(8):
            g["pad"].launch(0.003 + 0.0004 * i)
        g["drv"].synchronize()
        step = timestamp_step(act.take())
        return f"on, timestamps in {step} ns steps" if step else "on"

    def cmd_map(self, msg, fds):
        if len(fds) != 1:
            raise ValueError(f"map needs exactly one descriptor, got {len(fds)}")
        # Every page mapped now: no timed call pays this process's first touch of a slot's pages.
        m = mmap.mmap(fds[0], int(msg["size"]), mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0),
                      mmap.PROT_READ | mmap.PROT_WRITE)
        os.close(fds[0])
        base = ctypes.addressof(ctypes.c_char.from_buffer(m))
        self.buffers[int(msg["id"])] = (m, base)
        return {}

    def cmd_unmap(self, msg, _fds):
        self.tables.pop(int(msg["id"]), None)
        self.buffers.pop(int(msg["id"]), None)   # the mmap closes when its last view goes
        return {}

    def cmd_table(self, msg, _fds):
        """The argument lists of buffer `id`'s slots, for timed requests that name slots by index."""
        self.tables[int(msg["id"])] = Table([self._argv(args) for args in msg["batch"]], self.kinds)
        return {}

    def _argv(self, args):
        argv = []
        for a in args:
            if isinstance(a, dict):
                argv.append(self.buffers[int(a["buf"])][1] + int(a["off"]))
            elif a is None and self.gpu is not None:
                argv.append(self.gpu["stream"])      # the task's stream argument
            else:
                argv.append(a)
        return argv

    def cmd_call(self, msg, _fds):
        """Call the entry point `n` times on the same buffers, or once on each argument list of
        `batch` (in order: one request amortises its own cost over many calls, each on its own
        buffers and inputs), or once on each slot `idx` names of a `table` (cmd_table: the same
        without decoding argument lists in the request); `null` does everything but the calls, which
        is how the parent calibrates the cost of a request."""
        if msg.get("peer"):
            return self._call_peer(msg)
        if "table" in msg:
            table, idx = self.tables[int(msg["table"])], [int(i) for i in msg["idx"]]
            if idx and not (0 <= min(idx) and max(idx) < len(table.argvs)):
                raise ValueError(f"slot index out of range (the table has {len(table.argvs)})")
            if self.batch is not None:
                return {"rc": self.batch(table, idx, bool(msg.get("null")))}
            argvs = [table.argvs[i] for i in idx]
            if msg.get("null"):
                return {"rc": [0] * len(argvs)}
            fn = self.fn
            return {"rc": [int(fn(*argv)) for argv in argvs]}
        batch = msg["batch"] if "batch" in msg else [msg["args"]] * int(msg.get("n", 1))
        argvs = [self._argv(args) for args in batch]
        if self.gpu is not None:
            fn = self.fn
            return self._timed_gpu([(lambda: 0) if msg.get("null") else (lambda argv=argv: int(fn(*argv)))
                                    for argv in argvs], float(msg.get("pad_ms", 0.0)))
        if msg.get("null"):
            return {"rc": [0] * len(argvs)}
        fn = self.fn
        return {"rc": [int(fn(*argv)) for argv in argvs]}

    def cmd_bound(self, msg, _fds):
        """A session of bound requests (harness/timing/bound.py) on the slots of table `table`: each one
        call (and on CUDA a synchronised device), nothing else, read and answered on this socket in
        binary frames (native/bound.py) until the parent ends the session; then this reply."""
        g = self.gpu
        if self.fn is None:
            raise ValueError("bound requests need an executor with a library loaded")
        table = self.tables[int(msg["table"])]
        fd = self.sock.fileno()
        if g is None:      # CPU: nothing to synchronise
            if self.bound is not None:
                return {"served": bound_wire.serve_native(self.bound, fd, self.fn, table, None), "path": "native"}
            return {"served": bound_wire.serve_python(fd, self.fn, table.argvs, lambda: 0), "path": "python"}
        drv = g["drv"]
        if g.get("bound") is not None:
            sync = ctypes.cast(drv.cu.cuCtxSynchronize, ctypes.c_void_p).value
            return {"served": bound_wire.serve_native(g["bound"], fd, self.fn, table, sync), "path": "native"}
        return {"served": bound_wire.serve_python(fd, self.fn, table.argvs, drv.cu.cuCtxSynchronize),
                "path": "python"}

    def _timed_gpu(self, calls, pad_ms):
        """Each call between two events on the legacy stream, which waits for every blocking stream's
        work (the candidate's stream is one): with a pad first, the start event fires once the pad is
        over and the call's launches are queued; the device is synchronised before the next call and
        before answering, a third event after that gives the tail (work that ran on past the end
        event, on a stream that does not wait for the legacy one), and the device-wide state a call
        may leave (persisting L2) is checked and reset. The times are this process's report: the
        parent bounds them by its own wall clock."""
        g = self.gpu
        drv, legacy, rcs, times, tails, found = g["drv"], 0x1, [], [], [], []
        cupti, spans, works, leads, idles, hosts, before = g.get("cupti"), [], [], [], [], [], []
        for call in calls:
            try:
                drv.synchronize()
                if cupti is not None and not g.get("taken"):
                    _take(cupti)    # what ran before this call (nothing, right after the last call's take)
                g["taken"] = False
                t_pad = time.perf_counter()
                if pad_ms > 0:
                    g["pad"].launch(pad_ms)
                drv.record(g["start"], legacy)
            except RuntimeError as exc:
                raise CallFailed(f"the device failed before the call: {exc}") from None
            before.append((time.perf_counter() - t_pad) * 1e3)
            rcs.append(call())
            # From the pad's launch to the call's return: the host's queueing, which the pad must outlast.
            hosts.append((time.perf_counter() - t_pad) * 1e3)
            try:
                drv.record(g["end"], legacy)
                drv.synchronize()
                # After the whole device is idle: end -> after is the host's wake-up and one record,
                # the same for every executor, unless work ran on past the end event.
                drv.record(g["after"], legacy)
                drv.event_sync(g["after"])
                times.append(drv.elapsed_ms(g["start"], g["end"]))
                tails.append(drv.elapsed_ms(g["end"], g["after"]))
                if cupti is not None:
                    records = _take(cupti)
                    layout = None if records is None else call_layout(records, pad_ms)
                    spans.append(None if layout is None else layout["span"])
                    works.append(None if layout is None else layout["work"])
                    leads.append(None if layout is None else layout["lead"])
                    idles.append(None if layout is None else layout["idle"])
                    # Until another request, this process queues no GPU work (the checks below read
                    # and reset state through the driver), so the next call needs no take (a forced
                    # flush of CUPTI's buffers) of its own first. Were a record left, it would come
                    # before that call's pad, and the call would have no span (call_span_ms).
                    g["taken"] = records is not None
                found += g["state"].check_and_reset(g["stream"])
            except RuntimeError as exc:   # a fault in the call: the context is unusable from here on
                raise CallFailed(f"the call failed on the GPU: {exc}") from None
        reply = {"rc": rcs, "ms": times, "tail_ms": tails, "device": found, "host_ms": hosts,
                 "before_ms": before}
        if cupti is not None:
            reply.update(span_ms=spans, work_ms=works, lead_ms=leads, idle_ms=idles)
        return reply

    def _tensors(self, specs):
        torch, tensors = self.torch, {}
        for name, spec in specs.items():
            dtype = getattr(torch, spec["dtype"])
            if self.gpu is not None:
                count = 1
                for d in spec["shape"]:
                    count *= int(d)
                off = int(spec["off"])
                nbytes = count * torch.empty((), dtype=dtype).element_size()
                tensors[name] = self.gpu["u8"][off:off + nbytes].view(dtype).view(spec["shape"])
                continue
            m, _ = self.buffers[int(spec["buf"])]
            count = 1
            for d in spec["shape"]:
                count *= int(d)
            tensors[name] = torch.frombuffer(m, dtype=dtype, count=count,
                                             offset=int(spec["off"])).view(spec["shape"])
        return tensors

    def _call_peer(self, msg):
        batch = msg["batch"] if "batch" in msg else [msg["tensors"]] * int(msg.get("n", 1))
        calls = [self._tensors(specs) for specs in batch]
        fn = self.peers[msg["peer"]]
        try:
            if self.gpu is not None:   # torch launches on its default stream: the legacy one
                params = dict(msg["params"])
                return self._timed_gpu([(lambda t=t: _peer_call(fn, t, params)) for t in calls],
                                       float(msg.get("pad_ms", 0.0)))
            for tensors in calls:
                fn(tensors, dict(msg["params"]))
        except CallFailed:
            raise
        except Exception as exc:  # a peer that cannot run a scenario is left out, with the reason
            kind = "unsupported" if self.unsupported and isinstance(exc, self.unsupported) else "failed"
            text = (str(exc) or "unsupported") if kind == "unsupported" else f"{type(exc).__name__}: {exc}"
            return {"rc": [0], "peer_error": kind, "message": text}
        return {"rc": [0] * len(calls)}


def _before(ex, msg):
    """Any request but a call may queue GPU work of the executor's own (the pad's check, CUPTI's):
    the next timed call takes CUPTI's records before its pad again."""
    if ex.gpu is not None and msg.get("cmd") != "call":
        ex.gpu["taken"] = False


def _take(cupti):
    """The records since the last take, or None when CUPTI could not flush (the call's figure is then
    its events')."""
    try:
        return cupti.take()
    except RuntimeError:
        return None


def _peer_call(fn, tensors, params):
    fn(tensors, params)
    return 0


def main(argv, executor_class=None):
    """`executor_class`: Executor, or python_candidate.PythonExecutor (Python implementations)."""
    sock = socket.socket(fileno=int(argv[1]))
    ex = (executor_class or Executor)(sock)
    handlers = {"preload": ex.cmd_preload, "init": ex.cmd_init, "cuda": ex.cmd_cuda, "map": ex.cmd_map,
                "unmap": ex.cmd_unmap, "call": ex.cmd_call, "table": ex.cmd_table, "bound": ex.cmd_bound}
    while True:
        fds = []
        try:
            msg = recv_frame(sock, fds)
        except (EOFError, OSError):
            return 0   # the parent went away
        if msg.get("cmd") == "exit":
            return 0
        _before(ex, msg)
        try:
            reply = handlers[msg["cmd"]](msg, fds)
            reply.update(type="done", seq=msg.get("seq"))
        except Exception as exc:
            kind = "load" if isinstance(exc, LoadFailed) else "call" if isinstance(exc, CallFailed) else "harness"
            reply = {"type": "error", "seq": msg.get("seq"), "kind": kind,
                     "message": str(exc) if kind != "harness" else f"{type(exc).__name__}: {exc}",
                     "traceback": traceback.format_exc()[-4000:]}
        send_frame(sock, reply)


if __name__ == "__main__":
    sys.stdout.flush()
    # No interpreter shutdown: it resets signal handlers, which the seccomp filter forbids.
    os._exit(main(sys.argv))
