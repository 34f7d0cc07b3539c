"""Device-wide state a CUDA candidate could leave behind for later calls, reset and checked after
every call (issue 13, class 9): the persisting-L2 set-aside (cudaLimitPersistingL2CacheSize) and the
stream's access-policy window. Left set, they let one call pin its data in L2 for the next, or
shrink the L2 the baseline gets. Read through the driver API (libcuda), which every CUDA runtime in
the process shares: the candidate's statically linked runtime sets them on the same context.
"""

import ctypes

CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1
_VALUE_BYTES = 64          # sizeof(CUlaunchAttributeValue)


class DeviceState:
    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")
        for name in ("cuCtxGetLimit", "cuCtxSetLimit", "cuCtxResetPersistingL2Cache", "cuStreamGetAttribute",
                     "cuStreamSetAttribute"):
            getattr(self.cu, name).restype = ctypes.c_int
        # Not 0 everywhere: on the H200 host the context starts with 11796480 bytes set aside.
        limit = ctypes.c_size_t()
        self._ok(self.cu.cuCtxGetLimit(ctypes.byref(limit), CU_LIMIT_PERSISTING_L2_CACHE_SIZE), "cuCtxGetLimit")
        self.default_limit = limit.value

    def _ok(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} failed with CUDA driver error {rc}")

    def check_and_reset(self, stream):
        """Findings (empty when nothing was left set), after putting everything back to defaults."""
        cu, found = self.cu, []
        limit = ctypes.c_size_t()
        self._ok(cu.cuCtxGetLimit(ctypes.byref(limit), CU_LIMIT_PERSISTING_L2_CACHE_SIZE), "cuCtxGetLimit")
        if limit.value != self.default_limit:
            found.append(f"the call set aside {limit.value} bytes of persisting L2 (cudaLimitPersistingL2CacheSize; "
                         f"the context started with {self.default_limit}) and left it set: device-wide state that "
                         f"changes later calls (issue 13, class 9)")
        value = (ctypes.c_ubyte * _VALUE_BYTES)()
        stream_ptr = ctypes.c_void_p(stream)
        self._ok(cu.cuStreamGetAttribute(stream_ptr, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, value),
                 "cuStreamGetAttribute")
        num_bytes = int.from_bytes(bytes(value[8:16]), "little")
        if num_bytes:
            found.append(f"the call left an access-policy window of {num_bytes} bytes on the stream it was given "
                         f"(persisting L2 for later calls, issue 13, class 9)")
        if found:
            self._ok(cu.cuStreamSetAttribute(stream_ptr, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                                             (ctypes.c_ubyte * _VALUE_BYTES)()), "cuStreamSetAttribute")
            self._ok(cu.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(self.default_limit)),
                     "cuCtxSetLimit")
        self._ok(cu.cuCtxResetPersistingL2Cache(), "cuCtxResetPersistingL2Cache")
        return found
