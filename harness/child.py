"""The child process: the only process that loads the candidate's shared library.

The trusted parent (evaluate.py) drives it over private pipes (protocol.py). The child creates the
inputs from the seeds it is given, calls the candidate, the baseline and the peers, and reports raw
outputs, timings and what it observed (threads, libraries, changed buffers). It decides nothing: the
parent computes the reference on its own pristine inputs and judges every result.

Run as: python -m harness.child <read fd> <write fd> <status file>
"""

import ctypes
import mmap
import os
import random
import sys
import time
import traceback

import torch

# How long the stream is held asleep while the stream-discipline probe runs (hack 3).
HOLD_MS = 8.0

from .sandbox import procinfo
from .build.denylist import ALWAYS, families, match_library
from .fingerprint import fingerprints
from .protocol import DTYPES, Channel
from .task.tolerance import poison, unwritten
from .timing.stats import rse_of_median
from .task.model import load_reference, load_task

INT_SENTINEL = -0x5A5A5A5A  # integer poison (shm.POISON_BITS holds every dtype's pattern)
TICK_SECONDS = 0.5
_CTYPES = {"int32": ctypes.c_int32, "int64": ctypes.c_int64, "float32": ctypes.c_float}


class LoadFailed(Exception):
    """The candidate's library does not load (e.g. an undefined symbol): a link-level failure."""


class CallFailed(Exception):
    """A CUDA error surfaced while running an implementation: the context may be unusable."""


