"""The trusted parent's device: synchronisation, cache flushing, how busy the GPU is, device information.

The timing loops (loop.py, cuda_loop.py) flush through it between rounds; only what differs between
a CPU and a CUDA task lives here.
"""

import os
import platform
import shutil
import subprocess
import time
from pathlib import Path

import torch

from ..errors import EnvironmentProblem

MIB = 1 << 20
GIB = float(1 << 30)
# What PyTorch's allocator may keep cached in the parent between scenarios (CudaDevice.release): flash's
# references, in chunks of 1 GiB, stay under it and keep their blocks (no new allocation per scenario).
RELEASE_BYTES = 4 << 30
# An upper bound on the SM clock of the GPUs the harness runs on (the H200 boosts to 1.98 GHz).
MAX_CLOCK_HZ = 3.0e9


def out_of_memory(exc):
    """Whether `exc` is PyTorch's, or the CUDA driver's, out-of-memory error."""
    oom = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    if oom is not None and isinstance(exc, oom):
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and ("CUDA out of memory" in text or "CUDA_ERROR_OUT_OF_MEMORY" in text
                                              or "CUDA driver error 2 " in text)


def memory_report():
    """The GPU's memory as the parent sees it (its current device), for an out-of-memory error."""
    try:
        free, total = torch.cuda.mem_get_info()
        return (f"{free / GIB:.1f} of {total / GIB:.1f} GiB free; this process: "
                f"{torch.cuda.memory_allocated() / GIB:.1f} GiB in PyTorch tensors, "
                f"{torch.cuda.memory_reserved() / GIB:.1f} GiB held by its allocator")
    except (RuntimeError, AssertionError) as exc:    # (AssertionError: a PyTorch built without CUDA)
        return f"the GPU's memory could not be read ({exc})"


def make_device(kind):
    if kind == "cuda":
        return CudaDevice()
    return CpuDevice()


def _cpu_caches():
    """[(level, type, bytes)] of cpu0's caches (sysfs); those that do not read are left out."""
    out = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip().upper()
            mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
            out.append((int((index / "level").read_text()), (index / "type").read_text().strip(),
                        int(text.rstrip("KMG")) * mult))
        except (OSError, ValueError):
            continue
    return out


def _cpu_llc_bytes():
    """Size of the largest CPU cache level, or 32 MiB when unknown."""
    return max((size for _, _, size in _cpu_caches()), default=0) or 32 * MIB


def _cpu_l2_bytes():
    """Size of cpu0's L2 (unified or data), or 1 MiB when unknown."""
    return next((size for level, kind, size in _cpu_caches() if level == 2 and kind != "Instruction"), 0) or MIB


def _coalesced(spans, gap=4096):
    """[(address, bytes)] sorted and merged where less than `gap` apart (a round's slots lie page by page
    in one buffer): a few native calls a round instead of one a slot."""
    out = []
    for addr, n in sorted(spans):
        if out and addr <= out[-1][0] + out[-1][1] + gap:
            last_addr, last_n = out[-1]
            out[-1] = (last_addr, max(last_n, addr + n - last_addr))
        else:
            out.append((addr, n))
    return out


