"""Read harness results: repeatability of two runs, peer TFLOP/s against ANCHORS.md, outcome tables.

    python3 -m tools.lab.compare_results repeat A.json B.json
    python3 -m tools.lab.compare_results estimators A.json B.json    (results of eval --samples)
    python3 -m tools.lab.compare_results fidelity RESULT.json FIDELITY.json [more.json ...]
                                              (eval --samples; cupti_fidelity --json, several pooled)
    python3 -m tools.lab.compare_results modes FIDELITY.json                 (cupti_fidelity --json)
    python3 -m tools.lab.compare_results runs FIDELITY.json [more.json ...]  (the same calls in several runs)
    python3 -m tools.lab.compare_results shares RUN.json [more.json ...]     (results and/or cupti_fidelity reports)
    python3 -m tools.lab.compare_results shares-work RUN.json [more.json ...] (the same on the work, gaps left out)
    python3 -m tools.lab.compare_results slots RESULT.json                   (eval --samples, CUDA)
    python3 -m tools.lab.compare_results lanes RESULT.json [more.json ...]    (the peers' processes apart, CUDA)
    python3 -m tools.lab.compare_results anchors result.json
    python3 -m tools.lab.compare_results summary result.json [more.json ...]
    python3 -m tools.lab.compare_results adversarial outcomes.json
    python3 -m tools.lab.compare_results bound RESULT.json [more.json ...]  (results or adversarial outcomes,
                                              with the bound in batch mode: what each margin leaves)

Used by scripts/gpu/verify.sh; prints plain-text tables.
"""

import json
import sys

from harness.timing.stats import harrell_davis_median, interquartile_mean, median, percentile, trimmed_mean

# ANCHORS.md "Attention forward performance": one H200, torch 2.11, cuDNN 9.19, triton do_bench,
# batch x seqlen = 32k tokens, hidden 2048. (head dim, causal) -> {seqlen: (cuDNN, flash) TFLOP/s}.
ANCHORS = {
    (64, 0): {512: (386, 273), 2048: (446, 302), 8192: (459, 310), 16384: (462, 311)},
    (64, 1): {512: (272, 156), 2048: (391, 269), 8192: (432, 301), 16384: (448, 304)},
    (128, 0): {512: (498, 306), 2048: (584, 332), 8192: (601, 349), 16384: (606, 350)},
    (128, 1): {512: (345, 193), 2048: (489, 296), 8192: (552, 332), 16384: (579, 332)},
    (256, 0): {512: (549, 285), 2048: (625, 312), 8192: (650, 305), 16384: (657, 322)},
    (256, 1): {512: (365, 220), 2048: (533, 284), 8192: (626, 300), 16384: (622, 305)},
}


def _load(path):
    with open(path) as fh:
        return json.load(fh)


def repeat(a_path, b_path):
    """Per-scenario relative difference of the median times of two runs, for every implementation."""
    a, b = _load(a_path), _load(b_path)
    by_id = {s["id"]: s for s in b["scenarios"]}
    lines, worst = [], []
    for impl in ["candidate", "baseline"] + sorted({p for s in a["scenarios"] for p in s.get("peer_ms", {})}):
        diffs = []
        for s in a["scenarios"]:
            t = by_id.get(s["id"])
            x, y = _time(s, impl), _time(t, impl) if t else None
            if x and y:
                diffs.append((abs(y - x) / x, s["id"], x, y))
        if not diffs:
            continue
        rel = [d[0] * 100 for d in diffs]
        lines.append(f"{impl:10} {len(diffs):4} scenarios  median {median(rel):5.2f}%  p90 {percentile(rel, 0.9):5.2f}%  "
                     f"max {max(rel):6.2f}%  run2 slower in {sum(d[3] > d[2] for d in diffs)}/{len(diffs)}")
        worst.extend((d[0], impl, d[1], d[2], d[3]) for d in diffs)
    sa, sb = a["summary"], b["summary"]
    lines.append(f"speedup vs baseline geomean: {sa['speedup_vs_baseline_geomean']} vs {sb['speedup_vs_baseline_geomean']}")
    for p in sa.get("speedup_vs_peer_geomean", {}):
        lines.append(f"speedup vs {p} geomean: {sa['speedup_vs_peer_geomean'][p]} vs "
                     f"{sb.get('speedup_vs_peer_geomean', {}).get(p)}")
    lines.append("largest differences:")
    for d, impl, sid, x, y in sorted(worst, reverse=True)[:5]:
        lines.append(f"  {impl:10} {sid:44} {x:.4f} ms -> {y:.4f} ms ({d * 100:+.1f}%)")
    return "\n".join(lines)


