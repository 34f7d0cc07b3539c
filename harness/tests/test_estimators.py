"""Estimators of a scenario's figure from its rounds (harness/timing/stats.py), and the comparison of two
runs' samples by each (compare_results estimators): what the next GPU run decides between for the
2-4 us kernels whose medians move in CUPTI's 32 ns steps (docs/harness-lab.md, "Repeatability")."""

import json

import pytest
import math
import random

from harness.timing.stats import _beta_cdf, harrell_davis_median, interquartile_mean, median
from tools.lab import compare_results


def _beta_cdf_by_sum(x, a, b, n=100_000):
    dens = lambda t: math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                              + (a - 1) * math.log(t) + (b - 1) * math.log1p(-t))
    h = x / n
    return sum(dens((i + 0.5) * h) for i in range(n)) * h


def test_the_incomplete_beta_matches_its_integral_on_both_sides_of_the_switch():
    for x, a, b in [(0.3, 2, 2), (0.7, 3, 1.5), (0.45, 50.5, 50.5), (0.55, 50.5, 50.5), (0.49, 500.5, 500.5)]:
        assert abs(_beta_cdf(x, a, b) - _beta_cdf_by_sum(x, a, b)) < 1e-7, (x, a, b)
    assert _beta_cdf(0.0, 3, 3) == 0.0 and _beta_cdf(1.0, 3, 3) == 1.0 and abs(_beta_cdf(0.5, 7.5, 7.5) - 0.5) < 1e-12


def test_harrell_davis_is_a_median_that_moves_less_in_steps():
    assert harrell_davis_median([]) is None and harrell_davis_median([4.0]) == 4.0
    assert abs(harrell_davis_median([1.0, 2.0, 3.0]) - 2.0) < 1e-12
    assert abs(harrell_davis_median([5.0] * 9) - 5.0) < 1e-12
    # One extreme round: at 41 rounds it weighs nothing; at 5 it pulls the estimate (the median's
    # robustness, which the HD estimate has only once the sample is large)
    assert abs(harrell_davis_median([float(i) for i in range(1, 41)] + [1e6]) - 21.0) < 0.01
    assert harrell_davis_median([1.0, 2.0, 3.0, 4.0, 1e6]) > 1000
    # A 2.2 us kernel read in 32 ns steps: over many draws, the HD estimate's spread is smaller than
    # the sample median's, which jumps a whole step at a time.
    rng = random.Random(7)
    def draw():
        return [round(rng.gauss(2.2, 0.08) / 0.032) * 0.032 for _ in range(40)]
    runs = [draw() for _ in range(300)]
    spread = lambda est: max(est(r) for r in runs) - min(est(r) for r in runs)
    assert spread(harrell_davis_median) < spread(median)


def test_the_interquartile_mean_leaves_out_each_quarter():
    assert interquartile_mean([]) is None and interquartile_mean([3.0]) == 3.0
    assert interquartile_mean([0, 1, 2, 3, 4, 5, 6, 100]) == 3.5      # 2..5


def _result(path, samples):
    path.write_text(json.dumps({"scenarios": [{"id": sid, "timing": {"samples_ms": s}} for sid, s in samples.items()]}))
    return str(path)


def test_two_runs_samples_compare_by_every_estimator(tmp_path):
    a = _result(tmp_path / "a.json", {"s1": {"candidate": [1.0, 1.0, 1.3]}, "s2": {"candidate": [2.0, 2.0, 2.0]}})
    b = _result(tmp_path / "b.json", {"s1": {"candidate": [1.0, 1.2, 1.1]}, "s2": {"candidate": [2.0, 2.0, 2.0]},
                                      "s3": {"candidate": [9.0]}})
    out = compare_results.estimators(a, b).splitlines()
    med = next(l for l in out if l.split()[:2] == ["candidate", "median"])
    assert med.split()[2:6] == ["2", "5.00%", "9.00%", "10.00%"] and med.endswith("s1")
    mean = next(l for l in out if l.split()[:2] == ["candidate", "mean"])
    assert mean.split()[5] == "0.00%"          # the means of s1 agree: 3.3 / 3 both
    assert compare_results.estimators(a, _result(tmp_path / "c.json", {})).startswith("no scenario has samples")


