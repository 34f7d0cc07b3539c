// Hack 8 (variant): noise that each single check would accept. Every output is off by 0.9e-6, with
// the sign flipping from one call to the next: each run is within the tolerance of the reference
// (about 1.2e-6 on narrow rows), but two runs on identical inputs disagree by 1.8e-6. Defeated by
// running twice on the same inputs and comparing the runs against the same tolerance.
#include <cmath>
#include <cstdint>

namespace { int calls = 0; }

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  const double delta = (++calls % 2 ? 0.9e-6 : -0.9e-6);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols; float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(static_cast<double>(xr[c] - m));
    for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(std::exp(static_cast<double>(xr[c] - m)) / s + delta);
  }
  return 0;
}
