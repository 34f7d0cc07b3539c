"""Stand-ins for the CUDA driver, the harness's pad and CUPTI, for tests of code that drives them
(executor/process.py's timed calls, tools/lab/call_cost.py): each launch appends a kernel record of its length,
in ns of a GPU clock, and take() hands over what is queued."""


class Drv:
    def synchronize(self):
        pass

    def event(self):
        return object()

    def record(self, event, stream):
        pass

    def event_sync(self, event):
        pass

    def elapsed_ms(self, a, b):
        return 0.01


class Cupti:
    """Records queued as the code launches; take() returns and clears them (forced or not, here
    alike), counting takes."""

    def __init__(self):
        self.records, self.takes, self.t, self.gap, self.step = [], 0, 0, 1000, 1

    def run(self, ns):
        ns = round(ns / self.step) * self.step      # the GPU clock's step
        self.records.append(("kernel", self.t, self.t + ns))
        self.t += ns + self.gap

    def take(self, flags=1):
        self.takes += 1
        out, self.records = self.records, []
        return out


class Pad:
    def __init__(self, cupti):
        self.cupti = cupti

    def launch(self, ms):
        self.cupti.run(int(ms * 1e6))
