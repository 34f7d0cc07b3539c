// CPU stand-in of the rmsnorm entry point (bf16 as uint16_t), to exercise check.py without a GPU.
#include "bf16.h"
extern "C" int rmsnorm_fwd(const uint16_t* x, const uint16_t* w, uint16_t* y, int64_t rows, int64_t cols, float eps, void*) {
  for (int64_t r = 0; r < rows; ++r) {
    float ss = 0; for (int64_t c = 0; c < cols; ++c) { float v = bf2f(x[r*cols+c]); ss += v*v; }
    float inv = 1.f / std::sqrt(ss / cols + eps);
    for (int64_t c = 0; c < cols; ++c) y[r*cols+c] = f2bf(bf2f(x[r*cols+c]) * inv * bf2f(w[c]));
  }
  return 0;
}
