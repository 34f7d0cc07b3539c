// Hack 10: fall back to a BLAS library (here for the final scaling). Refused by the source check:
// <cblas.h> belongs to the task's `blas`/`openblas` denylist families.
#include <cblas.h>
#include <cmath>
#include <cstdint>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols; float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    float s = 0;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    cblas_sscal(static_cast<int>(cols), 1.0f / s, yr, 1);
  }
  return 0;
}
