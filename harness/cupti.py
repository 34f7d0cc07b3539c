"""GPU activity as CUPTI records it, read from a finished torch.profiler.profile (torch 1.13 and 2.x):
the harness's calibration of its event timing (executor_cuda_timing.event_offsets) and the fidelity
tool (harness/tools/cupti_fidelity.py) read it the same way."""

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
    """(name, kind, start_us, end_us) of the kineto events of one device type; torch 2.x counts in
    nanoseconds (start_ns, duration_ns), 1.13 in whole microseconds. GPU user annotations (ranges,
    not work) are left out."""
    out = []
    for e in events:
        if e.device_type() != device_type or _flag(e, "is_user_annotation") or _flag(e, "is_hidden_event"):
            continue
        if hasattr(e, "start_ns"):
            start, length = e.start_ns() / 1e3, e.duration_ns() / 1e3
        else:
            start, length = float(e.start_us()), float(e.duration_us())
        out.append((e.name(), kind_of(e.name()), start, start + length))
    return out


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

