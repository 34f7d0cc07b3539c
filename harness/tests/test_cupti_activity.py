"""CUPTI's records of a timed call (harness/executor/cupti_activity.py) and the clock a scenario's figures come
from (cuda_loop.choose_clock): the span of the call's own work, the harness's pad left out;
a scenario whose records are incomplete anywhere is timed by its events, every implementation alike.
(CUPTI itself needs the GPU: scripts/gpu/timing-check.sh.)"""

import ctypes
import struct

from harness.executor.cupti_activity import (FRONT_END_GAP_MS, KIND_CONCURRENT_KERNEL, KIND_MEMCPY, KIND_MEMSET,
                                             call_layout, call_span_ms, read_records, work_of)
from harness.timing.cuda_loop import choose_clock

PAD = 0.1   # ms


def _buffer(records):
    """A CUPTI buffer of kernel/memcpy/memset records laid out as CUPTI does (kind at 0, start and
    end at 16 and 24), 64 bytes each, plus an API record (kind 4) that is not GPU work."""
    raw = b""
    for kind, start, end in records:
        raw += struct.pack("<I12xQQ32x", kind, start, end)
    buf = ctypes.create_string_buffer(raw, len(raw))
    return buf, len(raw)


def _next_record(sizes):
    """cuptiActivityGetNextRecord over fixed-size records: 0 and the next, then 12 (no more)."""
    def next_record(buf, valid, rec):
        ptr = ctypes.cast(rec, ctypes.POINTER(ctypes.c_void_p))
        cur = ptr[0]
        nxt = buf.value if cur is None else cur + sizes
        if nxt + sizes > buf.value + valid.value:
            return 12
        ptr[0] = nxt
        return 0
    return next_record


def test_records_read_as_kind_start_end_and_other_kinds_are_left_out():
    buf, n = _buffer([(KIND_CONCURRENT_KERNEL, 1000, 101000), (4, 5, 6), (KIND_MEMSET, 102000, 103000),
                      (KIND_MEMCPY, 103500, 104000)])
    got = read_records(ctypes.c_void_p(ctypes.addressof(buf)), n, _next_record(64))
    assert got == [("kernel", 1000, 101000), ("memset", 102000, 103000), ("memcpy", 103500, 104000)]


def test_the_span_leaves_the_pad_out_and_runs_from_the_first_work_to_the_last():
    pad = ("kernel", 0, 100_500)
    # two kernels with a gap between them (gaps inside the call count: the events hold them too)
    assert call_span_ms([("kernel", 104_000, 106_000), pad, ("kernel", 102_000, 103_000)], PAD) == 0.004
    assert call_span_ms([pad, ("memset", 101_000, 101_500)], PAD) == 0.0005


def test_the_layout_says_what_the_pad_did_not_cover_and_where_the_gpu_idled_in_the_span():
    pad = ("kernel", 0, 100_500)
    # a memset, 1 us idle, a kernel overlapping a copy, 0.5 us idle, a kernel; the call's first record
    # 2 us after the pad ended (the host was still queueing it)
    got = call_layout([pad, ("memset", 102_500, 103_000), ("kernel", 104_000, 108_000),
                       ("memcpy", 105_000, 109_000), ("kernel", 109_500, 110_500)], PAD)
    assert got == {"span": 0.008, "idle": 0.0015, "work": 0.0065, "lead": 0.002}
    assert call_layout([("kernel", 5, 10), ("kernel", 5, 9)], 0.0) == {"span": 5e-6, "idle": 0.0, "work": 5e-6,
                                                                       "lead": None}
    assert call_layout([("kernel", 102_000, 103_000)], PAD) is None     # no pad record first


def test_a_front_end_gap_between_a_calls_records_is_not_in_its_figure():
    pad = ("kernel", 0, 100_500)
    # cuDNN's call on the H200: a memset, then its kernel, which the GPU started 0.9 us later in some
    # processes than in others (the kernel itself as long): the same figure either way
    soon = call_layout([pad, ("memset", 101_000, 101_500), ("kernel", 102_000, 110_000)], PAD)
    late = call_layout([pad, ("memset", 101_000, 101_500), ("kernel", 102_900, 110_900)], PAD)
    assert late["span"] - soon["span"] > 0.0008
    assert soon["work"] == late["work"] == 0.0085
    assert FRONT_END_GAP_MS >= 0.0015


