"""The `kernelseek.eval/1` result: status precedence, per-scenario figures, the summary."""

import math

from . import HARNESS_VERSION
import random

from .timing.stats import geomean, geomean_ci, median, verdict

SCHEMA = "kernelseek.eval/1"
# Most severe first: the first status present among the scenarios (or set by a stage) wins.
STATUS_ORDER = ("compile_error", "rejected", "timeout", "runtime_error", "incorrect", "ok")


def worst_status(statuses):
    present = set(statuses)
    for status in STATUS_ORDER:
        if status in present:
            return status
    return "ok"


def new_result(task, device_kind, candidate_info, options):
    return {
        "schema": SCHEMA,
        "harness_version": HARNESS_VERSION,
        "task": task.name,
        "device": device_kind,
        "gpu": None,
        "arch": None,
        "status": "ok",
        "correct": False,
        "summary": empty_summary(0),
        "scenarios": [],
        "compile": {"seconds": None, "registers": None, "smem_bytes": None, "spills": None, "log": "",
                    "cached": False},
        "messages": [],
        "flags": [],
        "candidate": candidate_info,
        "options": options,
        "device_info": {},
        "seeds": {},
        "timing_policy": dict(task.timing),
    }


def empty_summary(n):
    return {"scenarios": n, "correct": 0, "speedup_vs_baseline_geomean": None,
            "speedup_vs_peer_geomean": {}, "best_peer": None, "pct_of_peak_median": None,
            "seconds": None, "timed": 0, "goal": None, "speedup_vs_baseline_ci": None,
            "speedup_vs_peer_ci": {}, "verdict_vs_baseline": None, "verdict_vs_peer": {}}


def scenario_figures(entry, task, scenario):
    """Fill tflops, gbps, pct_of_peak and plausibility flags from the measured time."""
    t = entry.get("time_ms")
    if not t:
        return
    seconds = t / 1e3
    flops, nbytes = task.metric("flops", scenario), task.metric("bytes", scenario)
    entry["tflops"] = flops / seconds / 1e12 if flops is not None else None
    entry["gbps"] = nbytes / seconds / 1e9 if nbytes is not None else None
    fractions = []
    if entry["tflops"] is not None and task.peak.get("tflops"):
        fractions.append(entry["tflops"] / task.peak["tflops"])
    if entry["gbps"] is not None and task.peak.get("gbps"):
        fractions.append(entry["gbps"] / task.peak["gbps"])
    # Roofline: the binding resource is whichever fraction of its ceiling is higher.
    entry["pct_of_peak"] = 100.0 * max(fractions) if fractions else None
    reasons = []
    bound = task.plausibility["max_speedup_vs_baseline"]
    if entry.get("speedup_vs_baseline") and entry["speedup_vs_baseline"] > bound:
        reasons.append(f"{entry['speedup_vs_baseline']:.1f}x the baseline exceeds the task's plausibility "
                       f"bound of {bound}x")
    pct_bound = task.plausibility["max_pct_of_peak"]
    if entry["pct_of_peak"] is not None and entry["pct_of_peak"] > pct_bound:
        reasons.append(f"{entry['pct_of_peak']:.0f}% of the device's peak (roofline from the task's flops/"
                       f"bytes and peak) exceeds {pct_bound}%")
    if reasons:
        entry.setdefault("flags", []).append("implausible")
        entry["implausible"] = reasons