class CpuDevice:
    kind = "cpu"

    def __init__(self):
        self.torch_device = torch.device("cpu")
        self.cache_bytes = _cpu_llc_bytes()
        self._bufs = {}            # bytes -> the buffer written over by a flush of that size
        self._flush_value = 0.0
        self.line_flush = None     # harness/native/flush.c, when built (use_line_flush)
        # What a line flush leaves warm: the core's own caches (code, stack, the last call's data).
        # Written over too, so every call starts with them cold as well (2 x L2: 4 MiB here).
        self.private_bytes = 2 * _cpu_l2_bytes()

    def use_line_flush(self, data_dir):
        """Flush a round's own buffers line by line (CLFLUSHOPT) instead of writing 2 x the last-level
        cache; returns why not, or None."""
        from .. import native
        self.line_flush, why = native.line_flusher(data_dir)
        return why

    def sync(self):
        pass

    def flush(self, spans=None):
        """`spans` [(address, bytes)]: evict exactly those lines from every cache (the round's buffers),
        when the native flush is there; otherwise, or without spans, write over the whole cache."""
        if spans is not None and self.line_flush is not None:
            for addr, n in _coalesced(spans):
                self.line_flush.ks_flush(addr, n)
            self._write_over(self.private_bytes)
        else:
            self._write_over(2 * self.cache_bytes)   # twice the last-level cache: the next call starts cold

    def _write_over(self, nbytes):
        """Write a buffer of `nbytes` (kept between flushes) with a new value."""
        buf = self._bufs.get(nbytes)
        if buf is None:
            buf = self._bufs[nbytes] = torch.empty(nbytes // 4, dtype=torch.float32)
        self._flush_value += 1.0
        buf.fill_(self._flush_value)

    def info(self):
        model = platform.processor() or platform.machine()
        try:
            for line in Path("/proc/cpuinfo").read_text().splitlines():
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        return {"name": model, "cores": os.cpu_count(), "cache_bytes": self.cache_bytes,
                "torch": torch.__version__}


class CudaDevice:
    kind = "cuda"

    def __init__(self):
        if not torch.cuda.is_available():
            raise EnvironmentProblem("CUDA is not available to PyTorch on this machine "
                                     f"(torch {torch.__version__}, built for CUDA {torch.version.cuda})")
        self.torch_device = torch.device("cuda", torch.cuda.current_device())
        props = torch.cuda.get_device_properties(self.torch_device)
        self.props = props
        self.l2_bytes = getattr(props, "L2_cache_size", 0) or 0
        self._flush_buf = None
        # busy_ms's kernel's tensor, made here: torch's context exists from the start, before the
        # calibration of the events and the executors' arenas.
        self._busy = torch.zeros(1, device=self.torch_device)
        self._driver = None
        self.guard = None          # the parent's persisting-L2 defence (use_l2_guard, l2_guard.py)
        from . import nvml
        self.nvml, self.nvml_why = nvml.open_device(nvml.torch_bus_id(props))

    def clocks(self):
        """NVML's reading of the GPU now (harness/timing/nvml.py), or None without NVML."""
        return self.nvml.sample() if self.nvml is not None else None

    def driver(self):
        """The CUDA driver API on torch's context (harness/executor/cuda_driver.py), for the executors' arenas."""
        if self._driver is None:
            from ..executor.cuda_driver import Driver
            torch.zeros(1, device=self.torch_device).add_(1)   # torch's context exists and is current
            self._driver = Driver(self.torch_device.index or 0)
        return self._driver

    def use_l2_guard(self, evict=None):
        """Before every flush, reset persisting L2 lines (and the set-aside) from this context
        (harness/timing/l2_guard.py); returns what it does, for device_info."""
        from . import l2_guard

        def make_buffer(nbytes, stream):
            buf = torch.empty(max(1, nbytes // 4), dtype=torch.float32, device=self.torch_device)
            ext = torch.cuda.ExternalStream(stream, device=self.torch_device)

            def write():
                with torch.cuda.stream(ext):
                    buf.zero_()
                ext.synchronize()
            return buf.data_ptr(), buf.numel() * 4, write
        try:
            self.guard = l2_guard.PersistingGuard(self.driver(), make_buffer,
                                                  l2_guard.EVICT if evict is None else evict)
            self.guard.before_flush()
        except RuntimeError as exc:     # no persisting-L2 control on this driver: said, not fatal
            self.guard = None
            return f"not guarded: {exc}"
        return self.guard.describe()

    def persisting_changed(self):
        """A finding when the device's persisting-L2 set-aside changed since the last look (l2_guard)."""
        return self.guard.check() if self.guard is not None else None

    def busy_ms(self):
        """How long a tiny kernel of this process takes to run and be waited for, right now: longer
        when another process's work still occupies the GPU (contexts of two processes take turns)."""
        t0 = time.perf_counter_ns()
        self._busy.add_(1)
        torch.cuda.synchronize(self.torch_device)
        return (time.perf_counter_ns() - t0) / 1e6

    def free_bytes(self):
        """The GPU's free memory now (cudaMemGetInfo: every process's use counted), in bytes."""
        return int(torch.cuda.mem_get_info(self.torch_device)[0])

    def release(self):
        """Gives back what PyTorch's allocator holds in this process and no tensor uses, when that is
        over RELEASE_BYTES: a scenario's reference (22 GiB on rmsnorm's largest) stays cached
        otherwise, where the executors and the next scenario need it. Returns the bytes given back."""
        idle = torch.cuda.memory_reserved(self.torch_device) - torch.cuda.memory_allocated(self.torch_device)
        if idle <= RELEASE_BYTES:
            return 0
        torch.cuda.empty_cache()
        return idle

    @property
    def arch(self):
        major, minor = self.props.major, self.props.minor
        return f"sm_{major}{minor}"

    def sync(self):
        torch.cuda.synchronize(self.torch_device)

    def flush(self, spans=None):
        """Write a buffer of at least twice the L2 size (256 MiB when the size is unknown), persisting
        lines reset first (use_l2_guard); `spans` is the CPU's (CpuDevice.flush) and not used here."""
        if self.guard is not None:
            self.guard.before_flush()
        if self._flush_buf is None:
            size = max(2 * self.l2_bytes, 64 * MIB) if self.l2_bytes else 256 * MIB
            self._flush_buf = torch.empty(size // 4, dtype=torch.float32, device=self.torch_device)
        self._flush_buf.zero_()

    def info(self):
        return {"name": self.props.name, "arch": self.arch, "memory_bytes": self.props.total_memory,
                "l2_bytes": self.l2_bytes, "sms": self.props.multi_processor_count,
                "driver": _driver_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
                "max_sm_mhz": self.nvml.max_sm_mhz if self.nvml is not None else None,
                "nvml": self.nvml.matched if self.nvml is not None else self.nvml_why}


def _driver_version():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return None