class Child:
    def __init__(self, chan, status_path):
        self.chan = chan
        self.status = None
        if status_path:
            fd = os.open(status_path, os.O_RDWR)
            self.status = mmap.mmap(fd, 64)
            os.close(fd)
        self.impls = {}
        self.cand_threads = set()     # threads that appeared during the candidate's load or calls
        self.thread_allowance = 0     # threads the baseline (same toolchain) starts by itself
        self.baseline_warmed = False
        self.last_tick = time.monotonic()
        self.held = None              # (params, inputs, outputs) of the last correctness trial

    # -- bookkeeping -------------------------------------------------------------------------------
    def mark(self, what):
        """Record who is running, so that a parent killing a hung child knows whom to blame."""
        if self.status is not None:
            data = what.encode()[:63]
            self.status[:64] = data + b"\0" * (64 - len(data))

    def tick(self, force=False):
        now = time.monotonic()
        if force or now - self.last_tick >= TICK_SECONDS:
            self.chan.send({"type": "tick"})
            self.last_tick = now

    def _new_libraries(self, before):
        fams = families(self.task.denylist) + ALWAYS
        hits = []
        for path in sorted(procinfo.mapped_libraries() - before):
            fam = match_library(path, fams)
            if fam:
                hits.append(f"{path} ({fam.why})")
        return hits

    def _thread_findings(self, before):
        after = procinfo.thread_ids()
        self.cand_threads |= after - before
        alive = self.cand_threads & after
        if len(alive) > self.thread_allowance:
            return [f"{len(alive)} thread(s) started by the candidate are still running after it returned "
                    f"({', '.join(procinfo.thread_names(alive))}); the baseline starts "
                    f"{self.thread_allowance}"]
        return []

    # -- commands ----------------------------------------------------------------------------------
    def cmd_init(self, msg):
        self.task = load_task(msg["task_dir"])
        self.ref = load_reference(self.task)
        from .timing.devices import make_device
        self.device = make_device(msg["device"])
        if self.device.kind == "cpu":
            torch.set_num_threads(self.task.cpu_threads)
        with self.device.stream_context():
            torch.zeros(1, device=self.device.torch_device).add_(1)  # initialise the device first
            self.device.sync()
        self.devstate = None
        if self.device.kind == "cuda":
            from .executor.cuda_state import DeviceState
            self.devstate = DeviceState()
        findings = []
        libs = msg["libraries"]
        if libs.get("baseline"):
            before = procinfo.thread_ids()
            self.impls["baseline"] = self._load(libs["baseline"])
            self.baseline_new_threads = procinfo.thread_ids() - before
            self.thread_allowance = len(self.baseline_new_threads)
        before_threads, before_maps = procinfo.thread_ids(), procinfo.mapped_libraries()
        self.mark("candidate (loading the library)")
        try:
            self.impls["candidate"] = self._load(libs["candidate"])
        except (OSError, AttributeError) as exc:
            raise LoadFailed(f"the library does not load: {exc}") from None
        self.mark("")
        findings += self._thread_findings(before_threads)
        findings += [f"loading the library mapped {x}" for x in self._new_libraries(before_maps)]
        self.chan.send({"type": "result", "pid": os.getpid(), "findings": findings})

    def _load(self, path):
        lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        fn = getattr(lib, self.task.entry)
        fn.restype = ctypes.c_int
        types = []
        for arg in self.task.args:
            types.append(ctypes.c_void_p if arg.kind in ("tensor", "stream") else _CTYPES[arg.kind])
        fn.argtypes = types
        return fn

    def _make_inputs(self, params, seed):
        return self.ref.make_inputs(dict(params), seed, str(self.device.torch_device))

    def _trial_buffers(self, params, seed):
        """Inputs and first-run outputs for a correctness trial. The second seed of a scenario is
        written into the very buffers the first seed used, so a result cached by pointer, shape or
        call count is returned for the wrong values and fails the check (hack 1), whatever the
        allocator does and however few timing rounds follow."""
        fresh = self._make_inputs(params, seed)
        if self.held is not None and self.held[0] == params:
            inputs, outs = self.held[1], self.held[2]
            for key, t in inputs.items():
                t.copy_(fresh[key])
            del fresh
            self.device.sync()
            return inputs, outs
        outs = self._alloc_outputs(params)
        self.held = (dict(params), fresh, outs)
        return fresh, outs

    def _alloc_outputs(self, params):
        shapes = self.ref.output_shapes(dict(params))
        outs = {}
        for arg in self.task.outputs():
            outs[arg.name] = torch.empty(tuple(shapes[arg.name]), dtype=DTYPES[arg.dtype],
                                         device=self.device.torch_device)
        return outs

    @staticmethod
    def _poison(outs):
        for t in outs.values():
            poison(t)

    @staticmethod
    def _poison_left(outs):
        """Names of outputs that still hold poison somewhere (never written by the call)."""
        return [name for name, t in outs.items() if bool(unwritten(t).any())]

    def _device_findings(self):
        """Persisting L2 and the stream's access-policy window, reset after every call (class 9)."""
        if self.devstate is None:
            return []
        self.device.sync()
        return self.devstate.check_and_reset(self.device.stream_handle())

    def _call(self, impl, inputs, outs, scalars):
        fn = self.impls[impl]
        argv = []
        for arg in self.task.args:
            if arg.kind == "tensor":
                t = inputs[arg.name] if arg.role == "input" else outs[arg.name]
                argv.append(t.data_ptr())
            elif arg.kind == "stream":
                argv.append(self.device.stream_handle())
            else:
                argv.append(scalars[arg.name])
        return fn(*argv)

    def _sync_checked(self, what):
        try:
            self.device.sync()
        except RuntimeError as exc:
            raise CallFailed(f"{what}: {exc}") from None

    def _warm_baseline(self, params, scalars, inputs):
        """Call the baseline once before the candidate's first call: its threads calibrate what the
        toolchain itself starts (e.g. a static CUDA runtime), so the candidate is not blamed for them."""
        if self.baseline_warmed or "baseline" not in self.impls:
            return
        self.baseline_warmed = True
        before = procinfo.thread_ids()
        outs = self._alloc_outputs(params)
        self.mark("baseline")
        self._call("baseline", inputs, outs, scalars)
        self._sync_checked("baseline")
        self.mark("")
        started = (procinfo.thread_ids() - before) | self.baseline_new_threads
        self.thread_allowance = len(started & procinfo.thread_ids())

    def cmd_correct(self, msg):
        params, seed, scalars = msg["params"], msg["seed"], msg["scalars"]
        with self.device.stream_context():
            inputs, held_outs = self._trial_buffers(params, seed)
            fp_inputs = fingerprints(inputs)
            self._warm_baseline(params, scalars, inputs)
            runs, blobs = [], {}
            for r in range(msg.get("runs", 2)):
                outs = held_outs if r == 0 else self._alloc_outputs(params)
                self._poison(outs)
                self.device.sync()
                threads, maps = procinfo.thread_ids(), procinfo.mapped_libraries()
                self.mark("candidate")
                early = None
                if self.device.kind == "cuda" and r == 0:
                    rc, early = self._call_with_stream_probe(inputs, outs, scalars)
                else:
                    rc = self._call("candidate", inputs, outs, scalars)
                if self.device.kind == "cuda":
                    try:
                        self.device.stream.synchronize()
                    except RuntimeError as exc:
                        raise CallFailed(f"candidate: {exc}") from None
                    fp_returned = fingerprints(outs)
                    self._sync_checked("candidate")
                else:
                    fp_returned = fingerprints(outs)
                    time.sleep(0.002)  # a thread left behind would write now
                fp_later = fingerprints(outs)
                self.mark("")
                changed_inputs = [k for k, v in fingerprints(inputs).items() if v != fp_inputs[k]]
                run = {"rc": int(rc), "deferred": [k for k in outs if fp_returned[k] != fp_later[k]],
                       "early": early or [],
                       "inputs_changed": changed_inputs, "fingerprints": fp_later,
                       "findings": self._thread_findings(threads) + self._device_findings() +
                       [f"the call mapped {x}" for x in self._new_libraries(maps)]}
                # A repeat that is bit-identical to the first run is not sent again (outputs can be
                # gigabytes); the parent compares the first run with the reference in full.
                run["same_as_first"] = r > 0 and fp_later == runs[0]["fingerprints"]
                runs.append(run)
                if not run["same_as_first"]:
                    for name, t in outs.items():
                        blobs[f"{r}:{name}"] = t
                if changed_inputs:  # the next run would see other inputs: stop here
                    break
                self.tick()
        self.chan.send({"type": "result", "runs": runs, "input_fingerprints": fp_inputs}, blobs)

    def _call_with_stream_probe(self, inputs, outs, scalars):
        """Call the candidate while the harness's stream is held asleep, then read the outputs from a
        second stream and check that the hold was still in effect after that read. Work launched on
        `stream` cannot have run before the hold ended, so an output that is no longer poisoned was
        written by work on another stream (hack 3), however short the kernel. Returns (rc, outputs
        written early), or (rc, None) when the probe proves nothing: the call itself blocked past the
        hold (e.g. it synchronised the device) or the hold had ended by the time the read finished."""
        dev = self.device
        poisoned = fingerprints(outs)
        dev.sync()
        held = dev.hold(HOLD_MS)
        rc = self._call("candidate", inputs, outs, scalars)
        if held.query():
            return rc, None
        time.sleep(HOLD_MS / 4 / 1e3)      # let work on another stream run, if there is any
        probe = dev.probe_stream()
        with torch.cuda.stream(probe):
            seen = fingerprints(outs)
        probe.synchronize()
        if held.query():                   # the stream may have moved on before the read: no verdict
            return rc, None
        return rc, [k for k in outs if seen[k] != poisoned[k]]

    def cmd_time(self, msg):
        self.held = None   # the correctness trials are over: give their buffers back
        params, scalars, policy = msg["params"], msg["scalars"], msg["timing"]
        rng = random.Random(msg["shuffle_seed"])
        seed_base, n_sets = msg["seed_base"], msg["sets"]
        recheck = set(msg.get("recheck_reps", []))
        dev = self.device
        with dev.stream_context():
            sets = [self._make_inputs(params, seed_base + k) for k in range(n_sets)]
            outs = [self._alloc_outputs(params) for _ in range(n_sets)]
            impls, unsupported = [], {}
            for name in msg["impls"]:
                if name.startswith("peer:"):
                    reason = self._peer_support(name, sets[0], params)
                    if reason:
                        unsupported[name[5:]] = reason
                        continue
                impls.append(name)
            maps = procinfo.mapped_libraries()
            findings = []
            for name in impls[:]:     # warm-up: caches, lazy module loading, clocks
                for _ in range(policy["warmup_reps"]):
                    threads = procinfo.thread_ids()
                    try:
                        self._run_impl(name, sets[0], outs[0], scalars, params)
                        self._sync_checked(name)
                    except Exception as exc:
                        if name.startswith("peer:"):
                            self._drop_peer(name, exc, impls, unsupported)
                            break
                        raise CallFailed(f"{name}: {exc}") from None
                    if name == "candidate":
                        findings += self._thread_findings(threads)
                    self.tick()
            samples = {name: {"ms": [], "wall_ms": [], "tail_ms": [], "idle_ms": [], "idle_wall_ms": []}
                       for name in impls}
            rcs, unwritten, saved, last = {}, [], {}, None
            seed_next, t_start = seed_base + n_sets, time.monotonic()
            cand_reps, rounds = 0, 0
            while True:
                # Every other round on a GPU starts from an idle device (see CudaDevice.timed_call);
                # those calls are checked for hidden work and not counted as timing samples.
                padded = dev.kind != "cuda" or rounds % 2 == 0
                rounds += 1
                order = impls[:]
                rng.shuffle(order)
                for name in order:
                    k = rng.randrange(n_sets)
                    seed = seed_next
                    seed_next += 1
                    fresh = self._make_inputs(params, seed)       # new values on every call (hack 1)
                    for key, t in sets[k].items():
                        t.copy_(fresh[key])
                    del fresh
                    native = not name.startswith("peer:")
                    if native:
                        self._poison(outs[k])
                    threads = procinfo.thread_ids() if name == "candidate" else None
                    self.mark(name)
                    try:
                        rc, ms, wall, tail = dev.timed_call(
                            lambda: self._run_impl(name, sets[k], outs[k], scalars, params), padded=padded)
                    except Exception as exc:
                        if not native:
                            self._drop_peer(name, exc, impls, unsupported)
                            del samples[name]
                            continue
                        raise CallFailed(f"{name}: {exc}") from None
                    self.mark("")
                    s = samples[name]
                    s["ms" if padded else "idle_ms"].append(ms)
                    s["wall_ms" if padded else "idle_wall_ms"].append(wall)
                    s["tail_ms"].append(tail)
                    if rc:
                        rcs.setdefault(name, int(rc))
                    if name == "candidate":
                        findings += self._thread_findings(threads) + self._device_findings()
                        left = self._poison_left(outs[k])
                        if left:
                            unwritten.append({"rep": cand_reps, "outputs": left})
                        if cand_reps in recheck:
                            saved[cand_reps] = (seed, {n: t.clone() for n, t in outs[k].items()})
                        last = (cand_reps, seed, {n: t.clone() for n, t in outs[k].items()})
                        cand_reps += 1
                    self.tick()
                if self._done(samples, policy, time.monotonic() - t_start):
                    break
            if last is not None:
                saved[last[0]] = (last[1], last[2])
            findings = sorted(set(findings)) + [f"timing mapped {x}" for x in self._new_libraries(maps)]
            blobs, rechecks = {}, []
            for i, (r, (seed, tensors)) in enumerate(sorted(saved.items())):
                rechecks.append({"rep": r, "seed": seed})
                for n, t in tensors.items():
                    blobs[f"{i}:{n}"] = t
        self.chan.send({"type": "result", "samples": samples, "unsupported": unsupported, "rcs": rcs,
                        "unwritten": unwritten[:20], "unwritten_count": len(unwritten),
                        "rechecks": rechecks, "findings": findings,
                        "seconds": round(time.monotonic() - t_start, 3)}, blobs)

    def _drop_peer(self, name, exc, impls, unsupported):
        """A peer that fails mid-way is left out of the scenario, with the reason, not blamed on the
        candidate (unless the device itself is broken, which _sync_checked reports)."""
        self._sync_checked(name)
        unsupported[name[5:]] = f"failed during timing: {type(exc).__name__}: {exc}"
        impls.remove(name)

    @staticmethod
    def _done(samples, policy, elapsed):
        counts = [len(s["ms"]) for s in samples.values()]
        if not counts:
            return True
        if elapsed >= policy["max_seconds"] and min(counts) >= 3:
            return True
        if min(counts) >= policy["max_reps"]:
            return True
        if min(counts) < policy["min_reps"]:
            return False
        return all(rse_of_median(s["ms"]) <= policy["target_rse"] for s in samples.values())

    def _run_impl(self, name, inputs, outs, scalars, params):
        if name.startswith("peer:"):
            self._peer_fn(name)(inputs, dict(params))
            return 0
        return self._call(name, inputs, outs, scalars)

    def _peer_fn(self, name):
        fn_name = dict(self.task.peers)[name[5:]]
        return getattr(self.ref, fn_name)

    def _peer_support(self, name, inputs, params):
        from .api import Unsupported
        try:
            self._peer_fn(name)(inputs, dict(params))
            self.device.sync()
        except Unsupported as exc:
            return str(exc) or "unsupported"
        except Exception as exc:  # a peer that fails is left out, with the reason recorded
            return f"failed: {type(exc).__name__}: {exc}"
        return None


def main(argv):
    chan = Channel(int(argv[1]), int(argv[2]))
    child = Child(chan, argv[3] if len(argv) > 3 else None)
    handlers = {"init": child.cmd_init, "correct": child.cmd_correct, "time": child.cmd_time}
    while True:
        try:
            msg, _ = chan.recv()
        except Exception:
            return 0  # the parent went away
        if msg.get("cmd") == "exit":
            return 0
        try:
            handlers[msg["cmd"]](msg)
        except LoadFailed as exc:
            chan.send({"type": "error", "kind": "load", "message": str(exc), "fatal": True})
            return 3
        except CallFailed as exc:
            chan.send({"type": "error", "kind": "call", "message": str(exc), "fatal": True})
            return 3
        except Exception as exc:
            chan.send({"type": "error", "kind": "harness",
                       "message": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()})
            if msg.get("cmd") == "init":
                return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
