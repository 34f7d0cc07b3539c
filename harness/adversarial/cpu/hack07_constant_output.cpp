// Hack 7: a constant output that is right for degenerate inputs (all values equal in a row) and
// wrong for any other. Defeated by several seeds of non-degenerate inputs.
#include <cstdint>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  (void)x;
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = 1.0f / static_cast<float>(cols);
  return 0;
}
