"""GPU activity as CUPTI records it, read from a finished torch.profiler.profile (torch 1.13 and 2.x):
the harness's calibration of its event timing (cuda_loop.event_offsets) and the fidelity
tool (tools/lab/cupti_fidelity.py) read it the same way."""

from torch.autograd import DeviceType


def kind_of(name):
    """CUPTI's name of a device activity -> "flush" (a device-to-device copy), "memcpy" (another
    copy), "memset" or "kernel"."""
    if name.startswith("Memcpy DtoD"):
        return "flush"
    if name.startswith("Memcpy"):
        return "memcpy"
    if name.startswith("Memset"):
        return "memset"
    return "kernel"


def kineto_activity(events, device_type):
    """(name, kind, start_us, end_us) of the kineto events of one device type, in microseconds from
    the first of them; torch 2.x counts in nanoseconds (start_ns, duration_ns), 1.13 in whole
    microseconds. GPU user annotations (ranges, not work) are left out. From the first, not from the
    epoch: CUPTI's stamps are ns since 1970 (1.7e18), and a float of microseconds that large moves in
    0.25 us steps (the fidelity tool read every H200 kernel in 0.25 us steps until 2026-12-02)."""
    stamps = []
    for e in events:
        if e.device_type() != device_type or _flag(e, "is_user_annotation") or _flag(e, "is_hidden_event"):
            continue
        if hasattr(e, "start_ns"):
            start, length = int(e.start_ns()), int(e.duration_ns())
        else:
            start, length = int(e.start_us()) * 1000, int(e.duration_us()) * 1000
        stamps.append((e.name(), start, length))
    base = min((start for _, start, _ in stamps), default=0)
    return [(name, kind_of(name), (start - base) / 1e3, (start - base + length) / 1e3) for name, start, length in stamps]


def _flag(event, method):
    fn = getattr(event, method, None)
    return bool(fn()) if fn else False


def device_activity(prof):
    """The GPU activity of a finished torch.profiler.profile: kineto's own events, else FunctionEvents."""
    results = getattr(prof.profiler, "kineto_results", None)
    if results is not None:
        return kineto_activity(results.events(), DeviceType.CUDA)
    return [(e.name, kind_of(e.name), e.time_range.start, e.time_range.end) for e in prof.events()
            if e.device_type == DeviceType.CUDA and not getattr(e, "is_user_annotation", False)]

