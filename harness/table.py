"""The readable table (`--table`): one line per scenario, then the summary and the messages."""


def _num(x, digits=3):
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def _ms(x):
    return "-" if x is None else f"{x:.4f}" if x < 1 else f"{x:.3f}"


def render_table(result):
    summary, peers = result["summary"], sorted(result["summary"].get("speedup_vs_peer_geomean") or {})
    for s in result["scenarios"]:
        for p in s.get("peer_ms", {}):
            if p not in peers:
                peers.append(p)
    head = ["scenario", "status", "err/tol", "time_ms", "base_ms", "x_base"]
    for p in peers:
        head += [f"{p}_ms", f"x_{p}"]
    head += ["TFLOP/s", "GB/s", "%peak", "flags"]
    rows = [head]
    for s in result["scenarios"]:
        tol = s.get("tolerance")
        ratio = s["max_abs_err"] / tol if s.get("max_abs_err") is not None and tol else None
        row = [s["id"], s["status"], _num(ratio, 2), _ms(s.get("time_ms")), _ms(s.get("baseline_ms")),
               _num(s.get("speedup_vs_baseline"))]
        for p in peers:
            row += [_ms(s.get("peer_ms", {}).get(p)) if p not in s.get("peer_unsupported", {}) else "n/a",
                    _num(s.get("speedup_vs_peer", {}).get(p))]
        row += [_num(s.get("tflops")), _num(s.get("gbps")), _num(s.get("pct_of_peak"), 2),
                ",".join(s.get("flags", []))]
        rows.append(row)
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    lines = [f"task {result['task']} on {result['device']}"
             + (f" ({result['gpu']}, {result['arch']})" if result.get("gpu") else "")
             + f" | status {result['status']} | correct {summary['correct']}/{summary['scenarios']}"
             + f" | {summary['seconds']} s"]
    for r in rows:
        lines.append("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    parts = [f"geomean x baseline {_num(summary['speedup_vs_baseline_geomean'])}"]
    for p, v in (summary.get("speedup_vs_peer_geomean") or {}).items():
        parts.append(f"x {p} {_num(v)}")
    parts.append(f"best peer {summary.get('best_peer') or '-'}")
    parts.append(f"%peak median {_num(summary.get('pct_of_peak_median'), 2)}")
    goal = summary.get("goal")
    if goal:
        parts.append(f"goal {goal['target']}x vs {goal['vs']}: {'met' if goal['met'] else 'not met'}")
    lines.append(" | ".join(parts))
    if result["compile"].get("registers") is not None:
        c = result["compile"]
        lines.append(f"compile {c['seconds']} s{' (cached)' if c.get('cached') else ''}: {c['registers']} registers, "
                     f"{c['smem_bytes']} B static smem, {c['spills']} B spills")
    spent = result.get("time_spent")
    if spent:
        order = ("task", "build", "start", "correctness", "peers_wait", "timing", "close")
        lines.append("time spent: " + ", ".join(f"{k} {spent[k]:.2f} s" for k in order if k in spent)
                     + (f" (scenarios {spent['scenarios']:.2f} s in all)" if "scenarios" in spent else ""))
        phases = [k for k in spent if k.startswith("correctness_")]
        if phases:
            lines.append("correctness by phase: " + ", ".join(f"{k[len('correctness_'):]} {spent[k]:.2f} s"
                                                              for k in phases))
    for s in result["scenarios"]:
        if s.get("reason") and s["status"] != "skipped":
            lines.append(f"{s['id']}: {s['status']}: {s['reason']}")
    skipped = [s for s in result["scenarios"] if s["status"] == "skipped"]
    if skipped:
        lines.append(f"{len(skipped)} scenario(s) not run: {skipped[0].get('reason')}")
    for m in result["messages"]:
        lines.append(f"note: {m}")
    return "\n".join(lines) + "\n"
