// Hack 13: an implausible speedup. This file is an honest softmax; the manifest evaluates it against
// a copy of the task whose roofline ceiling is set absurdly low, so every scenario is "faster than
// the hardware allows" and must be flagged implausible, never counted as a win. (On real hardware the
// same flag catches a cheat that slipped past every other check.)
#include <cmath>
#include <cstdint>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols; float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    const float inv = static_cast<float>(1.0 / s);
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
  return 0;
}
