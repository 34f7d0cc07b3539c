#!/usr/bin/env python3
"""Standalone checker for a CUDA task folder and one .cu file, independent of harness/.

Compiles the file with nvcc into a .so, calls its entry point through ctypes on every scenario (or
--quick), compares with reference() by the task's tolerance rule
(max|out-ref| <= factor*max|lowp-ref| + atol, NaN/Inf never pass), then times the kernel and the
peers (CUDA events, L2 flushed before each rep, median) on the scenarios picked by --time.

  python3 tools/gpu-check/check.py kernels/rmsnorm kernels/rmsnorm/baseline.cu [--quick]
      [--only SUBSTR] [--time all|quick|none|SUBSTR,...] [--seeds 2] [--reps 10]
      [--budget SECONDS] [--log out.jsonl]

Without a GPU, `--device cpu` with a C++ stand-in of the kernel (standins/*.cpp, same signature,
bf16 as uint16_t) exercises this tool, reference.py and the tolerance rule on small scenarios:
  python3 tools/gpu-check/check.py kernels/flash_attn_fwd tools/gpu-check/standins/flash_attn_fwd.cpp \
      --device cpu --only sq113 --time none
run_device.sh is the one-call GPU run (both tasks, full logs under $OUT); summary.py condenses its log.

Uses the standard library, torch and PyYAML (to read task.yaml). Not the harness: no process
isolation, no anti-cheat; it is a tool to verify task folders and baselines.
"""
import argparse
import ctypes
import importlib.util
import itertools
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import yaml

ARCH_FLAGS = {"sm_90": "-gencode=arch=compute_90a,code=sm_90a", "sm_100": "-gencode=arch=compute_100a,code=sm_100a"}
DEVICE = "cuda"
CTYPES = {"tensor": ctypes.c_void_p, "stream": ctypes.c_void_p, "int32": ctypes.c_int32,
          "int64": ctypes.c_int64, "float32": ctypes.c_float}


def expr(text, params):
    return eval(str(text), {"__builtins__": {}, "math": math}, dict(params))


def scenarios(task):
    spec = task["scenarios"]
    names = spec["params"]
    out = []
    for block in spec.get("grid") or []:
        where = block.get("where")
        for combo in itertools.product(*[block[n] for n in names]):
            p = dict(zip(names, combo))
            if where is None or expr(where, p):
                out.append(p)
    out += [dict(p) for p in spec.get("list") or []]
    ids = [spec["id"].format(**p) for p in out]
    assert len(set(ids)) == len(ids), "duplicate scenario ids"
    return list(zip(ids, out))


