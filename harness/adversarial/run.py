"""Evaluate the adversarial candidates of a manifest and check each outcome against its expectation.

    python3 -m harness.adversarial.run harness/adversarial/cpu/manifest.yaml [--json out.json] [--only hack05]

Exit code 0 when every candidate was caught as expected. Used by the pytest suites and by
harness/gpu-acceptance.sh (the cuda manifest).
"""

import argparse
import copy
import json
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

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


def check(result, expect):
    """(ok, explanation) for one result against a manifest entry's `expect`."""
    statuses = expect["status"] if isinstance(expect["status"], list) else [expect["status"]]
    problems = []
    if result["status"] not in statuses:
        problems.append(f"status {result['status']}, expected {' or '.join(statuses)}")
    for flag in expect.get("flags", []):
        if flag not in result.get("flags", []):
            problems.append(f"flag {flag!r} missing")
    reasons = expect.get("reason")
    if reasons:
        wanted = reasons if isinstance(reasons, list) else [reasons]
        found = texts(result)
        if not any(w in t for w in wanted for t in found):
            problems.append(f"no reason contains {' or '.join(map(repr, wanted))}")
    if "implausible" in expect.get("flags", []) and result["summary"]["goal"]["met"]:
        problems.append("an implausible result counted as meeting the goal")
    return not problems, "; ".join(problems)


def run_entry(task_dir, entry, workdir, cache_dir=None):
    tdir = task_copy(task_dir, entry["task_overrides"], Path(workdir) / entry["file"].split(".")[0])
    result = evaluate(Options(task_dir=str(tdir), candidate=str(entry["path"]), scenarios=entry["scenarios"],
                              cache_dir=cache_dir, call_timeout=60))
    ok, why = check(result, entry["expect"])
    return {"file": entry["file"], "hack": entry["hack"], "status": result["status"],
            "flags": result.get("flags", []), "ok": ok, "why": why,
            "reason": next(iter(texts(result)), None), "result": json_safe(result)}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m harness.adversarial.run")
    p.add_argument("manifest")
    p.add_argument("--json", help="write all outcomes (with their full results) to this file")
    p.add_argument("--only", help="substring of the file names to run")
    p.add_argument("--cache-dir")
    args = p.parse_args(argv)
    task_dir, entries = load_manifest(args.manifest)
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="kernelseek-adv-") as tmp:
        for entry in entries:
            if args.only and args.only not in entry["file"]:
                continue
            out = run_entry(task_dir, entry, Path(tmp), args.cache_dir)
            outcomes.append(out)
            mark = "caught" if out["ok"] else "NOT CAUGHT"
            print(f"{mark:10} hack {out['hack']:>2}  {out['file']:34} {out['status']:13} "
                  f"{(out['why'] or out['reason'] or '')[:110]}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(outcomes, indent=1))
    missed = [o for o in outcomes if not o["ok"]]
    print(f"{len(outcomes) - len(missed)}/{len(outcomes)} adversarial candidates caught as expected")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
