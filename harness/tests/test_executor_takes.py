"""A CUDA executor takes CUPTI's records before a timed call only when something may have run since
the last call's own take (executor.py, `_timed_gpu`): a take is a forced flush of CUPTI's buffers,
and between two calls the executor queues no GPU work. The attack it must not open: work left
before the pad (by anything) is never folded into a call's figure; that call has no span, and the
scenario is timed by its events (test_cupti_activity.py). Driven here with stand-ins for the
driver, the pad and CUPTI, whose records are the GPU's timestamps in ns."""

from harness import executor as ex_mod
from harness.executor import Executor

PAD_MS = 0.1


class _Drv:
    def synchronize(self):
        pass

    def record(self, event, stream):
        pass

    def event_sync(self, event):
        pass

    def elapsed_ms(self, a, b):
        return 0.01


class _Cupti:
    """Records queued as the executor launches; take() returns and clears them, counting takes."""

    def __init__(self):
        self.records, self.takes, self.t, self.gap, self.step = [], 0, 0, 1000, 1

    def run(self, ns):
        ns = round(ns / self.step) * self.step      # the GPU clock's step
        self.records.append(("kernel", self.t, self.t + ns))
        self.t += ns + self.gap

    def take(self):
        self.takes += 1
        out, self.records = self.records, []
        return out


class _Pad:
    def __init__(self, cupti):
        self.cupti = cupti

    def launch(self, ms):
        self.cupti.run(int(ms * 1e6))


class _State:
    def check_and_reset(self, stream):
        return []


def _executor():
    ex = Executor(None)
    cupti = _Cupti()
    ex.gpu = {"drv": _Drv(), "cupti": cupti, "pad": _Pad(cupti), "start": 1, "end": 2, "after": 3,
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
