"""What a candidate's object may reference: an allowlist, because a list of forbidden names is always
one name short (`wordexp` runs a shell, `__open_2` is open, `_Fork` is fork, `__clone` starts a
thread, and libc has hundreds more).

A kernel computes: it needs the maths library, memory and string functions, the allocator, the C++
runtime and the standard library pieces templates generate, a few stdio functions for debugging
prints, synchronisation primitives and (where the task allows threads) thread creation, and for
CUDA the entry points nvcc's generated host code calls plus the runtime API a launch needs (memory,
streams, events, function attributes, errors). Nothing that reaches files, processes, the network,
signals, timers, the environment, dynamic loading or device-wide state is on it.

The denylist families (denylist.py) are still checked first, so a task's `denylist` keeps its
specific reasons ("cudnn is on the task's denylist"); this list decides everything else.
"""

import re

_MATH_NAMES = (
    "acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh erf erfc exp exp2 exp10 expm1 fabs "
    "fdim floor fma fmax fmin fmod frexp hypot ilogb ldexp lgamma llrint llround log log10 log1p log2 logb "
    "lrint lround modf nan nearbyint nextafter nexttoward pow remainder remquo rint round scalbln scalbn sin "
    "sincos sinh sqrt tan tanh tgamma trunc j0 j1 jn y0 y1 yn significand").split()
MATH = re.compile(r"^(__)?(%s)[fl]?(_finite)?$" % "|".join(_MATH_NAMES))
FP_CLASSIFY = re.compile(r"^__(fpclassify|signbit|isnan|isinf|finite|isinff|isnanf|finitef|iseqsig)[fl]?$")

# libgcc's integer, float and conversion helpers (128-bit division, popcount, bf16/fp16 conversions).
LIBGCC = re.compile(r"^__(u?(div|mod)|mul|popcount|clz|ctz|ffs|parity|bswap|ashl|ashr|lshr|neg|cmp|ucmp|"
                    r"float(un)?|fix(uns)?|extend|trunc|powi|gnu_[hf]2[hf]_ieee)\w*$")

C_NAMES = set("""
memcpy memmove memset memcmp memchr strlen strnlen strcmp strncmp strchr strrchr strcpy strncpy strcat strstr
__memcpy_chk __memmove_chk __memset_chk __strcpy_chk __strncpy_chk __stack_chk_fail __stack_chk_guard
malloc calloc realloc free aligned_alloc posix_memalign memalign
abs labs llabs div ldiv lldiv qsort bsearch rand rand_r srand
printf fprintf sprintf snprintf vprintf vfprintf vsnprintf puts fputs fputc putchar fwrite fflush
__printf_chk __fprintf_chk __sprintf_chk __snprintf_chk __vsnprintf_chk __vfprintf_chk stdout stderr
abort exit __assert_fail __errno_location __tls_get_addr _GLOBAL_OFFSET_TABLE_ __dso_handle atexit
__cxa_atexit __cxa_finalize __cxa_thread_atexit __cxa_thread_atexit_impl __cxa_guard_acquire
__cxa_guard_release __cxa_guard_abort __cxa_pure_virtual __cxa_deleted_virtual __cxa_begin_catch
__cxa_end_catch __cxa_rethrow __cxa_throw __cxa_allocate_exception __cxa_free_exception
__cxa_call_terminate __cxa_get_exception_ptr __cxa_bad_cast __cxa_bad_typeid __gxx_personality_v0
_Unwind_Resume __cpu_model __cpu_indicator_init __cpu_features2
pthread_mutex_lock pthread_mutex_unlock pthread_mutex_trylock pthread_mutex_init pthread_mutex_destroy
pthread_once pthread_key_create pthread_key_delete pthread_getspecific pthread_setspecific pthread_self
pthread_cond_wait pthread_cond_signal pthread_cond_broadcast pthread_cond_init pthread_cond_destroy
pthread_create pthread_join pthread_detach sched_yield nanosleep usleep
""".split())

# C++: the standard library (std::, its ostream/istream/string abbreviations), libstdc++'s
# __gnu_cxx, the ABI's type_info classes, operator new/delete, glibc's vector maths.
CXX = re.compile(r"^_Z((T[IVS])?N?K?(St|S[oisdab]|9__gnu_cxx|10__cxxabiv1)|(nw|na|dl|da)[a-zA-Z0-9_]*$|"
                 r"GV[bcde][NM]\d+[vlu]+_)")
