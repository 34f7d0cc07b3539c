// Hack 8 (variant): right everywhere except one Inf per call, which a check based only on the mean
// error, or one that skips non-finite values, would let through. NaN/Inf never pass.
#include <cmath>
#include <cstdint>
#include <limits>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols; float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(yr[c] / s);
  }
  y[rows * cols / 2] = std::numeric_limits<float>::infinity();
  return 0;
}
