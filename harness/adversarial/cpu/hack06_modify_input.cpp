// Hack 6: make the inputs agree with a cheap output. Writes the uniform distribution and sets every
// input to zero, whose softmax is exactly that uniform distribution. Defeated by computing the
// reference on a pristine copy, and by fingerprinting the inputs after the call.
#include <cstdint>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  float* writable = const_cast<float*>(x);
  for (int64_t i = 0; i < rows * cols; ++i) {
    writable[i] = 0.0f;
    y[i] = 1.0f / static_cast<float>(cols);
  }
  return 0;
}
