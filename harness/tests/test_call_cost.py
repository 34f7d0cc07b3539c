"""tools/lab/call_cost.py's reading of its records and its report (the replay itself needs a GPU:
scripts/gpu/timing-check.sh, STEPS call-cost)."""

from tools.lab.call_cost import PHASES, split_at_pads, summarize

from .cuda_standins import Cupti, Drv, Pad

US = 1000   # ns


def test_records_of_several_calls_are_told_apart_by_their_pads():
    pad, call = 100 * US, 2 * US
    recs = [("kernel", 50, 60)]                      # before the first pad: left out
    for k in range(3):
        t0 = 1_000_000 * (k + 1)
        recs += [("kernel", t0 + 110 * US, t0 + 110 * US + call), ("kernel", t0, t0 + pad)]
    calls = split_at_pads(recs, 0.1)
    assert [len(c) for c in calls] == [2, 2, 2]
    assert all(c[0][2] - c[0][1] == pad and c[1][2] - c[1][1] == call for c in calls)
    # a pad whose record went missing: its call merges into the one before, which reads long
    del recs[4]
    merged = split_at_pads(recs, 0.1)
    assert [len(c) for c in merged] == [3, 2]
    assert merged[0][-1][2] - merged[0][1][1] > 1_000_000


def test_the_report_gives_each_phases_median_and_the_median_calls_total():
    phases = [{k: float(i + j) for j, k in enumerate(PHASES)} for i in range(5)]
    r = summarize("forced-each", phases, 5, 5)
    assert r["phase_us"]["sync"] == 2.0 and r["phase_us"]["layout"] == 2.0 + len(PHASES) - 1
    assert r["call_us"] == sum(2.0 + j for j in range(len(PHASES)))
    assert (r["variant"], r["readable"], r["calls"]) == ("forced-each", 5, 5)


def test_every_variant_reads_every_call_as_a_pad_and_one_call():
    from tools.lab.call_cost import VARIANTS, replay
    for name, flags, every, _size in VARIANTS:
        cupti = Cupti()
        phases, readable = replay(Drv(), Pad(cupti), cupti, flags, every, 24)
        assert readable == 24 and len(phases) == 24 and set(phases[0]) == set(PHASES), name
        # the takes: one before, then after every call / every 8 / none, then one at the end
        assert cupti.takes == {1: 26, 8: 5, 0: 2}[every], name