ESTIMATORS = {"median": median, "harrell-davis": harrell_davis_median, "iq-mean": interquartile_mean,
              "trimmed-mean": trimmed_mean, "mean": lambda xs: sum(xs) / len(xs)}


def estimators(a_path, b_path):
    """How far two runs' per-scenario figures lie apart when each is made from the rounds' samples by
    each estimator (timing.samples_ms, `eval --samples`): the statistic that repeats best."""
    a, b = _load(a_path), _load(b_path)
    by_id = {s["id"]: s for s in b["scenarios"]}
    pairs = {}
    for s in a["scenarios"]:
        t = by_id.get(s["id"])
        x, y = (s.get("timing") or {}).get("samples_ms") or {}, ((t or {}).get("timing") or {}).get("samples_ms") or {}
        for impl in sorted(set(x) & set(y)):
            if x[impl] and y[impl]:
                pairs.setdefault(impl, []).append((s["id"], x[impl], y[impl]))
    if not pairs:
        return "no scenario has samples in both results (evaluate with --samples)"
    lines = [f"{'implementation':16} {'estimator':14} {'scenarios':>9} {'median':>8} {'p90':>8} {'max':>8}  worst"]
    for impl, rows in pairs.items():
        for name, fn in ESTIMATORS.items():
            rel = [(abs(fn(ys) / fn(xs) - 1) * 100, sid) for sid, xs, ys in rows]
            worst = max(rel)
            lines.append(f"{impl:16} {name:14} {len(rel):9} {median([r for r, _ in rel]):7.2f}% "
                         f"{percentile([r for r, _ in rel], 0.9):7.2f}% {worst[0]:7.2f}%  {worst[1]}")
    return "\n".join(lines)


def fidelity(result_path, *fidelity_paths):
    """The harness's figures against cupti_fidelity's (tools/lab/cupti_fidelity.py --json) when
    both sides make each scenario's figure from their calls by the same estimator: the harness's
    rounds (timing.samples_ms, `eval --samples`) and the tool's calls' work (spans, for a result
    from before the work figure); calls whose launches outran their pad (`outran`) left out, as the
    tool leaves them out. Several reports (the tool in several processes) pool their calls of each
    scenario: a kernel whose time depends on the process is then the mean over those processes. Per
    implementation and estimator: how many lie within ±5 %, the median |ratio - 1|, the worst."""
    result = _load(result_path)
    by_id = {s["id"]: s for s in result["scenarios"]}
    pooled = {}
    for path in fidelity_paths:
        for row in _load(path)["rows"]:
            timing = (by_id.get(row["id"]) or {}).get("timing") or {}
            # a result whose rounds' figures are the work (it keeps their spans beside them) against the
            # tool's work, an older one's spans against its spans
            key = "work_us" if timing.get("samples_span_ms") else "span_us"
            calls = [c[key] / 1e3 for c in row.get("calls") or [] if c.get(key) and not c.get("outran")]
            pooled.setdefault((row["id"], row["impl"]), []).extend(calls)
    pairs = {}
    for (sid, impl), calls in pooled.items():
        ours = ((by_id.get(sid) or {}).get("timing") or {}).get("samples_ms", {}) or {}
        ours = ours.get(_sample_key(impl))
        if calls and ours:
            pairs.setdefault(impl, []).append((sid, ours, calls))
    if not pairs:
        return "no scenario has both the harness's samples (eval --samples) and the tool's calls"
    lines = [f"{'implementation':16} {'estimator':14} {'within':>9} {'median':>8} {'worst':>8}  scenario"]
    for impl, rows in pairs.items():
        for name, fn in ESTIMATORS.items():
            ratios = [(fn(ours) / fn(calls), sid) for sid, ours, calls in rows]
            within = sum(abs(r - 1) <= 0.05 for r, _ in ratios)
            worst = max(ratios, key=lambda t: abs(t[0] - 1))
            lines.append(f"{impl:16} {name:14} {within:4}/{len(ratios):<4} {median([abs(r - 1) * 100 for r, _ in ratios]):7.2f}% "
                         f"{worst[0]:8.4f}  {worst[1]}")
    return "\n".join(lines)