def compile_so(task, cu, workdir):
    so = os.path.join(workdir, "kernel.so")
    if cu.endswith(".cu"):
        cmd = ["nvcc", "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "-Xptxas", "-v"]
        cmd += [ARCH_FLAGS[a] for a in task.get("architectures", [])]
        cmd += list(task["kernel"].get("compile", {}).get("flags") or [])
    else:  # a C++ stand-in, to exercise this tool on a machine without a GPU (--device cpu)
        cmd = ["g++", "-O2", "-std=c++17", "-shared", "-fPIC"]
    cmd += ["-o", so, cu]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    log = r.stdout + r.stderr
    if r.returncode != 0:
        sys.exit("compile failed:\n" + log)
    regs = [int(x) for x in re.findall(r"Used (\d+) registers", log)]
    spills = sum(int(x) for x in re.findall(r"(\d+) bytes spill stores", log))
    print("compiled %s in %.1fs: registers %s, spill stores %d bytes" % (os.path.basename(cu), time.time() - t0, regs, spills))
    return so


def load_reference(task_dir):
    spec = importlib.util.spec_from_file_location("task_reference", os.path.join(task_dir, "reference.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Runner:
    def __init__(self, task, so):
        k = task["kernel"]
        self.args = k["args"]
        self.fn = getattr(ctypes.CDLL(so), k["entry"])
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = [CTYPES[a["kind"]] for a in self.args]
        self.dtypes = {a["name"]: getattr(torch, a["dtype"]) for a in self.args if a["kind"] == "tensor"}

    def outputs(self, shapes):
        return {n: torch.full(s, float("nan"), dtype=self.dtypes[n], device=DEVICE) for n, s in shapes.items()}

    def bind(self, params, inputs, outputs):
        """The entry point with every argument fixed, so timed calls do no Python work but the call."""
        vals = []
        for a in self.args:
            if a["kind"] == "tensor":
                vals.append((inputs[a["name"]] if a["role"] == "input" else outputs[a["name"]]).data_ptr())
            elif a["kind"] == "stream":
                vals.append(torch.cuda.current_stream().cuda_stream if DEVICE == "cuda" else None)
            else:
                vals.append(expr(a["value"], params))
        return lambda: self.fn(*vals)


def max_err(out, ref):
    d = (out.float() - ref.float()).abs()
    return float("inf") if not torch.isfinite(out.float()).all() else d.max().item()


def where_wrong(out, ref, tol):
    """Where a wrong output is wrong: NaN count, share of bad elements, index of the worst one."""
    d = (out.float() - ref.float()).abs()
    nan = int((~torch.isfinite(out.float())).sum())
    d = torch.where(torch.isfinite(d), d, torch.full_like(d, float("inf")))
    bad = d > tol
    idx, n = int(d.flatten().argmax()), out.shape
    pos = []
    for size in reversed(n):
        pos.append(idx % size)
        idx //= size
    return "non-finite %d, bad %.4f of %d, worst at %s out %.4g ref %.4g" % (
        nan, bad.float().mean().item(), d.numel(), tuple(reversed(pos)),
        out.flatten()[int(d.flatten().argmax())].float().item(), ref.flatten()[int(d.flatten().argmax())].item())


def is_unsupported(e):
    return type(e).__name__ == "Unsupported"


def check(runner, ref_mod, task, sid, params, seeds):
    tol_spec = task["tolerance"]
    rec = {"id": sid, "ok": True, "err": 0.0, "tol": float("inf"), "peer_err": {}}
    for seed in seeds:
        inputs = ref_mod.make_inputs(params, seed, DEVICE)
        pristine = {n: t.clone() for n, t in inputs.items()}
        outs = runner.outputs(ref_mod.output_shapes(params))
        rc = runner.bind(params, inputs, outs)()
        sync()
        if rc != 0:
            rec.update(ok=False, reason="entry returned %d" % rc)
            return rec
        if any(not torch.equal(inputs[n], pristine[n]) for n in inputs):
            rec.update(ok=False, reason="inputs modified")
            return rec
        ref = ref_mod.reference(inputs, params)
        low = ref_mod.lowp(inputs, params)
        for name, out in outs.items():
            err, lerr = max_err(out, ref[name]), max_err(low[name], ref[name])
            tol = tol_spec["factor"] * lerr + tol_spec["atol"]
            rec["err"], rec["tol"] = max(rec["err"], err), min(rec["tol"], tol)
            rec["lowp_err"] = lerr
            rec["ref_max"] = ref[name].abs().max().item()  # what a zero output would score
            if not err <= tol:
                rec.update(ok=False, reason="seed %d %s: err %.3g > tol %.3g; %s" % (seed, name, err, tol, where_wrong(out, ref[name], tol)))
        if seed == seeds[0]:  # are the peers right? (informational)
            for p in task.get("peers") or []:
                try:
                    po = getattr(ref_mod, p["fn"])(inputs, params)
                    rec["peer_err"][p["name"]] = max(max_err(po[n], ref[n]) for n in outs)
                except Exception as e:
                    rec["peer_err"][p["name"]] = "unsupported" if is_unsupported(e) else "error: %s" % e
        del inputs, pristine, outs, ref, low
    return rec


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def time_fn(fn, flush, reps, warmup=2):
    """Median milliseconds of fn over reps, caches flushed before each rep."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(reps):
        flush.zero_()
        if DEVICE == "cuda":
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def bench(runner, ref_mod, task, sid, params, reps, flush):
    inputs = ref_mod.make_inputs(params, 12345, DEVICE)
    outs = runner.outputs(ref_mod.output_shapes(params))
    call = runner.bind(params, inputs, outs)
    if call() != 0:
        return {"kernel": "error: entry returned non-zero"}
    res = {"kernel": time_fn(call, flush, reps)}
    for p in task.get("peers") or []:
        fn = getattr(ref_mod, p["fn"])
        try:
            res[p["name"]] = time_fn(lambda: fn(inputs, params), flush, reps)
        except Exception as e:
            res[p["name"]] = None if is_unsupported(e) else "error: %s" % e
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("task_dir")
    ap.add_argument("cu")
    ap.add_argument("--quick", action="store_true", help="only the task's quick subset")
    ap.add_argument("--only", help="only scenario ids containing this substring")
    ap.add_argument("--time", default="quick", help="all | quick | none | comma-separated id substrings")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--budget", type=float, default=1e9, help="seconds; timing stops past it")
    ap.add_argument("--log", help="append one JSON line per scenario here")
    ap.add_argument("--device", help="cpu: run a C++ stand-in of the kernel on the CPU (tests this tool)")
    a = ap.parse_args()

    t_start = time.time()
    with open(os.path.join(a.task_dir, "task.yaml")) as f:
        task = yaml.safe_load(f)
    quick = set(task["scenarios"].get("quick") or [])
    todo = [(i, p) for i, p in scenarios(task) if (not a.quick or i in quick) and (not a.only or a.only in i)]
    global DEVICE
    DEVICE = a.device or task["device"]
    gpu = torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu"
    print("%s: %d scenarios on %s, torch %s" % (task["name"], len(todo), gpu, torch.__version__))
    workdir = tempfile.mkdtemp(prefix="gpu-check-")
    runner = Runner(task, compile_so(task, a.cu, workdir))
    sys.path.insert(0, os.path.abspath(os.path.join(a.task_dir, "..", "..")))  # harness.api, if present
    ref_mod = load_reference(a.task_dir)
    log = open(a.log, "a") if a.log else None
    seeds = list(range(1, a.seeds + 1))

    recs, n_ok = {}, 0
    print("%-42s %-4s %10s %10s %7s  %s" % ("scenario", "ok", "max_err", "tol", "err/tol", "peer errors"))
    for sid, params in todo:
        try:
            rec = check(runner, ref_mod, task, sid, params, seeds)
        except Exception as e:  # keep going: one broken scenario must not hide the others
            rec = {"id": sid, "ok": False, "reason": "exception: %r" % e, "err": float("nan"), "tol": float("nan"), "peer_err": {}}
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
        recs[sid] = rec
        n_ok += rec["ok"]
        pe = " ".join("%s=%s" % (k, "%.3g" % v if isinstance(v, float) else v) for k, v in rec["peer_err"].items())
        print("%-42s %-4s %10.3g %10.3g %7.3f  %s %s" % (sid, "ok" if rec["ok"] else "FAIL", rec["err"], rec["tol"],
                                                      rec["err"] / rec["tol"] if rec["tol"] else float("nan"), pe,
                                                      rec.get("reason", "")), flush=True)
    print("correct: %d/%d (%.0fs)" % (n_ok, len(todo), time.time() - t_start))

    if a.time == "all":
        timed = todo
    elif a.time == "quick":
        timed = [(i, p) for i, p in todo if i in quick]
    elif a.time == "none":
        timed = []
    else:
        subs = a.time.split(",")
        timed = [(i, p) for i, p in todo if any(s in i for s in subs)]
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=DEVICE)  # > 4x the H200's L2
    peers = [p["name"] for p in task.get("peers") or []]
    print("\n%-42s %9s %8s %8s  %s" % ("scenario", "ms", "TFLOP/s", "GB/s", "  ".join("%s ms (TFLOP/s, x)" % p for p in peers)))
    ratios = {p: [] for p in peers}
    for sid, params in timed:
        if time.time() - t_start > a.budget:
            print("budget reached: %d scenarios not timed" % (len(timed) - timed.index((sid, params))))
            break
        res = bench(runner, ref_mod, task, sid, params, a.reps, flush)
        flops, nbytes = expr(task["metrics"]["flops"], params), expr(task["metrics"]["bytes"], params)
        ms = res["kernel"]
        if not isinstance(ms, float):
            print("%-42s %s" % (sid, ms))
            continue
        cols = []
        for p in peers:
            v = res[p]
            if isinstance(v, float):
                ratios[p].append(v / ms)
                cols.append("%8.3f (%6.1f, %5.2fx)" % (v, flops / v / 1e9, v / ms))
            else:
                cols.append("%24s" % ("unsupported" if v is None else v[:24]))
        print("%-42s %9.3f %8.1f %8.0f  %s" % (sid, ms, flops / ms / 1e9, nbytes / ms / 1e6, "  ".join(cols)), flush=True)
        recs[sid]["time_ms"] = res
        recs[sid]["tflops"] = flops / ms / 1e9
        recs[sid]["gbps"] = nbytes / ms / 1e6
    for p in peers:
        if ratios[p]:
            g = math.exp(sum(math.log(r) for r in ratios[p]) / len(ratios[p]))
            print("kernel speedup vs %s, geomean over %d: %.3fx" % (p, len(ratios[p]), g))
    if log:
        for rec in recs.values():
            log.write(json.dumps(dict(rec, task=task["name"])) + "\n")
    print("done in %.0fs" % (time.time() - t_start))
    return 0 if n_ok == len(todo) else 1


if __name__ == "__main__":
    sys.exit(main())