def test_host_work_between_a_calls_kernels_counts_beyond_the_front_end_gap():
    pad = ("kernel", 0, 100_500)
    # the attack: the call's first kernel, 20 us of the host's own work (the GPU idle: nothing is
    # queued), then the kernel that writes the result; every microsecond past the allowance counts
    got = call_layout([pad, ("kernel", 101_000, 102_000), ("kernel", 122_000, 123_000)], PAD)
    assert got["work"] == (22_000 - FRONT_END_GAP_MS * 1e6) / 1e6
    # and so do many small ones: each gap is excused no more than the allowance
    many = [pad] + [("kernel", 101_000 + k * 10_000, 102_000 + k * 10_000) for k in range(10)]
    got = call_layout(many, PAD)
    assert abs(got["work"] - (got["span"] - 9 * FRONT_END_GAP_MS)) < 1e-12 and got["idle"] == 0.081


def test_the_work_of_records_that_overlap_is_their_union_less_the_excused_gaps():
    assert work_of([(0, 10), (5, 12), (13, 20)], 0) == (20, 1, 20)
    assert work_of([(0, 10), (5, 12), (13, 20)], 1) == (20, 1, 19)
    assert work_of([(0, 10), (100, 110)], 50) == (110, 90, 60)


def test_a_span_that_does_not_start_with_the_pad_is_not_read():
    # the pad's record missing (dropped): the first kernel is the call's, far shorter than the pad
    assert call_span_ms([("kernel", 102_000, 103_000), ("kernel", 104_000, 105_000)], PAD) is None
    assert call_span_ms([("memset", 0, 200_000), ("kernel", 201_000, 202_000)], PAD) is None
    assert call_span_ms([("kernel", 0, 100_500)], PAD) is None     # nothing ran but the pad
    assert call_span_ms([], PAD) is None
    assert call_span_ms([("kernel", 5, 10)], 0.0) == 5e-6          # unpadded: everything is the call


class _Ctx:
    def __init__(self, clock="cupti"):
        self.clock, self.messages, self.event_offsets = clock, [], {"native": 0.0023, "peers": 0.002}


def _samples(spans_cand, spans_base, events=(0.0123, 0.0124), works=None):
    """Two implementations' calls: event times, spans, and each call's figure (its span unless given)."""
    works = works or (spans_cand, spans_base)
    return {"candidate": {"ms": [], "event_ms": list(events), "span_ms": list(spans_cand), "work_ms": list(works[0])},
            "baseline": {"ms": [], "event_ms": list(events), "span_ms": list(spans_base), "work_ms": list(works[1])}}


def test_every_implementation_is_timed_by_its_spans_when_every_call_has_one():
    ctx, samples = _Ctx(), _samples([0.01, 0.0101], [0.0099, 0.01])
    assert choose_clock(ctx, samples) == "cupti"
    assert samples["candidate"]["ms"] == [0.01, 0.0101] and samples["baseline"]["ms"] == [0.0099, 0.01]
    assert [round(g, 7) for g in samples["candidate"]["gap_ms"]] == [0.0023, 0.0023]
    assert ctx.messages == []


def test_the_figure_is_the_work_and_the_gap_bound_sees_what_it_left_out():
    ctx = _Ctx()
    samples = _samples([0.011, 0.011], [0.01, 0.01], works=([0.009, 0.009], [0.01, 0.01]))
    assert choose_clock(ctx, samples) == "cupti"
    assert samples["candidate"]["ms"] == [0.009, 0.009]
    # the gap bound's figure: event - span (what ran inside the events but outside the records)
    assert [round(g, 7) for g in samples["candidate"]["gap_ms"]] == [0.0013, 0.0014]
    assert [round(g, 7) for g in samples["baseline"]["gap_ms"]] == [0.0023, 0.0024]