def modes(fidelity_path):
    """The calls of each (scenario, implementation) of a cupti_fidelity report in two modes, where
    they fall in two (_mode_cut); the upper mode's share over all calls and on each placement of the
    inputs (does where a call's memory lay decide its mode?)."""
    lines = []
    for row in _load(fidelity_path)["rows"]:
        calls = [c for c in row.get("calls") or [] if c.get("span_us")]
        if len(calls) < 4:
            continue
        cut = _mode_cut([c["span_us"] for c in calls])
        if cut is None:
            continue
        upper = [c for c in calls if c["span_us"] > cut]
        low = median([c["span_us"] for c in calls if c["span_us"] <= cut])
        high = median([c["span_us"] for c in upper])
        lines.append(f"{row['id']:44} {row['impl']:15} {low:8.2f} / {high:8.2f} us  upper {len(upper):3}/{len(calls):<3} "
                     f"by placement {_shares(calls, cut, 'placement')}")
        lines.append(f"{'':60} upper calls {[i for i, c in enumerate(calls) if c['span_us'] > cut]}")
    return "\n".join(lines) or "no implementation's calls fall in two modes"


def runs(*paths):
    """The same scenarios and implementations in several cupti_fidelity runs (e.g. separate processes):
    per (scenario, implementation) each run's median span and median idle inside it (us), and the
    spread of the medians over the runs; then each implementation's median spread. Does what a run
    varies move the calls?"""
    reports = [_load(p) for p in paths]
    cells, spreads = {}, {}
    for i, rep in enumerate(reports):
        for row in rep["rows"]:
            calls = [c for c in row.get("calls") or [] if c.get("span_us")]
            if calls:
                idle = [c["idle_us"] for c in calls if c.get("idle_us") is not None]
                cells.setdefault((row["id"], row["impl"]), {})[i] = (median([c["span_us"] for c in calls]),
                                                                      median(idle) if idle else None)
    lines = ["runs: " + "  ".join(f"{i}={p}" for i, p in enumerate(paths)),
             f"{'scenario':44} {'impl':15} " + " ".join(f"{f'span/idle {i}':>16}" for i in range(len(paths)))
             + "  spread"]
    for (sid, impl), by in sorted(cells.items()):
        spans = [v[0] for v in by.values()]
        spread = (max(spans) - min(spans)) / median(spans)
        spreads.setdefault(impl, []).append(spread)
        parts = [(f"{by[i][0]:8.3f}/{by[i][1]:7.3f}" if by[i][1] is not None else f"{by[i][0]:8.3f}/{'-':>7}")
                 if i in by else f"{'-':>16}" for i in range(len(paths))]
        lines.append(f"{sid:44} {impl:15} " + " ".join(parts) + f"  {100 * spread:5.2f} %")
    for impl, v in sorted(spreads.items()):
        lines.append(f"{impl}: medians' spread over the runs, median {100 * median(v):.2f} %, max {100 * max(v):.2f} %")
    return "\n".join(lines)


def shares(*paths, work=False):
    """The upper mode's share per run, for every (scenario, implementation) whose values fall in two
    modes over all the runs together (_mode_cut): each run a harness result with its rounds (`eval
    --samples`) or a cupti_fidelity report. Several evaluations with the peers measured (each its own peers'
    executor) and the tool's runs, side by side: is a peer's share the process's or the calls'?
    work=True (`shares-work`): the calls' work (the figures, front-end gaps left out) instead of their
    spans, so that only a mode of the kernels themselves splits."""
    cells = {}
    for i, path in enumerate(paths):
        data = _load(path)
        for row in data.get("rows") or []:          # a cupti_fidelity report: spans (or work) in us
            key = "work_us" if work else "span_us"
            calls = [c[key] / 1e3 for c in row.get("calls") or [] if c.get(key)]
            if calls:
                cells.setdefault((row["id"], row["impl"]), {})[i] = calls
        for sc in data.get("scenarios") or []:      # a harness result: rounds in ms, their spans where kept
            timing = sc.get("timing") or {}
            for name, ms in ((timing.get("samples_ms") or {}) if work else _round_spans(timing)).items():
                ms = [v for v in ms if v is not None]
                impl = name[5:] if name.startswith("peer:") else name
                if ms and len(set(ms)) > 1:     # a kept peer's figure repeated is no sample of its calls
                    cells.setdefault((sc["id"], impl), {})[i] = list(ms)
    lines = ["runs: " + "  ".join(f"{i}={p}" for i, p in enumerate(paths)),
             f"{'scenario':44} {'impl':15} " + " ".join(f"{f'run {i}':>6}" for i in range(len(paths)))]
    for (sid, impl), by in sorted(cells.items()):
        cut = _mode_cut([v for vs in by.values() for v in vs])
        if cut is None:
            continue
        parts = [f"{sum(v > cut for v in by[i]) / len(by[i]):6.2f}" if i in by else f"{'-':>6}" for i in range(len(paths))]
        lines.append(f"{sid:44} {impl:15} " + " ".join(parts))
    return "\n".join(lines)


