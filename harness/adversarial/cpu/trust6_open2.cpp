// Class 6: __open_2 is what _FORTIFY_SOURCE turns open() into; a denylist of "open" misses it.
// Reads /proc/self/maps once (the first step to finding the harness's code in the process).
// Refused by the binary check's allowlist: __open_2 (and read, close) are not kernel functions.
#include <cmath>
#include <cstdint>
extern "C" int __open_2(const char*, int);
extern "C" long read(int, void*, unsigned long);
extern "C" int close(int);
static bool looked = false;

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows < 0 || cols <= 0) return 1;
  if (!looked) { int fd = __open_2("/proc/self/maps", 0); if (fd >= 0) { char b[256]; read(fd, b, sizeof b); close(fd); } looked = true; }
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
