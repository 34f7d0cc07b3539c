"""The result-reading tools used by scripts/gpu/verify.sh, on small synthetic results."""

import json

import pytest

from tools.lab import compare_results


def _result(times, peers=None, params=None):
    scenarios = []
    for i, t in enumerate(times):
        scenarios.append({"id": f"s{i}", "params": params or {}, "time_ms": t, "baseline_ms": 2 * t,
                          "peer_ms": {k: v[i] for k, v in (peers or {}).items()}})
    return {"task": "t", "status": "ok", "scenarios": scenarios,
            "summary": {"correct": len(times), "scenarios": len(times), "speedup_vs_baseline_geomean": 2.0,
                        "speedup_vs_peer_geomean": {}, "pct_of_peak_median": 10.0, "seconds": 1.0}}


def test_repeat_reports_median_and_max_difference(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_result([1.0, 1.0, 1.0, 1.0])))
    b.write_text(json.dumps(_result([1.01, 1.02, 1.0, 1.10])))
    text = compare_results.repeat(a, b)
    line = next(l for l in text.splitlines() if l.startswith("candidate"))
    assert "median  1.50%" in line and "max  10.00%" in line and "run2 slower in 3/4" in line
    assert "s3" in text.split("largest differences:")[1].splitlines()[1]


def test_anchors_matches_mha_hidden_2048_shapes(tmp_path):
    params = {"B": 1, "H": 16, "Hkv": 16, "Sq": 16384, "Sk": 16384, "D": 128, "causal": 0}
    flops = 4 * 16 * 16384 * 16384 * 128
    r = _result([10.0], peers={"cudnn": [flops / 600e12 * 1e3], "flash": [flops / 350e12 * 1e3]}, params=params)
    gqa = dict(r["scenarios"][0], id="gqa", params=dict(params, Hkv=4))
    r["scenarios"].append(gqa)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(r))
    rows = compare_results.anchors(path).splitlines()
    matched = [row for row in rows if row.startswith("128")]
    assert len(matched) == 1                       # the GQA scenario is not an ANCHORS shape
    assert "600 ( 606)" in matched[0] and "350 ( 350)" in matched[0]


def test_lanes_reads_how_far_a_peers_processes_read_apart(tmp_path):
    r = _result([1.0, 1.0, 1.0])
    lanes = [{"cudnn": [0.0111, 0.0133], "flash": [0.020, 0.0201]}, {"cudnn": [0.050, 0.0505], "flash": [0.03, 0.03]},
             {"cudnn": [0.1, None]}]
    for sc, by in zip(r["scenarios"], lanes):
        sc["timing"] = {"peer_lanes_ms": by}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(r))
    rows = {row.split()[0]: row for row in compare_results.lanes(path).splitlines()[1:]}
    assert rows["cudnn"].split()[1:6] == ["2", "10.41%", "19.82%", "1", "1"] and rows["cudnn"].endswith("s0")
    assert rows["flash"].split()[1:6] == ["2", "0.25%", "0.50%", "0", "0"]
    path.write_text(json.dumps(_result([1.0])))
    assert compare_results.lanes(path).startswith("no scenario")


def test_every_import_in_the_lab_tools_resolves():
    """The tools import the harness lazily, inside main(): an import that no longer resolves (a relative
    one left from when they lived in the package) fails only on the GPU host. Resolve each here."""
    import ast
    import importlib.util
    from pathlib import Path
    lab = Path(__file__).resolve().parents[2] / "tools" / "lab"
    broken = []
    for path in sorted(lab.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                name = ("." * node.level) + (node.module or "")
                try:
                    found = importlib.util.find_spec(importlib.util.resolve_name(name, "tools.lab"))
                except (ImportError, ValueError):
                    found = None
                if found is None:
                    broken.append(f"{path.name}:{node.lineno}: from {name} import ...")
    assert not broken, broken


def _bounded(fig_c, fig_b, k, d_slope, d_calls):
    """A scenario bounded in batch mode over 8 pairs whose paired differences (ms a call) were all
    `d_slope` for the slope and `d_calls` for the K calls' walls: each interval that one value."""
    bound = {"mode": "batch", "calls": k, "pairs": 8, "figure_ms": {"candidate": fig_c},
             "d_ms": {"candidate": d_slope}, "ci_ms": {"candidate": [d_slope, d_slope]},
             "d_calls_ms": {"candidate": d_calls}, "ci_calls_ms": {"candidate": [d_calls, d_calls]}}
    return {"id": "r1", "baseline_ms": fig_b, "time_ms": fig_c, "timing": {"bound": bound}}


def test_bound_reports_each_floors_slack(tmp_path):
    k = 101
    # identical code, its requests 40 us dearer: the slope's slack -0.3 us (3 % of 10 us), the calls'
    # +0.1 (the 40 us over 101 calls on top: what REQUEST_SPREAD_MS / K is there to cover)
    same = _bounded(0.010, 0.010, k, 0.0, 0.040 / k)
    # a forger at 6 us whose one-call requests are 1 ms dearer: the slope reads 10 us less a call
    flat = _bounded(0.006, 0.010, k, -1.0 / (k - 1), 0.0)
    a = tmp_path / "aa.json"
    a.write_text(json.dumps({"scenarios": [same]}))
    o = tmp_path / "adv.json"
    o.write_text(json.dumps([{"file": "forge6.cu", "result": {"scenarios": [flat]}}]))
    text = compare_results.bound(a, o)
    rows = [line.split() for line in text.splitlines()[1:-1]]
    aa = next(r for r in rows if r[0].endswith("aa.json"))
    forge = next(r for r in rows if r[0] == "forge6.cu")
    assert float(aa[7]) == pytest.approx(-0.3, abs=0.01) and float(aa[9]) == pytest.approx(-0.3 + 40 / k, abs=0.01)
    # its slope's floor is 10 us low (no margin raises it); its calls' floor 3.7 us over its figure
    assert float(forge[7]) < -5 and float(forge[9]) == pytest.approx(10 - 0.3 - 6, abs=0.05)
    assert "largest slack" in text.splitlines()[-1]