def slots(result_path):
    """Does where a call's memory lay decide its mode in the harness's own rounds? For every
    (scenario, implementation) of a result with `eval --samples` whose rounds fall in two modes
    (_mode_cut): the upper mode's share, and of the slots that came up twice or more, how many were
    always in the upper mode, always in the lower, or in both (`timing.samples_slot`, CUDA). None in both: the slot decides, as the tool's
    placements decide its calls' modes."""
    lines = [f"{'scenario':44} {'impl':15} {'upper':>6} {'slots':>6} {'upper':>6} {'lower':>6} {'both':>6}"]
    for sid, name, ms, where, cut in _split_rounds(result_path, "samples_slot"):
        by = {}
        for slot, v in zip(where, ms):
            by.setdefault(slot, []).append(v > cut)
        seen = [v for v in by.values() if len(v) >= 2]
        lines.append(f"{sid:44} {name:15} {sum(v > cut for v in ms) / len(ms):6.2f} {len(seen):6} "
                     f"{sum(all(v) for v in seen):6} {sum(not any(v) for v in seen):6} "
                     f"{sum(any(v) and not all(v) for v in seen):6}")
    if len(lines) == 1:
        return "no implementation's rounds fall in two modes, or the result has no samples_slot (eval --samples, CUDA)"
    return "\n".join(lines)


def gaps(result_path):
    """Is an implementation's upper mode idle time or work? For every (scenario, implementation) of a
    result with `eval --samples` whose rounds fall in two modes (_mode_cut) and that kept each call's
    idle time (`timing.samples_idle_ms`, CUDA): the upper share, the median span and the median idle
    time (us) of the calls in each mode, and how much of the spans' difference is idle time."""
    lines = [f"{'scenario':44} {'impl':15} {'upper':>6} {'span lo':>8} {'span hi':>8} {'idle lo':>8} {'idle hi':>8} "
             f"{'idle':>5}"]
    for sid, name, ms, idle, cut in _split_rounds(result_path, "samples_idle_ms", spans=True):
        lo = [(v, i) for v, i in zip(ms, idle) if v <= cut and i is not None]
        hi = [(v, i) for v, i in zip(ms, idle) if v > cut and i is not None]
        if not lo or not hi:
            continue
        span_lo, span_hi = median([v for v, _ in lo]) * 1e3, median([v for v, _ in hi]) * 1e3
        idle_lo, idle_hi = median([i for _, i in lo]) * 1e3, median([i for _, i in hi]) * 1e3
        part = (idle_hi - idle_lo) / (span_hi - span_lo)
        lines.append(f"{sid:44} {name:15} {sum(v > cut for v in ms) / len(ms):6.2f} {span_lo:8.3f} "
                     f"{span_hi:8.3f} {idle_lo:8.3f} {idle_hi:8.3f} {100 * part:4.0f}%")
    if len(lines) == 1:
        return "no implementation's rounds fall in two modes, or the result has no samples_idle_ms (eval --samples, CUDA)"
    return "\n".join(lines)


def _split_rounds(result_path, key, spans=False):
    """(scenario, implementation, rounds' figures, rounds' `timing.<key>`, cut) for every implementation
    of a result with `eval --samples` whose rounds fall in two modes (_mode_cut) and that kept `key`
    for each of its rounds. spans=True: the rounds' spans where the result kept them
    (`samples_span_ms`; a figure that leaves the front end's gaps out hides a mode made of them)."""
    for sc in _load(result_path).get("scenarios") or []:
        timing = sc.get("timing") or {}
        for name, ms in (_round_spans(timing) if spans else timing.get("samples_ms") or {}).items():
            if None in ms:
                continue
            per_round = (timing.get(key) or {}).get(name)
            if not per_round or len(per_round) != len(ms) or len(set(ms)) < 2:
                continue
            cut = _mode_cut(ms)
            if cut is not None:
                yield sc["id"], name, ms, per_round, cut


