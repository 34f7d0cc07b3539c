"""A CUDA executor takes CUPTI's records before a timed call only when something may have run since
the last call's own take (executor.py, `_timed_gpu`): a take is a forced flush of CUPTI's buffers,
and between two calls the executor queues no GPU work. The attack it must not open: work left
before the pad (by anything) is never folded into a call's figure; that call has no span, and the
scenario is timed by its events (test_cupti_activity.py). Driven here with stand-ins for the
driver, the pad and CUPTI, whose records are the GPU's timestamps in ns."""

from harness import executor as ex_mod
from harness.executor import Executor

from .cuda_standins import Cupti, Drv, Pad

PAD_MS = 0.1


class _State:
    def check_and_reset(self, stream):
        return []


def _executor():
    ex = Executor(None)
    cupti = Cupti()
    ex.gpu = {"drv": Drv(), "cupti": cupti, "pad": Pad(cupti), "start": 1, "end": 2, "after": 3,
              "state": _State(), "stream": 0}
    return ex, cupti


def test_back_to_back_calls_take_once_before_the_first_and_once_after_each():
    ex, cupti = _executor()
    calls = [lambda: (cupti.run(2000), 0)[1]] * 3
    reply = ex._timed_gpu(calls, PAD_MS)
    assert reply["span_ms"] == [0.002] * 3 and cupti.takes == 4
    reply = ex._timed_gpu(calls[:1], PAD_MS)       # the next request's call: nothing ran since
    assert reply["span_ms"] == [0.002] and cupti.takes == 5


def test_after_another_request_the_next_call_takes_first():
    ex, cupti = _executor()
    ex._timed_gpu([lambda: (cupti.run(2000), 0)[1]], PAD_MS)
    ex_mod._before(ex, {"cmd": "map"})
    cupti.run(500)                                  # what that request queued on the GPU
    reply = ex._timed_gpu([lambda: (cupti.run(3000), 0)[1]], PAD_MS)
    assert reply["span_ms"] == [0.003] and cupti.takes == 4


def test_work_left_between_two_calls_costs_the_second_its_span_and_is_never_counted_as_the_call():
    ex, cupti = _executor()
    ex._timed_gpu([lambda: (cupti.run(2000), 0)[1]], PAD_MS)
    ex_mod._before(ex, {"cmd": "call"})             # a call keeps the last take
    cupti.run(500)                                  # work that ran between the two calls anyway
    reply = ex._timed_gpu([lambda: (cupti.run(3000), 0)[1]], PAD_MS)
    assert reply["span_ms"] == [None]


def test_the_executor_says_how_fine_its_timestamps_are(monkeypatch):
    ex, cupti = _executor()
    cupti.step = 250                                # the pads' lengths in 250 ns steps
    monkeypatch.setattr(ex_mod, "Activity", lambda path: cupti)
    g = ex.gpu
    del g["cupti"]
    assert ex._cupti("libcupti.so") == "on, timestamps in 250 ns steps" and g["cupti"] is cupti
    assert ex._cupti("") == "not asked"


# Deferred takes (executor.py, `_timed_gpu`'s `deferred`): one forced take for up to DEFER_CALLS calls,
# each call's records told apart by CUPTI's clock read before its pad.

def _deferred_call(ex, cupti, ns, seq):
    return ex._timed_gpu([lambda: (cupti.run(ns), 0)[1]], PAD_MS, seq)


def test_deferred_calls_get_their_figures_from_one_take_in_a_later_reply():
    ex, cupti = _executor()
    replies = [_deferred_call(ex, cupti, 2000 + 1000 * i, seq=10 + i) for i in range(ex_mod.DEFER_CALLS)]
    assert all(r["span_ms"] == [None] for r in replies)
    assert all("deferred" not in r for r in replies[:-1])
    # The eighth call's reply carries all eight, each its own span; one take before the first, one after.
    assert [d[:3] for d in replies[-1]["deferred"]] == [[10 + i, 0, (2000 + 1000 * i) / 1e6]
                                                         for i in range(ex_mod.DEFER_CALLS)]
    assert cupti.takes == 2
    assert ex.cmd_take({}, [])["deferred"] == []                    # nothing left waiting


def test_a_calls_kernel_as_long_as_the_pad_is_not_read_as_the_next_calls_pad():
    ex, cupti = _executor()
    _deferred_call(ex, cupti, 2000, seq=1)
    _deferred_call(ex, cupti, int(PAD_MS * 1e6), seq=2)           # a kernel of the pad's length
    _deferred_call(ex, cupti, 3000, seq=3)
    got = {d[0]: d[2] for d in ex.cmd_take({}, [])["deferred"]}
    assert got == {1: 0.002, 2: PAD_MS, 3: 0.003}


def test_work_before_the_first_waiting_call_counts_for_none_and_work_between_calls_never_shortens_one():
    ex, cupti = _executor()
    _deferred_call(ex, cupti, 1000, seq=1)
    ex.gpu["taken"] = True                          # (no take before the next batch's first pad)
    ex._resolve()
    ex.gpu["resolved"] = []
    cupti.run(500)                                  # work before the next batch's first mark
    ex.gpu["taken"] = True
    _deferred_call(ex, cupti, 2000, seq=2)
    cupti.run(700)                                  # work left between two waiting calls
    _deferred_call(ex, cupti, 3000, seq=3)
    got = {d[0]: d[2] for d in ex.cmd_take({}, [])["deferred"]}
    # Call 2's span runs on to the end of what followed it (longer, never shorter); call 3's is its own.
    assert got[3] == 0.003 and got[2] == (2000 + cupti.gap + 700) / 1e6
    # And the work before call 2's mark is in nobody's span.


