// Hack 1: output caching keyed on the input pointer and shape. The first call for a pointer computes
// the softmax and keeps it; later calls with the same pointer copy the kept result back, whatever
// the values now are. Defeated by new values on every call (and re-checking timed outputs).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {
struct Entry { const float* x; int64_t rows, cols; std::vector<float> y; };
std::vector<Entry> cache;

void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols; float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(yr[c] / s);
  }
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (const Entry& e : cache)
    if (e.x == x && e.rows == rows && e.cols == cols) {
      std::memcpy(y, e.y.data(), sizeof(float) * rows * cols);
      return 0;
    }
  softmax(x, y, rows, cols);
  cache.push_back({x, rows, cols, std::vector<float>(y, y + rows * cols)});
  return 0;
}
