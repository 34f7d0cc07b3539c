// Class 6: __clone starts a thread without pthread_create (and without the pthread family's
// names). Only called when cols == 3333333, which no scenario has; the reference is what counts.
// Refused by the binary check's allowlist: __clone is not a kernel function.
#include <cmath>
#include <cstdint>
extern "C" int __clone(int (*)(void*), void*, int, void*, ...);
static int worker(void*) { return 0; }
static char stack[1 << 16];

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows < 0 || cols <= 0) return 1;
  if (cols == 3333333) __clone(worker, stack + sizeof stack, 0x100 | 0x200 | 0x400 | 0x800 | 0x10000, nullptr);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      float e = std::exp(xr[c] - m);
      yr[c] = e;
      sum += e;
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
  return 0;
}
