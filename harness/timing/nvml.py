"""The GPU's clocks, temperature, power and clock-event reasons through NVML (the driver's
libnvidia-ml.so.1, ctypes, stdlib only), sampled by the trusted parent around each scenario (issue
14): a timing taken while the GPU was power- or thermally capped is not the kernel at full speed.

Best effort throughout: a reading the device or driver cannot give (NVML_ERROR_NOT_SUPPORTED, a
symbol an older driver lacks) is None, never an exception; a host without NVML gets no device and
a sentence saying why."""

import ctypes

LIBRARY = "libnvidia-ml.so.1"
NVML_SUCCESS = 0
NVML_CLOCK_SM = 1           # nvmlClockType_t
NVML_CLOCK_MEM = 2
NVML_TEMPERATURE_GPU = 0    # nvmlTemperatureSensors_t

# nvml.h's nvmlClocksEventReason* bits (formerly nvmlClocksThrottleReason*, the same values).
REASONS = {"GpuIdle": 0x1, "ApplicationsClocksSetting": 0x2, "SwPowerCap": 0x4, "HwSlowdown": 0x8,
           "SyncBoost": 0x10, "SwThermalSlowdown": 0x20, "HwThermalSlowdown": 0x40,
           "HwPowerBrakeSlowdown": 0x80, "DisplayClockSetting": 0x100}
# The reasons that mean "slower than this GPU runs this kernel": idling, application clocks, sync
# boost and display clocks are settings or states, not a cap imposed while the kernel ran.
THROTTLING = ("SwPowerCap", "HwSlowdown", "SwThermalSlowdown", "HwThermalSlowdown", "HwPowerBrakeSlowdown")

_u, _ull, _dev = ctypes.c_uint, ctypes.c_ulonglong, ctypes.c_void_p   # nvmlDevice_t is opaque
_pu, _pull, _pdev, _int = ctypes.POINTER(_u), ctypes.POINTER(_ull), ctypes.POINTER(_dev), ctypes.c_int
_SIGNATURES = {  # every one returns nvmlReturn_t, a C int (0: NVML_SUCCESS)
    "nvmlInit_v2": [], "nvmlShutdown": [], "nvmlDeviceGetCount_v2": [_pu],
    "nvmlDeviceGetHandleByIndex_v2": [_u, _pdev], "nvmlDeviceGetHandleByPciBusId_v2": [ctypes.c_char_p, _pdev],
    "nvmlDeviceGetClockInfo": [_dev, _int, _pu], "nvmlDeviceGetMaxClockInfo": [_dev, _int, _pu],
    "nvmlDeviceGetTemperature": [_dev, _int, _pu], "nvmlDeviceGetPowerUsage": [_dev, _pu],
    "nvmlDeviceGetCurrentClocksEventReasons": [_dev, _pull],
    "nvmlDeviceGetCurrentClocksThrottleReasons": [_dev, _pull],   # its older name, for older drivers
}


def decode(mask):
    """Names of the bits set in a reasons mask, in bit order; bits nvml.h did not name (yet) as hex."""
    names = [name for name, bit in REASONS.items() if mask & bit]
    rest = mask & ~sum(REASONS.values())
    return names + [hex(1 << i) for i in range(64) if rest >> i & 1]


def throttled(reasons):
    """The reasons (names) among `reasons` that mean the GPU was held below full speed."""
    return [r for r in reasons if r in THROTTLING]


def torch_bus_id(props):
    """NVML's bus id ("00000000:19:00.0") of a torch device's properties; None where torch does not
    expose the PCI address (1.13)."""
    try:
        return "%08X:%02X:%02X.0" % (props.pci_domain_id, props.pci_bus_id, props.pci_device_id)
    except (AttributeError, TypeError):
        return None


