"""The rule that bounds what a CUDA executor reports by what the parent sees (harness/timing/
cuda_loop.bounds), on figures of the shape measured on the H200: identical code in both executors differs only
by noise and passes; work that escapes the events shifts every call and is refused, by the bound it
shows in. (The measurements themselves need the GPU: scripts/gpu/executor-check.sh.)"""

import random

from harness.timing.cuda_loop import EXCESS_MARGIN_MS, TAIL_MARGIN_MS, bounds


def _calls(n, rng, kernel=0.012, tail=0.009, busy=0.17, excess=0.56, shift=None, gap=None):
    shift = shift or {}
    out = {"ms": [], "tail_ms": [], "busy_ms": [], "excess_ms": []}
    if gap is not None:
        out["gap_ms"] = []
    for _ in range(n):
        out["ms"].append(kernel * rng.uniform(0.98, 1.02))
        if gap is not None:   # events - CUPTI span: 2.3 us on the H200, within 0.4 us over kernels
            out["gap_ms"].append(gap + rng.uniform(-0.0004, 0.0004) + shift.get("gap_ms", 0.0))
        out["tail_ms"].append(tail + rng.uniform(-0.001, 0.002) + shift.get("tail_ms", 0.0))
        out["busy_ms"].append(busy + rng.uniform(-0.01, 0.01) + shift.get("busy_ms", 0.0))
        # the wall clock: heavy-tailed, a context switch now and then (up to 0.4 ms)
        excess_noise = rng.uniform(-0.05, 0.05) + (rng.random() < 0.2) * rng.uniform(0.1, 0.4)
        out["excess_ms"].append(excess + excess_noise + shift.get("excess_ms", 0.0))
    return out


def test_identical_code_passes_every_bound_whatever_the_noise():
    for seed in range(200):
        rng = random.Random(seed)
        n = rng.choice([10, 11, 20, 59])
        samples = {"candidate": _calls(n, rng), "baseline": _calls(n, rng)}
        timing = {}
        assert bounds(timing, samples, seed) is None, (seed, timing["bounds"])
        assert set(timing["bounds"]) == {"tail_ms", "busy_ms", "excess_ms"}


def test_identical_code_timed_by_cupti_passes_the_gap_bound_too():
    for seed in range(200):
        rng = random.Random(seed)
        n = rng.choice([10, 11, 20, 59])
        # the two kernels' own latencies may differ by up to 1 us (launch shape)
        samples = {"candidate": _calls(n, rng, gap=0.0023 + rng.uniform(-0.0005, 0.0005)),
                   "baseline": _calls(n, rng, gap=0.0023)}
        timing = {}
        assert bounds(timing, samples, seed) is None, (seed, timing["bounds"])
        assert set(timing["bounds"]) == {"tail_ms", "busy_ms", "excess_ms", "gap_ms"}


def test_host_work_before_the_launch_or_a_span_written_smaller_is_refused_by_the_gap():
    rng = random.Random(4)
    # 20 us of host work before the kernel's launch: inside the events, outside CUPTI's span; the
    # wall clock moves by as much, far below its own 0.15 ms margin
    samples = {"candidate": _calls(20, rng, gap=0.0023, shift={"gap_ms": 0.02, "excess_ms": 0.0}),
               "baseline": _calls(20, rng, gap=0.0023)}
    found = bounds({}, samples, 4)
    assert found and "outside the GPU work CUPTI recorded" in found
    # a span reported 5 us short of what ran (the events honest): the same gap, the same refusal
    samples = {"candidate": _calls(20, rng, kernel=0.007, gap=0.0073), "baseline": _calls(20, rng, gap=0.0023)}
    assert "outside the GPU work CUPTI recorded" in (bounds({}, samples, 5) or "")


def test_work_past_the_end_event_is_refused_by_the_tail():
    rng = random.Random(1)
    # hack03 on the H200: the kernel on a non-blocking stream, 45.6 us past the end event
    samples = {"candidate": _calls(20, rng, shift={"tail_ms": 0.045, "excess_ms": 0.045}),
               "baseline": _calls(20, rng)}
    found = bounds({}, samples, 1)
    assert found and "past the end event" in found and "non-blocking stream" in found


