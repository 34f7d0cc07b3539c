// Class 6: _Fork (glibc 2.34+) and setsid: a process in a session of its own outlives the
// evaluation (this one exits at once, and only when rows == 7777777, which no scenario has).
// Refused by the binary check's allowlist: _Fork and setsid are not kernel functions.
#include <cmath>
#include <cstdint>
extern "C" int _Fork(void);
extern "C" int setsid(void);
extern "C" void _exit(int);

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows < 0 || cols <= 0) return 1;
  if (rows == 7777777) { if (_Fork() == 0) { setsid(); _exit(0); } }
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
