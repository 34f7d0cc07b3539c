"""Where a stage spends the parent's time, phase by phase: kept in the result (a scenario's
timing.loop_ms, its correctness_ms), so that what a round or a check costs is seen, not guessed."""

import time


class Laps:
    def __init__(self):
        self.ms = {}
        self.t = time.perf_counter_ns()

    def add(self, key, ms):
        self.ms[key] = self.ms.get(key, 0.0) + ms

    def lap(self, key=None):
        """The time since the last lap to `key` (None: not counted, e.g. what a callee counted itself)."""
        now = time.perf_counter_ns()
        if key is not None:
            self.add(key, (now - self.t) / 1e6)
        self.t = now

    def report(self, **extra):
        """{**extra, phase: ms} rounded to 0.1 ms."""
        return {**extra, **{k: round(v, 1) for k, v in self.ms.items()}}
