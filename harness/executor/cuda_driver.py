"""The CUDA driver API through ctypes, for the trusted parent and the executors alike (stdlib only).

The executors hold no torch (except the peers'), so they reach the GPU through libcuda itself: the
device's primary context (the one a candidate's statically linked CUDA runtime also uses), a
blocking stream for the candidate, timing events, the harness's own pad kernel (PTX, see
harness/cuda/pad.cu) and the buffers the parent shares.

Buffers are shared through the virtual memory management API with POSIX file descriptors
(cuMemCreate ... cuMemExportToShareableHandle): the parent creates the physical allocation and maps
it for itself; the descriptor travels over the executor's socket like a CPU task's memfd, and the
executor imports and maps it. A descriptor is a capability of its own: no pid, no IPC namespace, so
it works inside the executor's sandbox (own PID and IPC namespaces), where legacy CUDA IPC handles
name the exporting process.
"""

import ctypes
from pathlib import Path

CU_STREAM_LEGACY = 0x1           # the legacy default stream: waits for, and is waited on by, every blocking stream
CU_STREAM_DEFAULT = 0x0          # a blocking stream
CU_EVENT_DEFAULT = 0x0
CU_MEM_ALLOCATION_TYPE_PINNED = 0x1
CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1
CU_MEM_LOCATION_TYPE_DEVICE = 0x1
CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3
CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0
CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39
CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103
CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4

PAD_PTX = Path(__file__).resolve().parents[1] / "cuda" / "pad.ptx"


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class AllocationProp(ctypes.Structure):
    """CUmemAllocationProp (cuda.h): 32 bytes on x86-64, checked against the header by a test."""
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


class AccessDesc(ctypes.Structure):
    """CUmemAccessDesc (cuda.h)."""
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class CudaError(RuntimeError):
    pass


class DeviceRange:
    """A device address range as __cuda_array_interface__ (bytes), so that torch can view memory it
    did not allocate: the parent's view of an arena, the peers' executor's view of its import."""

    def __init__(self, ptr, size):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 2, "strides": None}


