"""Evaluate the adversarial candidates of a manifest and check each outcome against its expectation.

    python3 -m harness.adversarial.run harness/adversarial/cpu/manifest.yaml [--json out.json] [--only hack05]

Exit code 0 when every candidate was caught as expected. Used by the pytest suites and by
scripts/gpu/verify.sh (the cuda manifest).
"""

import argparse
import copy
import os
import json
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

from ..errors import EnvironmentProblem
from ..evaluate import Options, evaluate
from ..result import json_safe

REPO = Path(__file__).resolve().parents[2]


def load_manifest(path):
    path = Path(path)
    data = yaml.safe_load(path.read_text())
    entries = []
    for item in data["candidates"]:
        entry = dict(item)
        entry["path"] = path.parent / item["file"]
        entry.setdefault("scenarios", data.get("scenarios", "quick"))
        entry["task_overrides"] = _merge(copy.deepcopy(data.get("task_overrides") or {}),
                                         item.get("task_overrides") or {})
        entries.append(entry)
    return REPO / data["task"], entries


def _merge(base, extra):
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def task_copy(task_dir, overrides, workdir):
    """A copy of the task folder with `overrides` merged into task.yaml (same folder name)."""
    if not overrides:
        return task_dir
    dest = Path(workdir) / task_dir.name
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(task_dir, dest)
    data = yaml.safe_load((dest / "task.yaml").read_text())
    (dest / "task.yaml").write_text(yaml.safe_dump(_merge(data, overrides), sort_keys=False))
    return dest


def texts(result):
    """Everything a reason may appear in: scenario reasons, implausibility notes, messages."""
    out = list(result["messages"])
    for s in result["scenarios"]:
        out.extend(x for x in [s.get("reason")] + s.get("implausible", []) if x)
    return out


STAGE_PREFIX = {"source": "source check:", "binary": "binary check:"}


def check(result, expect, stage=None):
    """(ok, explanation) for one result against a manifest entry's `expect` (and `stage`)."""
    statuses = expect["status"] if isinstance(expect["status"], list) else [expect["status"]]
    problems = []
    if result["status"] not in statuses:
        problems.append(f"status {result['status']}, expected {' or '.join(statuses)}")
    for flag in expect.get("flags", []):
        if flag not in result.get("flags", []):
            problems.append(f"flag {flag!r} missing")
    reasons = expect.get("reason")
    # An entry may allow `ok` beside a refusal: then an `ok` carries no reason, only the cap below.
    if reasons and not (result["status"] == "ok" and len(statuses) > 1):
        wanted = reasons if isinstance(reasons, list) else [reasons]
        found = texts(result)
        if not any(w in t for w in wanted for t in found):
            problems.append(f"no reason contains {' or '.join(map(repr, wanted))}")
    # A cheat whose defence is structural (the clock, the baseline live elsewhere) may still be `ok`:
    # then it must have gained nothing, which the figure it was after shows.
    cap = expect.get("max_speedup_vs_baseline")
    if cap is not None and result["status"] == "ok":
        got = result["summary"].get("speedup_vs_baseline_geomean")
        if got is None or got > cap:
            problems.append(f"speedup over the baseline {got}, expected at most {cap} (the cheat paid off)")
    # A control (the defence behind it turned off, `without:`) must show the cheat paying off: else the
    # entries that expect it caught prove nothing (an attack that does not work is "caught" for free).
    floor = expect.get("min_speedup_vs_baseline")
    if floor is not None:
        got = result["summary"].get("speedup_vs_baseline_geomean")
        if got is None or got < floor:
            problems.append(f"speedup over the baseline {got}, expected at least {floor} (the cheat did not work "
                            f"with the defence off)")
    if "implausible" in expect.get("flags", []) and result["summary"]["goal"]["met"]:
        problems.append("an implausible result counted as meeting the goal")
    prefix = STAGE_PREFIX.get(stage)
    if prefix and not any(m.startswith(prefix) for m in result["messages"]):
        problems.append(f"not refused by the {stage} check")
    return not problems, "; ".join(problems)


# Defences an entry may name under `without:` so that the one behind them is tested alone (the
# allowlist refuses most native tricks before they run; the run-time checks must still hold).
LAYERS = {"allowlist": "allowlist", "seccomp": "confine", "sandbox": "sandbox", "bound": "bound",
          "parent_l2": "parent_l2", "variants": "variants"}