class Device:
    """One GPU through an initialised NVML; close() balances the nvmlInit_v2."""

    def __init__(self, lib, handle, matched):
        self._lib, self._handle, self.matched = lib, handle, matched
        self.max_sm_mhz = self._uint("nvmlDeviceGetMaxClockInfo", NVML_CLOCK_SM)

    def _call(self, name, *args):
        fn = getattr(self._lib, name, None)
        return fn is not None and fn(self._handle, *args) == NVML_SUCCESS

    def _uint(self, name, *args):
        out = _u()
        return out.value if self._call(name, *args, ctypes.byref(out)) else None

    def reasons_mask(self):
        out = _ull()
        for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            if self._call(name, ctypes.byref(out)):
                return out.value
        return None

    def sample(self):
        """One reading: sm_mhz, mem_mhz, temp_c, power_w, reasons (names); None where unanswered."""
        power_mw, mask = self._uint("nvmlDeviceGetPowerUsage"), self.reasons_mask()
        return {"sm_mhz": self._uint("nvmlDeviceGetClockInfo", NVML_CLOCK_SM),
                "mem_mhz": self._uint("nvmlDeviceGetClockInfo", NVML_CLOCK_MEM),
                "temp_c": self._uint("nvmlDeviceGetTemperature", NVML_TEMPERATURE_GPU),
                "power_w": None if power_mw is None else power_mw / 1000,
                "reasons": None if mask is None else decode(mask)}

    def close(self):
        if self._lib is not None:
            self._lib.nvmlShutdown()
            self._lib = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _error(lib, name, rc):
    text = getattr(lib, "nvmlErrorString", None)
    if text is not None:
        text.restype, text.argtypes = ctypes.c_char_p, [ctypes.c_int]
        return f"{name} returned {rc} ({(text(rc) or b'?').decode(errors='replace')})"
    return f"{name} returned {rc}"


def open_device(index_or_bus_id=None, library=LIBRARY):
    """(Device, None), or (None, why). An int is an NVML index; a str a PCI bus id, falling back to
    index 0 when NVML sees a single GPU; None means the only GPU. The bus id is the reliable key:
    CUDA_VISIBLE_DEVICES renumbers torch's devices, not NVML's."""
    try:
        lib = ctypes.CDLL(library)
        for name, args in _SIGNATURES.items():
            if (fn := getattr(lib, name, None)) is not None:
                fn.argtypes, fn.restype = args, ctypes.c_int
        rc = lib.nvmlInit_v2()
    except (OSError, AttributeError) as e:
        return None, f"NVML unavailable: {e}"
    if rc != NVML_SUCCESS:
        return None, f"NVML unavailable: {_error(lib, 'nvmlInit_v2', rc)}"
    handle, tried = _dev(), []

    def by_index(i, matched):
        if (rc := lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(handle))) == NVML_SUCCESS:
            return Device(lib, handle, matched)
        tried.append(_error(lib, f"nvmlDeviceGetHandleByIndex_v2({i})", rc))

    if isinstance(index_or_bus_id, int):
        if dev := by_index(index_or_bus_id, f"index {index_or_bus_id}"):
            return dev, None
    else:
        if index_or_bus_id is not None:
            rc = lib.nvmlDeviceGetHandleByPciBusId_v2(index_or_bus_id.encode(), ctypes.byref(handle))
            if rc == NVML_SUCCESS:
                return Device(lib, handle, f"bus id {index_or_bus_id}"), None
            tried.append(_error(lib, f"nvmlDeviceGetHandleByPciBusId_v2({index_or_bus_id!r})", rc))
        count = _u()
        if (rc := lib.nvmlDeviceGetCount_v2(ctypes.byref(count))) != NVML_SUCCESS:
            tried.append(_error(lib, "nvmlDeviceGetCount_v2", rc))
        elif count.value != 1:
            tried.append(f"{count.value} GPUs and no bus id that names one")
        elif dev := by_index(0, "index 0 (the only GPU)"):
            return dev, None
    lib.nvmlShutdown()
    return None, "NVML: no device: " + "; ".join(tried)


def _stat(samples, key, fn):
    values = [s.get(key) for s in samples if s.get(key) is not None]
    return fn(values) if values else None


def summarise(samples):
    """A scenario's samples for the result: SM clock range, hottest, most power, every reason seen
    (bit order) and the throttling ones among them, and how many samples."""
    seen = {r for s in samples for r in (s.get("reasons") or ())}
    order = list(REASONS) + sorted(seen - set(REASONS), key=lambda r: int(r, 16))
    reasons = [r for r in order if r in seen]
    power = _stat(samples, "power_w", max)
    return {"count": len(samples), "sm_mhz_min": _stat(samples, "sm_mhz", min),
            "sm_mhz_max": _stat(samples, "sm_mhz", max), "temp_c_max": _stat(samples, "temp_c", max),
            "power_w_max": None if power is None else round(power, 1),
            "reasons": reasons, "throttled": throttled(reasons)}
