"""A CUDA executor takes CUPTI's records before a timed call only when something may have run since
the last call's own take (executor/process.py, `_timed_gpu`): a take is a forced flush of CUPTI's buffers,
and between two calls the executor queues no GPU work. The attack it must not open: work left
before the pad (by anything) is never folded into a call's figure; that call has no span, and the
scenario is timed by its events (test_cupti_activity.py). Driven here with stand-ins for the
driver, the pad and CUPTI, whose records are the GPU's timestamps in ns."""

from harness.executor import process as ex_mod
from harness.executor.process import Executor

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