def test_another_request_resolves_the_waiting_calls_before_it_runs():
    ex, cupti = _executor()
    _deferred_call(ex, cupti, 2000, seq=1)
    ex_mod._before(ex, {"cmd": "map"})              # e.g. new buffers: its work must not join call 1's
    cupti.run(500)
    assert ex.gpu["pending"] == []
    reply = _deferred_call(ex, cupti, 3000, seq=2)  # takes before its pad, as after any other request
    assert [d[:3] for d in reply.get("deferred", [])] == [[1, 0, 0.002]]
    assert [d[:3] for d in ex.cmd_take({}, [])["deferred"]] == [[2, 0, 0.003]]


def test_a_call_timed_at_once_resolves_the_waiting_ones_first():
    ex, cupti = _executor()
    _deferred_call(ex, cupti, 2000, seq=1)
    reply = ex._timed_gpu([lambda: (cupti.run(3000), 0)[1]], PAD_MS)
    assert reply["span_ms"] == [0.003] and [d[:3] for d in reply["deferred"]] == [[1, 0, 0.002]]


def test_without_cuptis_clock_the_calls_are_taken_at_once():
    ex, cupti = _executor()
    ex.gpu["cupti"] = type("Old", (), {"take": cupti.take})()     # a CUPTI without cuptiGetTimestamp
    reply = ex._timed_gpu([lambda: (cupti.run(2000), 0)[1]], PAD_MS, 5)
    assert reply["span_ms"] == [0.002] and "deferred" not in reply


class _Ex:
    def __init__(self, replies=()):
        self.seq, self.replies, self.asked = 0, list(replies), []

    def request(self, msg):
        self.asked.append(msg)
        return self.replies.pop(0)


def _samples(*names):
    keys = ("ms", "span_ms", "lead_ms", "idle_ms")
    return {n: {k: [] for k in keys} for n in names}


def _sample(samples, name, event_ms):
    for k, v in (("ms", event_ms), ("span_ms", None), ("lead_ms", None), ("idle_ms", None)):
        samples[name][k].append(v)


def test_the_parent_puts_deferred_figures_in_their_calls_places_and_asks_for_the_rest_at_the_end():
    from harness.executor_cuda_timing import Waiting
    samples = _samples("candidate", "baseline")
    cand, base = _Ex(), _Ex([{"deferred": [[2, 0, 0.0031, 0.0001, 0.0]]}])
    waiting = Waiting(samples)
    for r in range(2):
        for ex, name in ((cand, "candidate"), (base, "baseline")):
            ex.seq += 1
            _sample(samples, name, 0.005)                   # the event figure meanwhile
            waiting.add(ex, name)
    waiting.apply(cand, {"deferred": [[1, 0, 0.0021, 0.0002, 0.0], [9, 0, 0.001, 0.0, 0.0]]}, "candidate")
    assert samples["candidate"]["ms"] == [0.0021, 0.005] and samples["candidate"]["lead_ms"] == [0.0002, None]
    cand.replies.append({"deferred": [[2, 0, 0.0022, 0.0, 0.0]]})
    base.replies.insert(0, {"deferred": [[1, 0, 0.003, 0.0, 0.0]]})
    waiting.finish({id(cand): "candidate", id(base): "baseline"})
    assert cand.asked == [{"cmd": "take"}] and base.asked == [{"cmd": "take"}]
    assert samples["candidate"]["span_ms"] == [0.0021, 0.0022] and samples["baseline"]["span_ms"] == [0.003, None]
    assert samples["baseline"]["ms"] == [0.003, 0.005]              # seq 2's figure came in no reply


def test_a_deferred_figure_that_is_not_a_time_leaves_the_call_without_one_and_a_malformed_reply_is_forged():
    import pytest

    from harness.executor_cuda_timing import Waiting
    from harness.executor_proc import ChildFailure
    samples = _samples("candidate")
    cand = _Ex()
    waiting = Waiting(samples)
    cand.seq = 1
    _sample(samples, "candidate", 0.005)
    waiting.add(cand, "candidate")
    waiting.apply(cand, {"deferred": [[1, 0, -1.0, None, "x"]]}, "candidate")
    assert samples["candidate"]["span_ms"] == [None] and samples["candidate"]["ms"] == [0.005]
    for bad in ({"deferred": "1"}, {"deferred": [[1, 0, 0.1]]}, {"deferred": [["1", 0, 0.1, 0, 0]]},
                {"deferred": [[True, 0, 0.1, 0, 0]]}, {"deferred": [[1, 3, 0.1, 0, 0]]}):
        with pytest.raises(ChildFailure) as info:
            waiting.apply(cand, bad, "candidate")
        assert info.value.kind == "forged"


def test_a_dropped_rounds_calls_wait_for_nothing():
    from harness.executor_cuda_timing import Waiting
    samples = _samples("candidate")
    cand = _Ex()
    waiting = Waiting(samples)
    for _ in range(2):
        cand.seq += 1
        _sample(samples, "candidate", 0.005)
        waiting.add(cand, "candidate")
    for v in samples["candidate"].values():
        v.pop()
    waiting.dropped()
    waiting.apply(cand, {"deferred": [[1, 0, 0.002, 0.0, 0.0], [2, 0, 0.009, 0.0, 0.0]]}, "candidate")
    assert samples["candidate"]["ms"] == [0.002]
    waiting.finish({})
    assert cand.asked == []
