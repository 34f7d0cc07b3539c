// Hack 8: approximately right, not right: a cheap exp approximation (a few terms of a series after
// range reduction, about 1e-3 relative error) that a loose absolute tolerance such as 1e-2 would
// accept. Defeated by a tolerance tied to the error of PyTorch's own float32 result.
#include <cmath>
#include <cstdint>

namespace {
float rough_exp(float v) {          // exp(v) for v <= 0, about 1e-3 relative error
  if (v < -80.0f) return 0.0f;
  int k = static_cast<int>(std::floor(v * 1.44269504f));
  float f = v - k * 0.69314718f;    // f in [0, ln 2)
  float p = 1.0f + f * (1.0f + f * (0.5f + f * (0.16666667f + f * 0.0416666f)));
  return std::ldexp(p, k);
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols; float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    float s = 0;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = rough_exp(xr[c] - m); s += yr[c]; }
    for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
  }
  return 0;
}
