"""How far apart identical code reads from one evaluation to the next (an A/A/A check of the timing).

    python3 -m tools.lab.aa_spread --task-dir kernels/cpu_softmax [--kernel FILE] [--runs 15]
                                   [--scenarios quick] [--out DIR] [--read DIR]

Evaluates FILE (the task's baseline by default) `--runs` times as the candidate with FILE also as the
incumbent, each in a fresh harness process (`python3 -m harness eval`), and prints per scenario the
spread over runs of log(speedup vs the baseline) and log(speedup vs the incumbent), how many of the
runs called the scenario `faster` or `slower`, and the same for the summary. With FILE the baseline,
every comparison is identical code in two executors, so any spread between runs is the timing's:
an offset that holds for a whole evaluation (which no interval built from its rounds can show) and
the round-to-round noise left in the median. `--read DIR` prints the tables again from a previous
`--out DIR` without evaluating.
"""

import argparse
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import time


def evaluate(task_dir, kernel, scenarios, out):
    cmd = [sys.executable, "-m", "harness", "eval", "--task-dir", task_dir, "--candidate", kernel,
           "--incumbent", kernel, "--scenarios", scenarios, "--json", out]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 and not os.path.exists(out):
        raise SystemExit(f"aa_spread: the evaluation failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return time.monotonic() - t0


def _sd(xs):
    return statistics.stdev(xs) if len(xs) > 1 else float("nan")


def report(results):
    """Plain-text tables of the runs' spread, per scenario and for the summary."""
    ok = [r for r in results if r.get("status") == "ok"]
    lines = [f"{len(ok)} of {len(results)} evaluations ok"]
    if not ok:
        return "\n".join(lines)
    ids = [s["id"] for s in ok[0]["scenarios"]]
    lines.append(f"{'scenario':<14} {'x_base: sd log':>14} {'not same':>8} {'range':>13} | "
                 f"{'x_inc: sd log':>13} {'not same':>8} {'range':>13}")
    for sid in ids:
        rows = [next(s for s in r["scenarios"] if s["id"] == sid) for r in ok]
        cells = []
        for key in ("baseline", "incumbent"):
            xs = [s[f"speedup_vs_{key}"] for s in rows if s.get(f"speedup_vs_{key}")]
            differ = sum(s.get(f"verdict_vs_{key}") not in ("same", None) for s in rows)
            cells.append(f"{_sd([math.log(x) for x in xs]):>14.3f} {differ:>8} {min(xs):>6.3f}-{max(xs):<6.3f}"
                         if xs else f"{'-':>14}")
        lines.append(f"{sid:<14} {cells[0]} | {cells[1]}")
    lines.append("summary (x baseline [95 % interval] verdict | x incumbent [interval] verdict | seconds):")
    for r in ok:
        s = r["summary"]

        def part(key):
            ci = s.get(f"speedup_vs_{key}_ci") or [float("nan")] * 2
            g = s.get(f"speedup_vs_{key}_geomean")
            return f"{g:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] {s.get(f'verdict_vs_{key}')}" if g else "-"
        lines.append(f"  {part('baseline')} | {part('incumbent')} | {s.get('seconds')}")
    for key in ("baseline", "incumbent"):
        differ = sum(r["summary"].get(f"verdict_vs_{key}") not in ("same", None) for r in ok)
        geo = [math.log(r["summary"][f"speedup_vs_{key}_geomean"]) for r in ok
               if r["summary"].get(f"speedup_vs_{key}_geomean")]
        lines.append(f"summary vs {key}: not same in {differ} of {len(ok)}, sd log geomean {_sd(geo):.3f}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m tools.lab.aa_spread", description=__doc__.split("\n\n")[0])
    ap.add_argument("--task-dir", required=True)
    ap.add_argument("--kernel", help="the kernel evaluated against itself (default: the task's baseline)")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--scenarios", default="quick")
    ap.add_argument("--out", help="keep each evaluation's result JSON in this folder")
    ap.add_argument("--read", help="print the tables of the result JSONs in this folder, evaluating nothing")
    args = ap.parse_args(argv)
    if args.read:
        paths = sorted(glob.glob(os.path.join(args.read, "*.json")))
    else:
        import tempfile
        from harness.task.model import load_task
        kernel = args.kernel or str(load_task(args.task_dir).baseline)
        out = args.out or tempfile.mkdtemp(prefix="aa-spread-")
        os.makedirs(out, exist_ok=True)
        paths, spent = [], []
        for i in range(args.runs):
            paths.append(os.path.join(out, f"run{i + 1:03d}.json"))
            spent.append(evaluate(args.task_dir, kernel, args.scenarios, paths[-1]))
        print(f"{args.runs} evaluations of {kernel} against itself, {statistics.median(spent):.2f} s each "
              f"(median, wall), results in {out}")
    print(report([json.load(open(p)) for p in paths]))


if __name__ == "__main__":
    main()
