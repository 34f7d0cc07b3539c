// Class 10: a poisoned compile-cache entry. This candidate calls dlopen (only when rows == 4444444,
// which no scenario has); before it is evaluated, a previous candidate's process (which could write
// the data dir) has replaced its cache entry's kernel.o with the baseline's honest object. The old
// cache took the symbols for the binary check from meta.json (the poison listed none there) and
// trusted the entry as found. Now the entry no longer matches the harness's index: discarded,
// rebuilt, and the rebuilt object's own symbols are read: refused for dlopen.
#include <cmath>
#include <cstdint>
extern "C" void* dlopen(const char*, int);

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows < 0 || cols <= 0) return 1;
  if (rows == 4444444 && dlopen("libopenblas.so.0", 2)) return 2;
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
