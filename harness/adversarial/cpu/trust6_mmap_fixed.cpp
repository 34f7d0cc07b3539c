// Class 4/6: mmap (MAP_FIXED over the output) and sigaction (a SIGSEGV handler) are the two halves
// of lazy outputs computed when the harness first reads them. Only called when rows == 9999999.
// Refused by the binary check's allowlist: mmap and sigaction are not kernel functions.
#include <cmath>
#include <cstdint>
extern "C" void* mmap(void*, unsigned long, int, int, int, long);
extern "C" int sigaction(int, const void*, void*);

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows < 0 || cols <= 0) return 1;
  if (rows == 9999999) { mmap(y, 4096, 0, 0x22 | 0x10, -1, 0); sigaction(11, nullptr, nullptr); }
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