def test_a_gpu_left_busy_after_the_answer_is_refused():
    rng = random.Random(2)
    samples = {"candidate": _calls(20, rng, shift={"busy_ms": 0.2}), "baseline": _calls(20, rng)}
    found = bounds({}, samples, 2)
    assert found and "stayed busy" in found


def test_a_time_smaller_than_the_wall_clock_allows_is_refused():
    rng = random.Random(3)
    # a forged event time: 0.3 ms a call reported less than the call took; nothing else changes
    samples = {"candidate": _calls(20, rng, shift={"excess_ms": 0.3}), "baseline": _calls(20, rng)}
    found = bounds({}, samples, 3)
    assert found and "longer than their GPU time" in found
    assert EXCESS_MARGIN_MS >= 0.1 and TAIL_MARGIN_MS <= 0.01   # the bounds the H200 figures support


def test_the_wall_clock_bound_grows_with_the_kernel():
    # 0.5 ms more host time a call is within a tenth of a 10 ms kernel, and far past a 12 us one's bound
    rng = random.Random(6)
    long = {"candidate": _calls(20, rng, kernel=10.0, shift={"excess_ms": 0.5}),
            "baseline": _calls(20, rng, kernel=10.0)}
    assert bounds({}, long, 6) is None
    short = {"candidate": _calls(20, rng, shift={"excess_ms": 0.5}), "baseline": _calls(20, rng)}
    assert "longer than their GPU time" in (bounds({}, short, 7) or "")


def test_a_round_counts_as_capped_only_well_below_the_clock():
    from harness.timing.cuda_loop import capped

    class H200:
        max_sm_mhz = 1980

    # Seen on the H200: the largest flash scenarios read SwPowerCap at 1950-1965 MHz (their own speed).
    assert not capped({"reasons": ["SwPowerCap"], "sm_mhz": 1950}, H200)
    assert capped({"reasons": ["SwPowerCap"], "sm_mhz": 1500}, H200)
    assert capped({"reasons": ["HwThermalSlowdown"], "sm_mhz": 1900}, H200)
    assert not capped({"reasons": ["GpuIdle"], "sm_mhz": 345}, H200)      # idling is not a cap
    assert capped({"reasons": ["HwSlowdown"], "sm_mhz": None}, H200)      # no clock: the reason decides
    assert capped({"reasons": ["SwPowerCap"], "sm_mhz": 1000}, None)


def test_a_figure_claiming_more_excused_gaps_than_the_baseline_gains_one_allowance_at_most():
    from harness.timing.cuda_loop import EXCUSED_MARGIN_MS, choose_clock

    class Ctx:
        clock, messages, event_offsets = "cupti", [], {}

    rng = random.Random(6)
    n = 20
    # an honest span (12 us) whose reply claims 5 us of it was gaps between records (work 7 us), the
    # baseline's calls one kernel each: the figure keeps all but one gap's allowance of it
    events = [0.0143 + rng.uniform(-0.0002, 0.0002) for _ in range(n)]
    cand = dict(_calls(n, rng), event_ms=events, span_ms=[0.012] * n, work_ms=[0.007] * n)
    base = dict(_calls(n, rng), event_ms=list(events), span_ms=[0.012] * n, work_ms=[0.012] * n)
    samples = {"candidate": cand, "baseline": base}
    assert choose_clock(Ctx(), samples) == "cupti"
    assert cand["ms"] == [0.012 - EXCUSED_MARGIN_MS] * n and cand["excused_held"] == n
    # forging the span too (5 us short, the events honest) is what the gap bound refuses
    cand.update(span_ms=[0.007] * n, work_ms=[0.007] * n)
    choose_clock(Ctx(), samples)
    assert "outside the GPU work CUPTI recorded" in (bounds({}, samples, 6) or "")