def _round_spans(timing):
    """{implementation: every round's span} of a scenario's timing (`eval --samples`): the spans kept
    beside the figures (`samples_span_ms`), or the figures of a result from when they were the spans."""
    return timing.get("samples_span_ms") or timing.get("samples_ms") or {}


def _mode_cut(values):
    """Where `values` split into two modes: the middle of the widest gap between consecutive values
    among the middle 90 % of them (a lone slow call is no mode), when that gap is over 3 % of their
    median; None when they do not split."""
    every = sorted(values)
    g = int(0.05 * len(every))
    mid = every[g:len(every) - g]
    if len(mid) < 2:
        return None
    gap, cut = max((b - a, (a + b) / 2) for a, b in zip(mid, mid[1:]))
    return cut if gap >= 0.03 * median(every) else None


def _shares(calls, cut, key):
    """"value:upper/all" for each value of the calls' `key` (e.g. placement)."""
    by = {}
    for c in calls:
        by.setdefault(c.get(key, 0), []).append(c["span_us"] > cut)
    return " ".join(f"{k}:{sum(v)}/{len(v)}" for k, v in sorted(by.items()))


def _sample_key(impl):
    """The name timing.samples_ms gives an implementation the tool calls `impl` (its peers by name)."""
    return impl if impl in ("candidate", "baseline") else f"peer:{impl}"


def _time(s, impl):
    if s is None:
        return None
    if impl == "candidate":
        return s.get("time_ms")
    if impl == "baseline":
        return s.get("baseline_ms")
    return s.get("peer_ms", {}).get(impl)


def anchors(path):
    """Peer TFLOP/s measured by the harness on the MHA, hidden-2048 scenarios next to ANCHORS.md."""
    result = _load(path)
    rows = ["D   causal  seqlen  scenario                                   cudnn (anchors)   flash (anchors)"]
    for s in result["scenarios"]:
        p = s["params"]
        key = (int(p.get("D", 0)), int(bool(int(p.get("causal", 0)))))
        seq = int(p.get("Sq", 0))
        if key not in ANCHORS or seq not in ANCHORS[key] or p.get("Sk") != p.get("Sq") \
                or p.get("H") != p.get("Hkv") or int(p["H"]) * int(p["D"]) != 2048:
            continue
        flops = 4 * p["B"] * p["H"] * p["Sq"] * p["Sk"] * p["D"] / (2 if key[1] else 1)
        cells = []
        for i, peer in enumerate(("cudnn", "flash")):
            ms = s.get("peer_ms", {}).get(peer)
            ours = f"{flops / (ms / 1e3) / 1e12:6.0f}" if ms else "   n/a"
            cells.append(f"{ours} ({ANCHORS[key][seq][i]:4})")
        rows.append(f"{key[0]:<3} {key[1]:^6}  {seq:6}  {s['id']:42} {cells[0]:>16}  {cells[1]:>16}")
    rows.append("ANCHORS.md measured 32k tokens per shape with triton's do_bench; the task uses 16k tokens "
                "(B x S = 16384) and the harness's own timing (cold L2, fresh inputs, idle device at start).")
    return "\n".join(rows)


def summary(*paths):
    rows = []
    for path in paths:
        r = _load(path)
        s = r["summary"]
        peers = ", ".join(f"{p} {v:.3f}x" for p, v in (s.get("speedup_vs_peer_geomean") or {}).items() if v)
        base = s.get("speedup_vs_baseline_geomean")
        rows.append(f"{r['task']:16} {r['status']:13} correct {s['correct']}/{s['scenarios']}  "
                    f"x baseline {base if base is None else round(base, 3)}  {peers}  "
                    f"%peak median {s['pct_of_peak_median'] and round(s['pct_of_peak_median'], 1)}  {s['seconds']} s")
    return "\n".join(rows)