class Driver:
    """libcuda on the current thread's primary context of one device."""

    def __init__(self, ordinal=0):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.cu.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        self._ok(self.cu.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        self._ok(self.cu.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
        self.device = dev.value
        ctx = ctypes.c_void_p()
        self._ok(self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        self._ok(self.cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        self.ctx = ctx
        self.elapsed = getattr(self.cu, "cuEventElapsedTime_v2", None) or self.cu.cuEventElapsedTime
        self.elapsed.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_void_p]
        self.record = self.cu.cuEventRecord
        self.record.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.event_sync = self.cu.cuEventSynchronize
        self.event_sync.argtypes = [ctypes.c_void_p]
        self.cu.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        for name in ("cuMemAddressReserve", "cuMemMap", "cuMemSetAccess", "cuMemUnmap", "cuMemAddressFree"):
            getattr(self.cu, name).restype = ctypes.c_int
        self.cu.cuMemMap.argtypes = [ctypes.c_uint64, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_uint64,
                                     ctypes.c_uint64]
        self.cu.cuMemSetAccess.argtypes = [ctypes.c_uint64, ctypes.c_size_t, ctypes.POINTER(AccessDesc),
                                           ctypes.c_size_t]
        self.cu.cuMemUnmap.argtypes = [ctypes.c_uint64, ctypes.c_size_t]
        self.cu.cuMemAddressFree.argtypes = [ctypes.c_uint64, ctypes.c_size_t]
        self.cu.cuMemRelease.argtypes = [ctypes.c_uint64]

    def _ok(self, rc, what):
        if rc != 0:
            text = ctypes.c_char_p()
            self.cu.cuGetErrorString(rc, ctypes.byref(text))
            raise CudaError(f"{what} failed: CUDA driver error {rc} ({(text.value or b'?').decode()})")

    def attribute(self, attr):
        value = ctypes.c_int()
        self._ok(self.cu.cuDeviceGetAttribute(ctypes.byref(value), attr, self.device), "cuDeviceGetAttribute")
        return value.value

    def synchronize(self):
        self._ok(self.cu.cuCtxSynchronize(), "cuCtxSynchronize")

    def touch(self, ptr, size):
        """Write zeros over [ptr, ptr + size) from this context and wait: every page of a mapping
        accessed once through this process's addresses before anything is timed on it."""
        self._ok(self.cu.cuMemsetD8_v2(ctypes.c_uint64(ptr), ctypes.c_ubyte(0), ctypes.c_size_t(size)),
                 "cuMemsetD8")
        self.synchronize()

    def prewarm_pool(self, stream, nbytes):
        """The device's default memory pool (the stream-ordered allocator's: cudaMallocAsync) made,
        told to keep what it reserves (release threshold: all of it) and given `nbytes` once on
        `stream`, here, before the executor's seccomp filter: an honest cudaMallocAsync under the
        filter was killed (tools/lab/alloc_syscalls.py names the calls the pool's making and growth
        make there), and a candidate's workspaces up to `nbytes` are now taken from memory the pool
        already holds. Returns None, or why not."""
        pool = ctypes.c_void_p()
        rc = self.cu.cuDeviceGetDefaultMemPool(ctypes.byref(pool), self.device)
        if rc != 0:
            return f"no default memory pool (CUDA driver error {rc})"
        keep = ctypes.c_uint64(2 ** 64 - 1)
        self._ok(self.cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, ctypes.byref(keep)),
                 "cuMemPoolSetAttribute")
        ptr = ctypes.c_uint64()
        s = ctypes.c_void_p(stream)
        self._ok(self.cu.cuMemAllocAsync(ctypes.byref(ptr), ctypes.c_size_t(nbytes), s), "cuMemAllocAsync")
        self._ok(self.cu.cuMemFreeAsync(ptr, s), "cuMemFreeAsync")
        self._ok(self.cu.cuStreamSynchronize(s), "cuStreamSynchronize")
        return None

    def stream(self):
        """A new blocking stream: it waits for the legacy stream's earlier work, and the legacy stream
        waits for its work (the harness records its events there)."""
        s = ctypes.c_void_p()
        self._ok(self.cu.cuStreamCreate(ctypes.byref(s), CU_STREAM_DEFAULT), "cuStreamCreate")
        return s.value

    def event(self):
        e = ctypes.c_void_p()
        self._ok(self.cu.cuEventCreate(ctypes.byref(e), CU_EVENT_DEFAULT), "cuEventCreate")
        return e.value

    def elapsed_ms(self, start, end):
        ms = ctypes.c_float()
        self._ok(self.elapsed(ctypes.byref(ms), start, end), "cuEventElapsedTime")
        return float(ms.value)

    # -- shared memory ---------------------------------------------------------------------------
    def _prop(self):
        prop = AllocationProp()
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE
        prop.location.id = self.device
        return prop

    def granularity(self):
        g = ctypes.c_size_t()
        prop = self._prop()
        self._ok(self.cu.cuMemGetAllocationGranularity(ctypes.byref(g), ctypes.byref(prop),
                                                       CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                 "cuMemGetAllocationGranularity")
        return g.value

    def create_shared(self, size):
        """(allocation handle, file descriptor, size rounded up to the granularity)."""
        if not self.attribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED):
            raise CudaError("this GPU or driver cannot export memory as a file descriptor (needed to share "
                            "buffers with the executors)")
        g = self.granularity()
        size = -(-max(size, 1) // g) * g
        handle = ctypes.c_uint64()
        prop = self._prop()
        self._ok(self.cu.cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(prop),
                                     ctypes.c_uint64(0)), "cuMemCreate")
        fd = ctypes.c_int(-1)
        self._ok(self.cu.cuMemExportToShareableHandle(ctypes.byref(fd), handle,
                                                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                                      ctypes.c_uint64(0)), "cuMemExportToShareableHandle")
        return handle.value, fd.value, size

    def import_shared(self, fd):
        handle = ctypes.c_uint64()
        self._ok(self.cu.cuMemImportFromShareableHandle(ctypes.byref(handle), ctypes.c_void_p(fd),
                                                        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                 "cuMemImportFromShareableHandle")
        return handle.value

    def map(self, handle, size):
        """Map an allocation read-write for this device; returns its device address."""
        ptr = ctypes.c_uint64()
        self._ok(self.cu.cuMemAddressReserve(ctypes.byref(ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
                                             ctypes.c_uint64(0), ctypes.c_uint64(0)), "cuMemAddressReserve")
        self._ok(self.cu.cuMemMap(ptr.value, size, 0, handle, 0), "cuMemMap")
        desc = AccessDesc()
        desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE
        desc.location.id = self.device
        desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        self._ok(self.cu.cuMemSetAccess(ptr.value, size, ctypes.byref(desc), 1), "cuMemSetAccess")
        return ptr.value

    def unmap(self, ptr, size, handle):
        self.cu.cuMemUnmap(ptr, size)
        self.cu.cuMemAddressFree(ptr, size)
        self.cu.cuMemRelease(handle)

    # -- the pad ---------------------------------------------------------------------------------
    def pad_kernel(self, ptx=None):
        return Pad(self, ptx if ptx is not None else PAD_PTX.read_bytes())


class Pad:
    """The harness's pad: a kernel that fills every SM's thread slots (two blocks of half an SM's
    threads on each SM) and spins on the GPU's global timer for a given time. Queued on the legacy
    stream before a timed call, it keeps the device busy while the host launches the call, so the
    start event after it fires with the call's work already queued (no launch latency in the time);
    and, holding every thread slot, it leaves no room for a kernel the call launched on another
    stream to run in its shadow (issue 13, class 8): nothing runs before the start event."""

    def __init__(self, drv, ptx):
        self.drv = drv
        module = ctypes.c_void_p()
        drv._ok(drv.cu.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(ptx + b"\0")), "cuModuleLoadData")
        fn = ctypes.c_void_p()
        drv._ok(drv.cu.cuModuleGetFunction(ctypes.byref(fn), module, b"kernelseek_pad"), "cuModuleGetFunction")
        self.fn = fn
        per_sm = drv.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
        max_block = drv.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        self.blocks_per_sm = max(1, -(-per_sm // max_block))
        self.threads = per_sm // self.blocks_per_sm
        self.grid = self.blocks_per_sm * drv.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        self._ns = ctypes.c_uint64(0)
        self._params = (ctypes.c_void_p * 1)(ctypes.addressof(self._ns))

    def launch(self, ms, stream=CU_STREAM_LEGACY):
        self._ns.value = int(ms * 1e6)
        self.drv._ok(self.drv.cu.cuLaunchKernel(self.fn, self.grid, 1, 1, self.threads, 1, 1, 0,
                                                ctypes.c_void_p(stream), self._params, None), "cuLaunchKernel (pad)")
