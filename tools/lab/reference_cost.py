"""What a task's trusted side costs per scenario and seed, part by part (issue 14: the correctness
stage of a full flash_attn_fwd evaluation is about 20 of its 40-45 s).

    python3 -m tools.lab.reference_cost --task-dir kernels/flash_attn_fwd [--scenarios all]
        [--variant module:function ...] [--cache DIR] [--json out.json]

For every scenario, one seed, on the task's device, each synchronised and timed with the host's
clock: make_inputs, reference, lowp, and the tolerance's comparison (oracle.expected's parts).
With --variant (any number), each candidate replacement for reference() is timed too, and its
largest difference from reference() (absolute, and against the tolerance lowp sets) is printed
beside it, so a faster reference is judged by how far it moves before it replaces anything.
With --cache DIR, each scenario's reference is also kept in a reference cache there
(harness/task/refcache.py, every output kept whatever it costs) and loaded back, verified, onto the
device (`store`, `load`; `load_same`: bit for bit the reference), then removed, so the disk holds one
scenario at a time: per scenario, whether loading it beats computing it. The file was just written,
so `load` reads it from the page cache: a host whose cache outgrows its memory reads slower.
"""

import argparse
import importlib
import importlib.util
import json
import sys
import time

import torch

from harness.task.model import load_reference, load_task
from harness.task.oracle import Oracle
from harness.task.refcache import ReferenceCache, fingerprint, identity, task_digest
from harness.task.scenarios import select_scenarios
from harness.task.tolerance import max_abs_diff


def _timed(fn, sync):
    sync()
    t = time.perf_counter()
    out = fn()
    sync()
    return out, (time.perf_counter() - t) * 1e3


def _load(spec):
    """`module:function` or `path/to/file.py:function` (e.g. an earlier reference.py, kept aside)."""
    where, fn = spec.rsplit(":", 1)
    if where.endswith(".py"):
        loader = importlib.util.spec_from_file_location(f"variant_{abs(hash(where))}", where)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    return getattr(module, fn)


def _cached(cache, oracle, params, seed, inputs, ref, low, row, sync):
    """Store one scenario's reference, load it back (verified, onto the device), compare, remove it."""
    key, fp = cache.key(params, seed), fingerprint(inputs)
    errs = {k: max_abs_diff(low[k], v) for k, v in ref.items()}
    _, row["store"] = _timed(lambda: cache.put(key, ref, errs, fp, row["reference"] / 1e3, row["lowp"] / 1e3,
                                               always=True), sync)
    expected = {k: ((v.dtype,), tuple(v.shape)) for k, v in ref.items()}
    hit, row["load"] = _timed(lambda: cache.get(key, expected, oracle.device, fp), sync)
    row["bytes"] = sum(v.numel() * v.element_size() for v in ref.values())
    row["load_same"] = hit is not None and hit.ref is not None and all(
        torch.equal(hit.ref[k].reshape(-1).view(torch.uint8), v.contiguous().reshape(-1).view(torch.uint8))
        for k, v in ref.items())
    cache.discard(key)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task-dir", required=True)
    ap.add_argument("--scenarios", default="all")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--variant", action="append", default=[],
                    help="module:function or file.py:function taking (inputs, scenario) like reference(); "
                         "repeatable")
    ap.add_argument("--cache", help="a directory: each reference stored in a reference cache there and loaded back")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    task = load_task(args.task_dir)
    module = load_reference(task)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    oracle = Oracle(task, module, torch.device(device))
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    cache = None
    if args.cache:
        info = {"name": torch.cuda.get_device_name() if device == "cuda" else "cpu"}
        cache = ReferenceCache(args.cache, 1 << 50, identity(info, device), task_digest(task))
    variants = {}
    for spec in args.variant:
        variants[f"variant {spec}"] = _load(spec)   # never the name of a part above
    rows, totals = [], {}
    for sc in select_scenarios(task, args.scenarios):
        params = dict(sc.params)
        row = {"id": sc.id}
        inputs, row["inputs"] = _timed(lambda: module.make_inputs(dict(params), args.seed, device), sync)
        ref, row["reference"] = _timed(lambda: module.reference({k: v.clone() for k, v in inputs.items()},
                                                                dict(params)), sync)
        low, row["lowp"] = _timed(lambda: module.lowp({k: v.clone() for k, v in inputs.items()}, dict(params)), sync)
        tols, row["tolerance"] = _timed(lambda: {k: t for k, (t, _) in oracle.tolerances(low, ref).items()}, sync)
        if cache is not None:
            _cached(cache, oracle, params, args.seed, inputs, ref, low, row, sync)
        for name, fn in variants.items():
            alt, row[name] = _timed(lambda: fn({k: v.clone() for k, v in inputs.items()}, dict(params)), sync)
            diffs = {k: max_abs_diff(alt[k].float(), ref[k].float()) for k in ref}
            row[name + "_diff"] = max(diffs.values())
            row[name + "_diff_of_tol"] = max(diffs[k] / tols[k] if tols[k] else 0.0 for k in ref)
            del alt
        for k, v in row.items():
            if k in ("inputs", "reference", "lowp", "tolerance", "store", "load", *variants):
                totals[k] = totals.get(k, 0.0) + v
        rows.append(row)
        del inputs, ref, low
    rows.sort(key=lambda r: -r["reference"])
    for r in rows[:15]:
        print(" ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()))
    print("totals (s, one seed):", {k: round(v / 1e3, 3) for k, v in totals.items()})
    if cache is not None:
        faster = [r for r in rows if r["load"] < r["reference"]]
        print(f"cache: {len(faster)} of {len(rows)} scenarios load faster than their reference computes "
              f"({sum(r['bytes'] for r in faster) / 1e9:.2f} GB a seed, saving "
              f"{sum(r['reference'] - r['load'] for r in faster) / 1e3:.3f} s a seed beside lowp's "
              f"{totals.get('lowp', 0.0) / 1e3:.3f} s); every load the same bits: {all(r['load_same'] for r in rows)}")
    for name in variants:
        print(f"{name}: largest difference", max(r[name + "_diff"] for r in rows),
              "; of the tolerance", max(r[name + "_diff_of_tol"] for r in rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "totals_ms": totals, "torch": torch.__version__}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