def lanes(*paths):
    """Each peer's figure in each of its processes (timing.peer_lanes_ms: the evaluation that measured
    the peers timed each in several at once, harness/executor/lanes.py): how far a peer's processes read
    apart, scenario by scenario (the largest over the smallest lane), over every result given."""
    apart = {}
    for path in paths:
        for sc in _load(path)["scenarios"]:
            for peer, figs in ((sc.get("timing") or {}).get("peer_lanes_ms") or {}).items():
                read = [f for f in figs if f]
                if len(read) > 1:
                    apart.setdefault(peer, []).append((max(read) / min(read) - 1, sc["id"]))
    if not apart:
        return "no scenario was timed in more than one peers' process"
    rows = [f"{'peer':8} {'scenarios':>9} {'median':>8} {'max':>8}  >2 %  >5 %  widest"]
    for peer, v in sorted(apart.items()):
        v.sort()
        worst = v[-1]
        rows.append(f"{peer:8} {len(v):9d} {100 * median([d for d, _ in v]):7.2f}% {100 * worst[0]:7.2f}%  "
                    f"{sum(d > 0.02 for d, _ in v):4d}  {sum(d > 0.05 for d, _ in v):4d}  {worst[1]}")
    return "\n".join(rows)


def adversarial(path):
    outcomes = _load(path)
    rows = []
    for o in outcomes:
        mark = {True: "caught", False: "NOT CAUGHT", None: "not run"}[o["ok"]]
        which = f"hack {o['hack']:>2}" if o.get("hack") is not None else f"trust {o.get('trust')}"
        rows.append(f"{mark:10} {which:8} {o['file']:34} {o['status'] or '-':13} "
                    f"{(o['why'] or o['reason'] or '')[:90]}")
    caught = sum(o["ok"] is True for o in outcomes)
    rows.append(f"{caught}/{len(outcomes)} caught as expected")
    return "\n".join(rows)


def bound(*paths):
    """Per scenario bounded in batch mode, the two floors' slack as the harness recorded them
    (timing.bound: d_ms/ci_ms the slope's, d_calls_ms/ci_calls_ms the K calls'): how far the baseline's
    figure plus the lower end of each interval, less REL_MARGIN, lies above the candidate's figure (us).
    The slope's floor raises the candidate when its absolute margin (BATCH_ABS_MARGIN_MS) is under
    `slope`; the calls' floor when that margin plus REQUEST_SPREAD_MS / K is under `calls`. On identical
    code (an A/A) the largest of each is the least margin that moves nothing; on a forger, the margin
    under which it is raised."""
    from harness.timing.bound import REL_MARGIN
    rows = [f"{'run':24} {'scenario':36} {'K':>4} {'pairs':>5} {'fig_c':>8} {'fig_b':>8} {'d_slope':>8} "
            f"{'slope':>7} {'d_calls':>8} {'calls':>7}  (us)"]
    worst = {}
    for path in paths:
        data = _load(path)
        runs = [(o["file"], o.get("result") or {}) for o in data] if isinstance(data, list) else [(path, data)]
        for name, result in runs:
            for sc in result.get("scenarios") or []:
                b = (sc.get("timing") or {}).get("bound") or {}
                fb = sc.get("baseline_ms")
                if not (b.get("ci_calls_ms") or {}).get("candidate") or fb is None:
                    continue
                fc = b["figure_ms"]["candidate"]
                slack = [(fb + b[key]["candidate"][0] - REL_MARGIN * fb - fc) * 1e3 for key in ("ci_ms", "ci_calls_ms")]
                w = worst.setdefault(name, [-1e9, -1e9])
                w[0], w[1] = max(w[0], slack[0]), max(w[1], slack[1])
                rows.append(f"{str(name)[-24:]:24} {sc['id'][:36]:36} {b['calls']:4d} {b['pairs']:5d} {fc * 1e3:8.2f} "
                            f"{fb * 1e3:8.2f} {b['d_ms']['candidate'] * 1e3:+8.2f} {slack[0]:+7.2f} "
                            f"{b['d_calls_ms']['candidate'] * 1e3:+8.2f} {slack[1]:+7.2f}")
    if len(rows) == 1:
        return "no scenario bounded in batch mode (timing.bound.ci_calls_ms)"
    rows.append("largest slack (slope, calls), us: "
                + "; ".join(f"{n}: {a:+.2f}, {c:+.2f}" for n, (a, c) in worst.items()))
    return "\n".join(rows)


def main(argv=None):
    argv = argv if argv is not None else sys.argv[1:]
    commands = {"repeat": repeat, "estimators": estimators, "fidelity": fidelity, "modes": modes, "runs": runs,
                "shares": shares, "shares-work": lambda *p: shares(*p, work=True), "slots": slots, "gaps": gaps,
                "anchors": anchors, "lanes": lanes, "summary": summary, "adversarial": adversarial, "bound": bound}
    if not argv or argv[0] not in commands:
        print(__doc__)
        return 2
    print(commands[argv[0]](*argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
