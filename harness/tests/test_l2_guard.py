"""The parent's persisting-L2 defence (harness/timing/l2_guard.py), on a stand-in driver that records
what the parent asks of it: before every flush, its own persisting lines over the set-aside (the
window on its own stream, the write, the window gone, the set-aside back) and then the reset; a
set-aside changed behind its back is a finding, put back; an eviction too slow or refused falls back
to the reset alone and says why. What reaches another process's lines is measured on the GPU
(tools/lab/l2_persist.py, scripts/gpu/trust-cuda-check.sh)."""

import ctypes

import pytest

from harness.timing import l2_guard

MAX = 39321600          # the H200's largest set-aside (docs/harness.md)
WINDOW = 134213632


class Fn:
    """A driver entry point: callable, and takes restype/argtypes as ctypes' do."""

    def __init__(self, f):
        self.f = f

    def __call__(self, *args):
        return self.f(*args)


class Cu:
    def __init__(self, log, limit):
        self.log, self.limit, self.fail = log, limit, set()
        for name in ("cuCtxGetLimit", "cuCtxSetLimit", "cuCtxResetPersistingL2Cache", "cuStreamSetAttribute"):
            setattr(self, name, Fn(getattr(self, "_" + name)))

    def _rc(self, name):
        return 1 if name in self.fail else 0

    def _cuCtxGetLimit(self, ref, kind):
        assert kind == l2_guard.CU_LIMIT_PERSISTING_L2_CACHE_SIZE
        ref._obj.value = self.limit
        return 0

    def _cuCtxSetLimit(self, kind, n):
        self.log.append(("limit", n))
        self.limit = n
        return self._rc("cuCtxSetLimit")

    def _cuCtxResetPersistingL2Cache(self):
        self.log.append(("reset",))
        return self._rc("cuCtxResetPersistingL2Cache")

    def _cuStreamSetAttribute(self, stream, attr, value):
        assert attr == l2_guard.CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW
        raw = bytes(value)
        self.log.append(("window", stream.value, int.from_bytes(raw[:8], "little"),
                         int.from_bytes(raw[8:16], "little"), ctypes.c_float.from_buffer_copy(raw[16:20]).value,
                         int.from_bytes(raw[20:24], "little")))
        return self._rc("cuStreamSetAttribute")


class Drv:
    def __init__(self, limit=11796480):
        self.log = []
        self.cu = Cu(self.log, limit)

    def _ok(self, rc, what):
        if rc:
            raise RuntimeError(f"{what} failed: {rc}")

    def attribute(self, a):
        return {l2_guard.CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: MAX,
                l2_guard.CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: WINDOW}[a]

    def stream(self):
        return 77


def _guard(drv, evict=True, cost=0.00001):
    made = []

    def make_buffer(nbytes, stream):
        made.append((nbytes, stream))
        return 0x7000000, nbytes, lambda: drv.log.append(("write", nbytes))
    ticks = iter(range(1000))
    guard = l2_guard.PersistingGuard(drv, make_buffer, evict, clock=lambda: next(ticks) * cost)
    return guard, made


def test_before_every_flush_the_set_aside_is_filled_with_the_parents_own_lines_then_reset():
    drv = Drv()
    guard, made = _guard(drv)
    assert made == [(2 * MAX, 77)] and guard.evict
    drv.log.clear()
    guard.before_flush()
    assert drv.log == [("limit", MAX), ("window", 77, 0x7000000, 2 * MAX, 0.5, l2_guard.CU_ACCESS_PROPERTY_PERSISTING),
                       ("write", 2 * MAX), ("window", 77, 0, 0, 0.0, 0), ("limit", 11796480), ("reset",)]
    assert guard.describe()["evict"] is True


def test_a_set_aside_changed_behind_the_parents_back_is_a_finding_and_put_back():
    drv = Drv()
    guard, _ = _guard(drv, evict=False)
    assert guard.check() is None
    drv.cu.limit = MAX            # what cudaDeviceSetLimit in the candidate's process did, as this context reads it
    found = guard.check()
    assert "read 39321600 bytes from the parent's own context" in found and "started at 11796480" in found
    assert drv.cu.limit == 11796480 and guard.check() is None


def test_an_eviction_too_slow_for_every_flush_falls_back_to_the_reset_alone():
    drv = Drv()
    guard, _ = _guard(drv, cost=0.001)        # 1 ms a round
    assert not guard.evict and "one round took" in guard.describe()["evict_off"]
    drv.log.clear()
    guard.before_flush()
    assert drv.log == [("reset",)]


def test_a_driver_that_refuses_the_eviction_falls_back_to_the_reset_alone():
    drv = Drv()
    drv.cu.fail.add("cuStreamSetAttribute")
    guard, _ = _guard(drv)
    assert not guard.evict and guard.describe()["evict_off"].startswith("refused")
    drv.log.clear()
    guard.before_flush()
    assert drv.log == [("reset",)]


def test_a_driver_without_the_reset_is_not_guarded_and_says_so(monkeypatch):
    import torch

    from harness.timing.devices import CudaDevice
    drv = Drv()
    drv.cu.fail.add("cuCtxResetPersistingL2Cache")
    dev = object.__new__(CudaDevice)
    dev.guard, dev.torch_device = None, torch.device("cpu")
    monkeypatch.setattr(CudaDevice, "driver", lambda self: drv)
    monkeypatch.setattr(torch.cuda, "ExternalStream", lambda *a, **k: None, raising=False)
    said = dev.use_l2_guard(evict=False)
    assert dev.guard is None and said.startswith("not guarded") and dev.persisting_changed() is None


@pytest.mark.parametrize("nbytes", [0, 4096])
def test_a_window_value_is_the_drivers_layout(nbytes):
    raw = bytes(l2_guard.window_value(0x1000, nbytes, 0.25))
    assert len(raw) == 64 and int.from_bytes(raw[8:16], "little") == nbytes
    assert int.from_bytes(raw[:8], "little") == (0x1000 if nbytes else 0)
