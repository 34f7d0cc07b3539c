// Class 10: a poisoned baseline. This candidate is the baseline's own code; before it is evaluated,
// a previous candidate's process has replaced the baseline's compile-cache entry (kernel.so) with a
// deliberately slow build, so that this copy would look several times faster than "the baseline".
// The old harness built the baseline through the same cache and trusted the entry. Now the baseline
// has its own namespace and every entry is checked against the index: discarded and rebuilt.
#include <cmath>
#include <cstdint>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows < 0 || cols <= 0) return 1;
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
