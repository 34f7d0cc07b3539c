"""Command line: `python3 -m harness eval|scenarios|check-task|check-result ...`."""

import argparse
import json
import os
import sys
import time
from pathlib import Path

from .errors import HarnessError
from .executor.lanes import DEFAULT_PROCESSES, MAX_PROCESSES
from .progress import Progress


def process_started():
    """When this process started, on time.monotonic()'s clock (/proc/self/stat's start time against
    the boot-time clock it counts on); now where that cannot be read. The evaluation's time limit
    counts from there: the interpreter's start and torch's import are seconds on a loaded host, and
    the worker that spawned us counts its own hard limit from the spawn."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as f:
            ticks = int(f.read().rsplit(b")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    # A figure no start of ours could take (a clock that is not the boot-time one in a namespace):
    # ignored rather than trusted.
    return now - age if 0.0 <= age <= 120.0 else now


def _parser():
    p = argparse.ArgumentParser(prog="python3 -m harness", description="KernelSeek kernel harness")
    sub = p.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("eval", help="evaluate one candidate kernel file against a task")
    ev.add_argument("--task-dir", required=True, help="task folder (kernels/<task>) from the trusted checkout")
    ev.add_argument("--candidate", required=True, help="the candidate's single source file")
    ev.add_argument("--scenarios", default="all", help="all | quick | comma-separated substrings or globs of ids")
    ev.add_argument("--device", choices=["cpu", "cuda"], help="defaults to the task's device")
    ev.add_argument("--json", dest="json_out", help="write the result JSON to this file, or - for stdout")
    ev.add_argument("--table", action="store_true", help="print a readable table")
    ev.add_argument("--seeds", type=int, default=2, help="correctness seeds per scenario (>= 2)")
    ev.add_argument("--seed", type=int, help="base seed (random per evaluation when omitted)")
    ev.add_argument("--no-peers", action="store_true", help="do not time the task's peers")
    ev.add_argument("--keep-peers", action="store_true", default=True,
                    help="CUDA: keep the peers' figures on this GPU and use those kept by earlier evaluations "
                         "(the default)")
    ev.add_argument("--fresh-peers", dest="keep_peers", action="store_false",
                    help="CUDA: time the peers again in this evaluation, neither using nor keeping kept figures")
    ev.add_argument("--peers-apart", action="store_true", default=True,
                    help="CUDA: when this evaluation measures the peers (a host's first), time the candidate again "
                         "afterwards against their kept figures, as later evaluations do (the default)")
    ev.add_argument("--peers-together", dest="peers_apart", action="store_false",
                    help="CUDA: the candidate's figures from the rounds that measure the peers (before 2026-12-04)")
    ev.add_argument("--peer-processes", type=_processes, default=DEFAULT_PROCESSES, metavar="N",
                    help=f"CUDA: when this evaluation measures the peers, time each in N processes at once, each "
                         f"round the mean of them: a peer's kernel mode can be set per process (1-{MAX_PROCESSES}, "
                         f"default {DEFAULT_PROCESSES})")
    ev.add_argument("--events-only", action="store_true",
                    help="CUDA: time calls by their events only, not by CUPTI's records of their kernels")
    ev.add_argument("--no-baseline", action="store_true", help="do not time the baseline")
    ev.add_argument("--bound-batch", action="store_true",
                    help="CUDA: bound the figures by the slope of a batch of calls over one call (what a request "
                         "costs apart from its calls cancels), instead of single calls' walls")
    ev.add_argument("--full-rounds", dest="early_stop", action="store_false",
                    help="every scenario's rounds go on to the task's min_reps, even once its verdicts are settled")
    ev.add_argument("--samples", action="store_true",
                    help="keep every round's figure of every implementation in each scenario's timing.samples_ms "
                         "(ms, in round order), for studying the figures' spread")
    ev.add_argument("--incumbent", help="the run's current best kernel: timed side by side with the candidate, "
                                        "in an executor of its own (speedup_vs_incumbent, verdict_vs_incumbent)")
    ev.add_argument("--progress", choices=["jsonl"], help="progress events on stderr")
    ev.add_argument("--cache-dir", help="compile cache (default $KERNELSEEK_DATA_DIR/compile-cache)")
    ev.add_argument("--reference-cache-gb", type=_gib, default=16.0, metavar="GB",
                    help="keep the reference's outputs per scenario and seed in at most GB GiB beside the "
                         "compile cache (0: off)")
    ev.add_argument("--seed-pool", type=_pool, default=2, metavar="N",
                    help="without --seed, the correctness seeds after each scenario's first (always fresh) come "
                         "from one of the host's N base seeds (0: from the evaluation's own random seed)")
    ev.add_argument("--call-timeout", type=float, default=30.0, help="seconds without progress before a "
                                                                      "call counts as hung")
    ev.add_argument("--timeout", type=float, default=1800.0, help="seconds for the whole evaluation")
    ev.add_argument("--compile-only", action="store_true",
                    help="the source checks, the compile and the binary checks only (no device needed): registers, "
                         "shared memory and spills in a kernelseek.compile/1 result")

    sc = sub.add_parser("scenarios", help="list a task's scenario ids")
    sc.add_argument("--task-dir", required=True)
    sc.add_argument("--scenarios", default="all")
    sc.add_argument("--json", action="store_true", help="ids with their params as JSON")

    ct = sub.add_parser("check-task", help="validate a task folder (task.yaml and reference.py)")
    ct.add_argument("--task-dir", required=True)
    ct.add_argument("--json", action="store_true",
                    help="every problem at once: {problems: [{file, line, field, message, fix}], warnings}")

    cr = sub.add_parser("check-result", help="validate a result JSON against kernelseek.eval/1")
    cr.add_argument("path")
    return p


def main(argv=None, started=None):
    """`started`: when this process started (time.monotonic()), which `python3 -m harness` passes
    (process_started()): an evaluation's time limit counts from there. None: from evaluate()'s call."""
    args = _parser().parse_args(argv)
    try:
        return _dispatch(args, started)
    except HarnessError as exc:
        sys.stderr.write(f"harness: error: {exc}\n")
        return exc.exit_code


def _dispatch(args, started):
    if args.command == "eval":
        return _eval(args, started)
    if args.command == "scenarios":
        from .task.scenarios import select_scenarios
        from .task.model import load_task
        task = load_task(args.task_dir)
        chosen = select_scenarios(task, args.scenarios)
        if args.json:
            print(json.dumps([{"id": s.id, "params": s.params} for s in chosen], indent=1))
        else:
            print("\n".join(s.id for s in chosen))
        return 0
    if args.command == "check-task":
        from .check_task import check_task
        from .task.model import load_reference, load_task
        report = check_task(args.task_dir)
        if args.json:
            print(json.dumps(report, indent=1))
            return 0 if report["ok"] else 3
        for prob in report["problems"]:
            where = prob["file"] + (f":{prob['line']}" if prob["line"] else "")
            sys.stderr.write(f"{where}: {prob['field'] + ': ' if prob['field'] else ''}{prob['message']}"
                             f" (fix: {prob['fix']})\n")
        if report["problems"]:
            return 3
        task = load_task(args.task_dir)
        load_reference(task)
        for w in task.warnings:
            sys.stderr.write(f"warning: {w}\n")
        print(json.dumps({"task": task.name, "device": task.device, "scenarios": len(task.scenarios),
                          "quick": len(task.quick), "peers": [p for p, _ in task.peers],
                          "entry": task.entry}))
        return 0
    if args.command == "check-result":
        from .schema import validate_result
        problems = validate_result(json.loads(Path(args.path).read_text()))
        for p in problems:
            print(p)
        return 1 if problems else 0
    raise AssertionError(args.command)


def _processes(text):
    """--peer-processes: a whole number from 1 to MAX_PROCESSES."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_PROCESSES:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of processes from 1 to {MAX_PROCESSES}")
    return n