def layers_off(entry):
    unknown = set(entry.get("without") or ()) - set(LAYERS)
    if unknown:
        raise ValueError(f"{entry['file']}: unknown layer(s) under without: {sorted(unknown)}; known: {sorted(LAYERS)}")
    return {LAYERS[name]: False for name in entry.get("without") or ()}


def run_entry(task_dir, entry, workdir, cache_dir=None, **settings):
    """Evaluate one manifest entry. ok is None when the candidate passed every check that runs
    without its device (e.g. a CUDA candidate on a machine without a GPU): not caught, not missed."""
    tdir = task_copy(task_dir, entry["task_overrides"], Path(workdir) / entry["file"].split(".")[0])
    try:
        result = evaluate(Options(task_dir=str(tdir), candidate=str(entry["path"]), scenarios=entry["scenarios"],
                                  cache_dir=cache_dir, **{"call_timeout": 60, **settings, **layers_off(entry)}))
    except EnvironmentProblem as exc:
        return {"file": entry["file"], "hack": entry.get("hack"), "trust": entry.get("trust"), "status": None,
                "flags": [], "ok": None,
                "why": f"passed the static checks; its runtime defence needs the device: {exc}",
                "reason": None, "result": None}
    ok, why = check(result, entry["expect"], entry.get("stage"))
    return {"file": entry["file"], "hack": entry.get("hack"), "trust": entry.get("trust"),
            "status": result["status"],
            "flags": result.get("flags", []), "ok": ok, "why": why,
            "reason": next(iter(texts(result)), None), "result": json_safe(result)}


def prebuild(task_dir, entries, cache_dir, jobs=None):
    """Compile every candidate (and the baseline) in parallel into the cache before the sequential
    evaluations: nvcc takes seconds per file, the evaluations then find cached libraries. Entries
    the source check refuses are not compiled (the evaluation refuses them without a build)."""
    from concurrent.futures import ThreadPoolExecutor

    from ..build.compile import build
    from ..build.static_checks import check_source
    from ..task.model import load_task

    task = load_task(task_dir)
    if task.python:
        return     # Triton: nothing to compile before the device
    sources = [task.baseline.read_bytes()] + [e["path"].read_bytes() for e in entries]
    sources = [src for src in sources if not check_source(src, task)]
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        list(pool.map(lambda src: build(task, src, cache_dir), sources))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m harness.adversarial.run")
    p.add_argument("manifest")
    p.add_argument("--json", help="write all outcomes (with their full results) to this file")
    p.add_argument("--only", help="substring of the file names to run")
    p.add_argument("--cache-dir")
    p.add_argument("--task-dir", help="evaluate against this task folder instead of the manifest's")
    p.add_argument("--bound-batch", action="store_true", help="CUDA: the bound requests in batch mode (Options.bound_batch)")
    p.add_argument("--call-timeout", type=float, default=60.0,
                   help="seconds without progress before a candidate's executor is killed (Options.call_timeout)")
    args = p.parse_args(argv)
    task_dir, entries = load_manifest(args.manifest)
    task_dir = Path(args.task_dir).resolve() if args.task_dir else task_dir
    if args.only:
        entries = [e for e in entries if args.only in e["file"]]
    prebuild(task_dir, entries, args.cache_dir)
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="kernelseek-adv-") as tmp:
        for entry in entries:
            out = run_entry(task_dir, entry, Path(tmp), args.cache_dir, bound_batch=args.bound_batch,
                            call_timeout=args.call_timeout)
            outcomes.append(out)
            if args.json:   # after every candidate, so that a run cut short keeps what it found
                Path(args.json).write_text(json.dumps(outcomes, indent=1))
            mark = {True: "caught", False: "NOT CAUGHT", None: "not run"}[out["ok"]]
            kind = f"hack {out['hack']:>2}" if out.get("hack") else f"trust {out['trust']}"
            print(f"{mark:10} {kind:8} {out['file']:34} {out['status'] or '-':13} "
                  f"{(out['why'] or out['reason'] or '')[:110]}", flush=True)
    missed = [o for o in outcomes if o["ok"] is False]
    not_run = [o for o in outcomes if o["ok"] is None]
    caught = len(outcomes) - len(missed) - len(not_run)
    print(f"{caught}/{len(outcomes)} adversarial candidates caught as expected"
          + (f", {len(missed)} NOT caught" if missed else "")
          + (f", {len(not_run)} not run (they need the device)" if not_run else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
