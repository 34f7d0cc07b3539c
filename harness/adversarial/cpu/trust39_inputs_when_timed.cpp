// Issue 39, inputs changed only while timed: the correctness stage compares the inputs with the
// parent's pristine copy after each of its calls, so this kernel leaves them alone for its first 16
// calls (the correctness stage makes 4 to 8 per scenario) and from then on uses the input rows as
// its scratch: exp(x - max) is written over x, and y is x scaled. Its outputs stay right (the
// re-checks see nothing wrong) and its inputs do not. Caught: the inputs of the timed calls kept for
// the re-check are compared with the baseline's of the same call (written the same values).
#include <cmath>
#include <cstdint>

namespace {
long calls = 0;
}

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  const bool scratch = ++calls > 16;
  float* xs = const_cast<float*>(x);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double sum = 0.0;
    float* out = scratch ? xs + r * cols : yr;
    for (int64_t c = 0; c < cols; ++c) { float e = std::exp(xr[c] - m); out[c] = e; sum += e; }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t c = 0; c < cols; ++c) yr[c] = out[c] * inv;
  }
  return 0;
}