# Parts of std:: that reach the file system or start processes.
CXX_REFUSED = re.compile(r"^_Z(N|NK|T[IVS]N)(St10filesystem|St7__cxx1110filesystem|St3__110filesystem)")

CUDA_HOST_STUBS = set("""
__cudaRegisterFatBinary __cudaRegisterFatBinaryEnd __cudaUnregisterFatBinary __cudaRegisterFunction
__cudaRegisterVar __cudaRegisterManagedVar __cudaRegisterTexture __cudaRegisterSurface __cudaInitModule
__cudaPushCallConfiguration __cudaPopCallConfiguration
""".split())
# nvcc's generated host code: registration, launch configuration, and CUDA 13's __cudaGetKernel /
# __cudaLaunchKernel (older toolkits call cudaLaunchKernel); -rdc=true adds __cudaRegisterLinkedBinary_*.
CUDA_GENERATED = re.compile(r"^__cuda(Register|Unregister|PushCallConfiguration|PopCallConfiguration|GetKernel|"
                            r"LaunchKernel|InitModule)\w*$")
# Streams: cudaStreamCreate only. Its streams wait for the legacy stream, where the harness's pad
# and timing events are, and the legacy stream waits for them; a non-blocking stream
# (cudaStreamCreateWithFlags / WithPriority) would run outside the timed window (issue 13, class 8).
_CUDA_RUNTIME = """
LaunchKernel LaunchKernelExC LaunchCooperativeKernel
GetLastError PeekAtLastError GetErrorString GetErrorName
GetDevice GetDeviceCount GetDeviceProperties GetDeviceProperties_v2 DeviceGetAttribute DriverGetVersion
RuntimeGetVersion PointerGetAttributes MemGetInfo DeviceGetStreamPriorityRange
FuncSetAttribute FuncGetAttributes FuncSetCacheConfig FuncSetSharedMemConfig
Malloc Free MallocAsync FreeAsync MallocHost FreeHost MallocPitch Memset MemsetAsync Memset2DAsync Memcpy
MemcpyAsync Memcpy2DAsync MemcpyToSymbol MemcpyToSymbolAsync MemcpyFromSymbol MemcpyFromSymbolAsync
GetSymbolAddress GetSymbolSize
StreamCreate StreamDestroy StreamSynchronize StreamWaitEvent
StreamQuery StreamGetPriority StreamGetFlags EventCreate EventCreateWithFlags EventRecord EventRecordWithFlags
EventSynchronize EventQuery EventDestroy EventElapsedTime DeviceSynchronize
""".split()
# _ptsz / _ptds: the same functions under --default-stream per-thread.
CUDA_RUNTIME = {f"cuda{n}{s}" for n in _CUDA_RUNTIME for s in ("", "_ptsz", "_ptds")}
CUDA_OCCUPANCY = re.compile(r"^cudaOccupancy\w+$")


CXX_ABI = re.compile(r"^__cxa_\w+$")   # the C++ ABI's runtime: exceptions, guards, atexit, demangling


def allowed(symbol, language):
    """True when a kernel in `language` ("cpp" | "cuda") may reference `symbol` (undefined in its object)."""
    if symbol in C_NAMES or CXX_ABI.match(symbol) or MATH.match(symbol) or FP_CLASSIFY.match(symbol) or LIBGCC.match(symbol):
        return True
    if symbol.startswith("_Z"):
        return bool(CXX.match(symbol)) and not CXX_REFUSED.match(symbol)
    if language == "cuda":
        return (symbol in CUDA_HOST_STUBS or symbol in CUDA_RUNTIME or bool(CUDA_GENERATED.match(symbol))
                or bool(CUDA_OCCUPANCY.match(symbol)))
    return False


def why_not(language):
    what = "maths, memory and string functions, the allocator, the C++ runtime and standard library"
    if language == "cuda":
        what += ", the CUDA runtime's launch, memory, stream, event and error functions"
    return (f"the allowlist holds what a kernel may call: {what}; a kernel computes its result itself "
            f"and reaches no files, processes, network, signals, timers, environment or loader")