def _gib(text):
    """--reference-cache-gb: a size in GiB, 0 or more."""
    try:
        gb = float(text)
    except ValueError:
        gb = -1.0
    if not 0 <= gb < 1e6:
        raise argparse.ArgumentTypeError(f"{text!r}: a size in GiB, 0 (off) or more")
    return gb


def _pool(text):
    """--seed-pool: how many base seeds, 0 to 1000."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if not 0 <= n <= 1000:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of seeds from 0 (no pool) to 1000")
    return n


def _eval(args, started):
    from .options import Options
    if args.compile_only:
        from .compile_only import compile_only
        from .result import json_safe
        text = json.dumps(json_safe(compile_only(args.task_dir, args.candidate, args.cache_dir)), indent=1)
        if args.json_out and args.json_out != "-":
            Path(args.json_out).write_text(text + "\n")
        else:
            sys.stdout.write(text + "\n")
        return 0
    opts = Options(task_dir=args.task_dir, candidate=args.candidate, scenarios=args.scenarios,
                   device=args.device, seeds=args.seeds, seed=args.seed, with_peers=not args.no_peers,
                   keep_peers=args.keep_peers, cupti=not args.events_only, with_baseline=not args.no_baseline,
                   samples=args.samples, early_stop=args.early_stop, peers_apart=args.peers_apart,
                   peer_processes=args.peer_processes, bound_batch=args.bound_batch,
                   cache_dir=args.cache_dir, reference_cache_gb=args.reference_cache_gb, seed_pool=args.seed_pool,
                   incumbent=args.incumbent, call_timeout=args.call_timeout, timeout=args.timeout,
                   started=started, progress=Progress(args.progress))
    opts.early = _early_peers(opts)
    try:
        from .evaluate import evaluate   # imports torch (1-2 s): the peers' executor starts meanwhile
        result = evaluate(opts)
    finally:
        if opts.early is not None:
            opts.early.close()     # evaluate() did not take it up (a usage error stopped it first)
    from .result import json_safe
    from .table import render_table
    text = json.dumps(json_safe(result), indent=1, allow_nan=False)
    json_to_stdout = args.json_out == "-" or (args.json_out is None and not args.table)
    if args.json_out and args.json_out != "-":
        Path(args.json_out).write_text(text + "\n")
    if json_to_stdout:
        sys.stdout.write(text + "\n")
    if args.table:
        (sys.stderr if json_to_stdout else sys.stdout).write(render_table(result))
    return 0


def _early_peers(opts):
    """The evaluation's EarlyPeers, made before this process imports torch, or None when the task does
    not load (evaluate() then says why) or has nothing to start early."""
    from .executor.pair import EarlyPeers
    from .task.model import load_task
    try:
        task = load_task(opts.task_dir)
    except HarnessError:
        return None
    device_kind = opts.device or task.device
    if not (opts.with_peers and task.peers):
        return None
    return EarlyPeers(task, device_kind, opts)