def test_the_harness_against_the_tool_by_every_estimator(tmp_path):
    # A peer in two modes: the harness's rounds mostly in the upper one, the tool's calls mostly in
    # the lower: the medians disagree by a mode (1.18x), the means by its share (within 5 %).
    harness = _result(tmp_path / "r.json", {"s1": {"peer:cudnn": [13.0] * 6 + [11.0] * 5, "candidate": [2.0] * 5}})
    report = tmp_path / "f.json"
    report.write_text(json.dumps({"rows": [
        {"id": "s1", "impl": "cudnn", "calls": [{"span_us": 13000.0}] * 5 + [{"span_us": 11000.0}] * 6},
        {"id": "s1", "impl": "candidate", "calls": [{"span_us": 2000.0}] * 4 + [{"span_us": 2100.0}]},
        {"id": "s1", "impl": "baseline", "calls": [{"span_us": 2000.0}]}]}))      # no samples: left out
    out = compare_results.fidelity(harness, str(report)).splitlines()
    med = next(l for l in out if l.split()[:2] == ["cudnn", "median"])
    assert med.split()[2:5] == ["0/1", "18.18%", "1.1818"] and med.endswith("s1")
    mean = next(l for l in out if l.split()[:2] == ["cudnn", "mean"])
    assert mean.split()[2] == "1/1"
    assert next(l for l in out if l.split()[:2] == ["candidate", "median"]).split()[2] == "1/1"
    assert not any(l.startswith("baseline") for l in out)
    assert compare_results.fidelity(_result(tmp_path / "e.json", {}), str(report)).startswith("no scenario has")


def test_a_result_of_work_figures_is_set_against_the_tools_work(tmp_path):
    # cuDNN's upper mode a front-end gap: in the spans (both sides) and in neither's work
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"scenarios": [{"id": "s1", "timing": {
        "samples_ms": {"peer:cudnn": [8.5] * 11}, "samples_span_ms": {"peer:cudnn": [9.4] * 6 + [8.5] * 5}}}]}))
    report = tmp_path / "f.json"
    report.write_text(json.dumps({"rows": [{"id": "s1", "impl": "cudnn", "calls":
                                            [{"span_us": 8500.0, "work_us": 8500.0}] * 11}]}))
    out = compare_results.fidelity(str(path), str(report)).splitlines()
    med = next(l for l in out if l.split()[:2] == ["cudnn", "median"])
    assert med.split()[2:5] == ["1/1", "0.00%", "1.0000"]
    # the shares read the spans, where the mode is
    shares = compare_results.shares(str(path), str(report)).splitlines()
    assert shares[-1].split() == ["s1", "cudnn", "0.55", "0.00"]


def test_several_tool_processes_pool_their_calls_and_outrun_calls_are_left_out(tmp_path):
    # cuDNN's kernel mode at a share each process sets: the harness's one process read 0.5 of its
    # rounds slow; the tool's two processes 0.25 and 0.75. Each alone is 4.4 % off; pooled, they agree.
    # A call whose host outran its pad (400 us of host time in its records) counts in neither.
    path = tmp_path / "h.json"
    path.write_text(json.dumps({"scenarios": [{"id": "s1", "timing": {
        "samples_ms": {"peer:cudnn": [0.011] * 10 + [0.0132] * 10}, "samples_span_ms": {"peer:cudnn": [0.012] * 20}}}]}))
    reports = []
    for i, upper in enumerate((8, 24)):
        r = tmp_path / f"t{i}.json"
        calls = [{"span_us": 11.0, "work_us": 11.0}] * (32 - upper) + [{"span_us": 13.2, "work_us": 13.2}] * upper
        calls.append({"span_us": 400.0, "work_us": 400.0, "outran": True})
        r.write_text(json.dumps({"rows": [{"id": "s1", "impl": "cudnn", "calls": calls}]}))
        reports.append(str(r))

    def mean_row(*tools):
        out = compare_results.fidelity(str(path), *tools).splitlines()
        return next(l for l in out if l.split()[:2] == ["cudnn", "mean"]).split()
    assert float(mean_row(reports[0])[4]) == pytest.approx(12.1 / 11.55, abs=1e-4)
    assert float(mean_row(reports[1])[4]) == pytest.approx(12.1 / 12.65, abs=1e-4)
    assert mean_row(*reports)[2:5] == ["1/1", "0.00%", "1.0000"]


def test_calls_in_two_modes_are_split_and_set_against_their_placements(tmp_path):
    report = tmp_path / "f.json"
    calls = [{"span_us": 11.0 + 0.01 * i, "placement": i % 2} for i in range(6)] + \
            [{"span_us": 13.0, "placement": 1}] * 3
    report.write_text(json.dumps({"rows": [{"id": "s1", "impl": "cudnn", "calls": calls},
                                           {"id": "s1", "impl": "candidate",
                                            "calls": [{"span_us": 2.0 + 0.01 * i} for i in range(8)]}]}))
    out = compare_results.modes(str(report)).splitlines()
    assert len(out) == 2 and out[0].split()[:2] == ["s1", "cudnn"]
    assert "upper   3/9" in out[0] and out[0].endswith("by placement 0:0/3 1:3/6")
    assert out[1].split(maxsplit=2)[2] == "[6, 7, 8]"


