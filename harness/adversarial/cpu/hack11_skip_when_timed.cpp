// Hack 11 (variant): after a few calls, stop writing the output at all (timing only looks at the
// clock). Defeated by poisoning outputs before every timed call and checking none is left.
#include <cmath>
#include <cstdint>

namespace { int calls = 0; }

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (++calls > 6) return 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols; float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(yr[c] / s);
  }
  return 0;
}