def test_the_candidate_leaves_out_no_more_of_its_gaps_than_the_baseline_and_one_allowance():
    from harness.timing.cuda_loop import EXCUSED_MARGIN_MS
    ctx = _Ctx()
    # the baseline's calls leave 1 us out; the candidate's replies claim 1, 2.5 and 10 us of gaps
    samples = _samples([0.02, 0.02, 0.02], [0.02, 0.02, 0.02], events=(0.0223,) * 3,
                       works=([0.019, 0.0175, 0.01], [0.019, 0.019, 0.019]))
    samples["incumbent"] = {"ms": [], "event_ms": [0.0223], "span_ms": [0.02], "work_ms": [0.0]}
    samples["peer:cudnn"] = {"ms": [], "event_ms": [0.0223], "span_ms": [0.02], "work_ms": [0.01]}
    choose_clock(ctx, samples)
    floor = 0.02 - 0.001 - EXCUSED_MARGIN_MS
    assert EXCUSED_MARGIN_MS >= 0.002
    assert samples["candidate"]["ms"] == [0.019, 0.0175, floor] and samples["candidate"]["excused_held"] == 1
    assert samples["incumbent"]["ms"] == [floor]
    # trusted code (the baseline, the peers) as its records read
    assert samples["baseline"]["ms"] == [0.019] * 3 and samples["peer:cudnn"]["ms"] == [0.01]
    # without a baseline: the allowance alone
    alone = {"candidate": {"ms": [], "event_ms": [0.0223], "span_ms": [0.02], "work_ms": [0.01]}}
    choose_clock(_Ctx(), alone)
    assert alone["candidate"]["ms"] == [0.02 - EXCUSED_MARGIN_MS]


def test_a_work_figure_a_reply_cannot_back_with_its_span_is_not_read():
    from harness.timing.cuda_loop import _work_ms
    assert _work_ms({"span_ms": [0.01], "work_ms": [0.009]}, 0.01) == 0.009
    assert _work_ms({"span_ms": [0.01], "work_ms": [0.011]}, 0.01) is None      # more than its span
    assert _work_ms({"work_ms": [0.009]}, None) is None                         # no span
    assert _work_ms({"span_ms": [0.01]}, 0.01) is None                          # no work: the events time it
    for bad in ([0.0], [True], ["0.009"], [0.001, 0.002]):
        assert _work_ms({"work_ms": bad}, 0.01) is None


def test_one_missing_span_times_the_whole_scenario_by_its_events_and_says_so():
    ctx, samples = _Ctx(), _samples([0.01, None], [0.0099, 0.01])
    assert choose_clock(ctx, samples) == "events"
    # the events less the native path's offset, for the baseline too (its spans were all there)
    assert [round(v, 7) for v in samples["baseline"]["ms"]] == [0.01, 0.0101]
    assert "gap_ms" not in samples["baseline"]
    assert len(ctx.messages) == 1 and "CUPTI's records were missing for candidate" in ctx.messages[0]
    choose_clock(ctx, _samples([None, None], [0.0099, 0.01]))
    assert len(ctx.messages) == 1     # said once an evaluation


def test_spans_a_candidate_sends_when_cupti_was_not_asked_for_are_not_used():
    ctx, samples = _Ctx("events"), _samples([0.001, 0.001], [0.0099, 0.01])
    assert choose_clock(ctx, samples) == "events"
    assert [round(v, 7) for v in samples["candidate"]["ms"]] == [0.01, 0.0101]
    assert ctx.messages == []


def test_the_layout_a_reply_gives_is_read_only_as_times():
    from harness.timing.cuda_loop import _span_ms
    assert _span_ms({"lead_ms": [0.0]}, "lead_ms", zero=True) == 0.0
    assert _span_ms({"span_ms": [0.0]}) is None                    # a span of nothing is no span
    for bad in ([True], [-0.001], ["1"], [0.1, 0.2], 0.1, [1e9]):
        assert _span_ms({"idle_ms": bad}, "idle_ms", zero=True) is None
    from harness.timing.cuda_loop import _medians_read
    samples = {"candidate": {"lead_ms": [None, 0.001, 0.003]}, "peer:cudnn": {"lead_ms": [None]}}
    assert _medians_read(samples, "lead_ms") == {"candidate": 0.002}     # a call that read no time is left out