def test_runs_set_the_same_calls_of_several_runs_side_by_side(tmp_path):
    paths = []
    for i, (span, idle) in enumerate([(10.0, 1.0), (10.5, 1.4)]):
        p = tmp_path / f"r{i}.json"
        p.write_text(json.dumps({"rows": [
            {"id": "s1", "impl": "torch", "calls": [{"span_us": span + 0.01 * j, "idle_us": idle} for j in range(5)]},
            {"id": "s1", "impl": "candidate", "calls": [{"span_us": 2.0}] * 3}]}))
        paths.append(str(p))
    out = compare_results.runs(*paths).splitlines()
    torch_row = next(l for l in out if l.split()[:2] == ["s1", "torch"])
    assert "10.020/  1.000" in torch_row
    assert "10.520/  1.400" in torch_row and torch_row.endswith(f"{100 * 0.5 / 10.27:5.2f} %")
    assert out[-2] == "candidate: medians' spread over the runs, median 0.00 %, max 0.00 %"


def test_shares_of_the_upper_mode_per_run_from_the_harness_rounds_and_the_tools_calls(tmp_path):
    # The same scenario in two harness evaluations (the peers measured: each its own peers' executor)
    # and one tool run: the cuDNN peer's calls in two modes 13 % apart, in a share of its own in each
    # process. The cut is the widest gap of all the runs' values together.
    a = _result(tmp_path / "a.json", {"s1": {"peer:cudnn": [0.0080] * 10 + [0.0090] * 10, "candidate": [0.002] * 20}})
    b = _result(tmp_path / "b.json", {"s1": {"peer:cudnn": [0.0080 + 1e-6 * (k % 3) for k in range(20)]},
                                      "s2": {"peer:cudnn": [0.0080] * 20}})       # kept: one figure, left out
    tool = tmp_path / "t.json"
    tool.write_text(json.dumps({"rows": [{"id": "s1", "impl": "cudnn",
                                          "calls": [{"span_us": 8.0}] * 3 + [{"span_us": 9.0}]}]}))
    out = compare_results.shares(a, b, str(tool)).splitlines()
    row = next(l for l in out if l.split()[:2] == ["s1", "cudnn"])
    assert row.split()[2:5] == ["0.50", "0.00", "0.25"]
    assert not any(l.split()[:2] == ["s1", "candidate"] for l in out)      # one mode: no share to speak of
    assert not any(l.startswith("s2") for l in out)
    assert compare_results.shares(str(tool)).startswith("runs:")


def test_shares_on_the_work_split_only_the_kernels_own_modes(tmp_path):
    # The tool's calls: spans in two modes made of a front-end gap (the work the same), and a second
    # scenario whose kernel itself is slower in some calls. On the spans both split; on the work only it.
    tool = tmp_path / "t.json"
    gap = [{"span_us": 8.0, "work_us": 8.0}] * 3 + [{"span_us": 9.0, "work_us": 8.0}]
    kernel = [{"span_us": 10.0, "work_us": 10.0}] * 2 + [{"span_us": 12.0, "work_us": 12.0}] * 2
    tool.write_text(json.dumps({"rows": [{"id": "s1", "impl": "cudnn", "calls": gap},
                                         {"id": "s2", "impl": "cudnn", "calls": kernel}]}))
    spans = {l.split()[0]: l.split()[2] for l in compare_results.shares(str(tool)).splitlines()[2:]}
    work = {l.split()[0]: l.split()[2] for l in compare_results.shares(str(tool), work=True).splitlines()[2:]}
    assert spans == {"s1": "0.25", "s2": "0.50"}
    assert work == {"s2": "0.50"}
    assert compare_results.main(["shares-work", str(tool)]) == 0