def summarise(result, task, seconds):
    scenarios = result["scenarios"]
    summary = empty_summary(len(scenarios))
    summary["correct"] = sum(1 for s in scenarios if s.get("correct"))
    timed = [s for s in scenarios if s.get("time_ms")]
    summary["timed"] = len(timed)
    summary["speedup_vs_baseline_geomean"] = geomean([s.get("speedup_vs_baseline") for s in timed])
    peers = {}
    for s in timed:
        for p, v in s.get("speedup_vs_peer", {}).items():
            peers.setdefault(p, []).append(v)
    summary["speedup_vs_peer_geomean"] = {p: geomean(v) for p, v in peers.items()}
    summary["peer_scenarios"] = {p: len(v) for p, v in peers.items()}
    if summary["speedup_vs_peer_geomean"]:
        # The fastest peer is the one the candidate is slowest against.
        summary["best_peer"] = min(summary["speedup_vs_peer_geomean"],
                                   key=lambda p: summary["speedup_vs_peer_geomean"][p])
    _intervals(summary, timed, result.get("seeds", {}).get("base"))
    pcts = [s["pct_of_peak"] for s in timed if s.get("pct_of_peak") is not None]
    summary["pct_of_peak_median"] = median(pcts)
    summary["seconds"] = round(seconds, 3)
    implausible = [s["id"] for s in scenarios if "implausible" in s.get("flags", [])]
    if implausible and "implausible" not in result["flags"]:
        result["flags"].append("implausible")
        result["messages"].append(f"implausible speedup or roofline on {len(implausible)} scenario(s) "
                                  f"({', '.join(implausible[:5])}): flagged, not counted as a win")
    summary["goal"] = _goal(result, task, summary, implausible)
    result["summary"] = summary
    statuses = [s["status"] for s in scenarios if s.get("status") not in (None, "skipped")]
    result["status"] = worst_status(statuses + [result["status"]])
    for status in STATUS_ORDER[:-1]:   # one line per failing status, naming the first scenario
        failing = [s for s in scenarios if s.get("status") == status]
        if failing:
            result["messages"].append(f"{status}: {len(failing)} of {len(scenarios)} scenario(s); first "
                                      f"{failing[0]['id']}: {failing[0].get('reason')}")
    all_correct = bool(scenarios) and summary["correct"] == len(scenarios)
    result["correct"] = all_correct and result["status"] == "ok"


def _intervals(summary, timed, base_seed):
    """The summary's 95 % intervals and verdicts from the scenarios' paired per-round ratios (the
    executor's timing records them; none when a timed scenario lacks them). Seeded from the base seed,
    so the same result always gets the same interval."""
    def ratios(s, key):
        return (s.get("timing") or {}).get("ratios", {}).get(key)
    lists = [ratios(s, "baseline") for s in timed if s.get("speedup_vs_baseline") is not None]
    if lists and all(lists):
        ci = geomean_ci(lists, random.Random(f"{base_seed}:ci:baseline"))
        summary["speedup_vs_baseline_ci"], summary["verdict_vs_baseline"] = ci, verdict(ci)
    inc = [s for s in timed if s.get("speedup_vs_incumbent") is not None]
    if inc:
        # Beside the run's best so far, in the same rounds: what "a new best" is decided on.
        summary["speedup_vs_incumbent_geomean"] = geomean([s["speedup_vs_incumbent"] for s in inc])
        summary["incumbent_scenarios"] = len(inc)
        lists = [ratios(s, "incumbent") for s in inc]
        ci = geomean_ci(lists, random.Random(f"{base_seed}:ci:incumbent")) if all(lists) else None
        summary["speedup_vs_incumbent_ci"], summary["verdict_vs_incumbent"] = ci, verdict(ci)
    for p in summary["speedup_vs_peer_geomean"]:
        lists = [ratios(s, f"peer:{p}") for s in timed if p in s.get("speedup_vs_peer", {})]
        if lists and all(lists):
            ci = geomean_ci(lists, random.Random(f"{base_seed}:ci:peer:{p}"))
            summary["speedup_vs_peer_ci"][p], summary["verdict_vs_peer"][p] = ci, verdict(ci)


def _goal(result, task, summary, implausible):
    vs, target = task.goal["vs"], task.goal["speedup"]
    if vs == "baseline":
        value = summary["speedup_vs_baseline_geomean"]
    else:
        peer = summary["best_peer"] if vs == "best_peer" else vs
        value = summary["speedup_vs_peer_geomean"].get(peer) if peer else None
    met = (value is not None and value >= target and not implausible and result["status"] == "ok"
           and summary["correct"] == summary["scenarios"] and summary["timed"] == summary["scenarios"])
    return {"vs": vs, "target": target, "value": value, "met": met}


def json_safe(obj):
    """The result with non-finite floats as null (JSON has no NaN/Inf)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj
