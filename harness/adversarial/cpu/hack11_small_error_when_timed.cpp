// Hack 11, against the re-check's screen: timed calls (after 6) compute the softmax and then add an
// error a few times the tolerance to one value, close to the baseline's output everywhere else. The
// screen against the baseline's output of the same round must not let it through: a call outside the
// screen's limit is checked against the reference, which refuses it.
#include <cmath>
#include <cstdint>

namespace {
int calls = 0;
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  ++calls;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols; float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(yr[c] / s);
  }
  if (calls > 6) y[0] += 1e-5f;   // the tolerance is about 1e-6 on every scenario
  return 0;
}