def test_slots_say_whether_a_placement_decides_the_mode_of_the_harness_rounds(tmp_path):
    # Slot 0 always in the upper mode, slot 1 always in the lower, slot 2 in both, slot 3 once.
    ms = [9.0, 8.0, 9.0, 8.0, 9.0, 8.0, 8.0, 8.0]
    where = [0, 1, 2, 1, 0, 2, 3, 1]
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"scenarios": [
        {"id": "s1", "timing": {"samples_ms": {"peer:cudnn": ms, "candidate": [2.0, 2.01] * 4},
                                "samples_slot": {"peer:cudnn": where, "candidate": [0] * 8}}},
        {"id": "s2", "timing": {"samples_ms": {"peer:cudnn": ms}}}]}))        # no slots: left out
    out = compare_results.slots(str(path)).splitlines()
    assert len(out) == 2
    assert out[1].split() == ["s1", "peer:cudnn", "0.38", "3", "1", "1", "1"]
    empty = tmp_path / "e.json"
    empty.write_text(json.dumps({"scenarios": []}))
    assert compare_results.slots(str(empty)).startswith("no implementation")


def test_kept_samples_carry_the_slot_of_each_call_where_the_rounds_record_it():
    from types import SimpleNamespace

    from harness.timing.loop import keep_samples
    entry = {"timing": {}}
    samples = {"candidate": {"ms": [0.0021, 0.0022], "slot": [4, 0]}, "peer:cudnn": {"ms": [0.008, 0.008]}}
    keep_samples(SimpleNamespace(keep_samples=True), entry, samples)
    assert entry["timing"]["samples_ms"] == {"candidate": [0.0021, 0.0022], "peer:cudnn": [0.008, 0.008]}
    assert entry["timing"]["samples_slot"] == {"candidate": [4, 0]}
    assert "samples_idle_ms" not in entry["timing"]
    quiet = {"timing": {}}
    keep_samples(SimpleNamespace(keep_samples=False), quiet, samples)
    assert quiet == {"timing": {}}


def test_kept_samples_carry_each_calls_idle_time_where_the_rounds_record_it():
    # CUDA rounds read how long the GPU sat idle inside each call's span (CUPTI's records); a call
    # whose records could not be read has none (None, kept as null)
    from types import SimpleNamespace

    from harness.timing.loop import keep_samples
    entry = {"timing": {}}
    samples = {"peer:cudnn": {"ms": [0.0080, 0.0089, 0.0081], "slot": [1, 2, 3], "idle_ms": [0.0023, 0.0032, None]},
               "candidate": {"ms": [0.0021], "slot": [0], "idle_ms": [0.0]}}
    keep_samples(SimpleNamespace(keep_samples=True), entry, samples)
    assert entry["timing"]["samples_idle_ms"] == {"peer:cudnn": [0.0023, 0.0032, None], "candidate": [0.0]}


def test_gaps_say_whether_the_upper_mode_is_idle_time_or_work(tmp_path):
    # cuDNN's upper mode 0.9 us longer: in one scenario all of it idle (the GPU starting the kernel
    # later after the memset), in the other all of it work (the kernel itself longer)
    lo, hi = [0.0080] * 6, [0.0089] * 6
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"scenarios": [
        {"id": "s1", "timing": {"samples_ms": {"peer:cudnn": lo + hi},
                                "samples_idle_ms": {"peer:cudnn": [0.0023] * 6 + [0.0032] * 6}}},
        {"id": "s2", "timing": {"samples_ms": {"peer:cudnn": lo + hi},
                                "samples_idle_ms": {"peer:cudnn": [0.0023] * 12}}},
        {"id": "s3", "timing": {"samples_ms": {"peer:cudnn": lo + hi}}}]}))      # no idle: left out
    out = compare_results.gaps(str(path)).splitlines()
    s1 = next(l for l in out if l.startswith("s1")).split()
    s2 = next(l for l in out if l.startswith("s2")).split()
    # scenario, impl, upper share, span lower/upper (us), idle lower/upper (us), the part of the difference idle
    assert s1[1:] == ["peer:cudnn", "0.50", "8.000", "8.900", "2.300", "3.200", "100%"]
    assert s2[1:] == ["peer:cudnn", "0.50", "8.000", "8.900", "2.300", "2.300", "0%"]
    assert not any(l.startswith("s3") for l in out)
    # a result whose figures leave the front end's gaps out (the mode gone from samples_ms): its spans
    path.write_text(json.dumps({"scenarios": [
        {"id": "s1", "timing": {"samples_ms": {"peer:cudnn": [0.0057] * 12},
                                "samples_span_ms": {"peer:cudnn": lo + hi},
                                "samples_idle_ms": {"peer:cudnn": [0.0023] * 6 + [0.0032] * 6}}}]}))
    s1 = compare_results.gaps(str(path)).splitlines()[1].split()
    assert s1[1:] == ["peer:cudnn", "0.50", "8.000", "8.900", "2.300", "3.200", "100%"]
