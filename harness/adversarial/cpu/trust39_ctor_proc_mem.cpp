// Issue 39, no window before the filter: a constructor (run by the dynamic linker while the executor
// loads the library) opens /proc/self/mem read-write with a raw system call written as bytes (no
// name a source or binary check can see) and keeps the descriptor. Where the filter came only after
// the load, the descriptor outlived it: /proc/self/mem writes ignore page protections, so any code
// or GOT slot of the process could be rewritten from the first timed call on, with nothing off the
// allowlist. The kernel is honest softmax; the gain would be whatever the descriptor is later used
// for (trust6_raw_syscall_proc_mem patches a clock through one). Caught: the library is loaded under
// the filter's first step, so the open itself is refused, and named (open, number 2). With the
// filter off the parent's look at the process after the load names the descriptor instead.
#include <cmath>
#include <cstdint>

namespace {
long raw3(long nr, long a, long b, long c) {
  long ret;
  asm volatile(".byte 0x0f, 0x05" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}
long kept = -1;
__attribute__((constructor)) void before_the_filter() {
  kept = raw3(2 /* open */, reinterpret_cast<long>("/proc/self/mem"), 2 /* O_RDWR */, 0);
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) { float e = std::exp(xr[c] - m); yr[c] = e; sum += e; }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
  return kept < -1 ? 1 : 0;
}
