// Issue 39, no window before the filter: a constructor maps anonymous memory writable AND executable
// (mmap with PROT_READ|PROT_WRITE|PROT_EXEC, a raw system call written as bytes) and keeps it: code
// written there at any later call runs, code no check ever saw (where the filter came only after the
// load, nothing refused it). The kernel is honest softmax, and its first call writes a `ret` into the
// region and calls it, to show the region is live. Caught: the mapping is refused by the filter's
// first step, which the library loads under (named: mmap, number 9, writable and executable). With
// the filter off the parent's look at the process after the load names the region.
#include <cmath>
#include <cstdint>

namespace {
long raw6(long nr, long a, long b, long c, long d, long e, long f) {
  long ret;
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  register long r9 asm("r9") = f;
  asm volatile(".byte 0x0f, 0x05" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return ret;
}
unsigned char* region = nullptr;
__attribute__((constructor)) void before_the_filter() {
  long p = raw6(9 /* mmap */, 0, 4096, 7 /* PROT_READ|PROT_WRITE|PROT_EXEC */, 0x22 /* MAP_PRIVATE|MAP_ANONYMOUS */,
                -1, 0);
  if (p > 0) region = reinterpret_cast<unsigned char*>(p);
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (region) {
    region[0] = 0xC3;   // ret
    reinterpret_cast<void (*)()>(region)();
  }
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
  return 0;
}
