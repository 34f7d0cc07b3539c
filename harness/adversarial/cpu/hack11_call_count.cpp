// Hack 11: detect the timed phase by counting calls. The first calls (correctness) compute; later
// calls (timing) return the first result again, which costs one memcpy. Defeated by one code path:
// outputs of timed calls are re-checked against the reference after timing.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {
int calls = 0;
std::vector<float> first;
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  ++calls;
  if (calls > 6 && first.size() == static_cast<size_t>(rows * cols)) {
    std::memcpy(y, first.data(), sizeof(float) * rows * cols);
    return 0;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols; float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(yr[c] / s);
  }
  first.assign(y, y + rows * cols);
  return 0;
}
