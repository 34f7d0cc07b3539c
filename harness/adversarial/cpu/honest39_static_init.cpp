// Issue 39, honest counter-example for "no window before the filter": a static initializer (run by
// the dynamic linker as the library loads, now under the filter's first step) allocates and fills a
// table of 1/n for the row widths it will meet, through the C++ runtime (operator new: anonymous
// read-write memory, which the filter allows); every call reads it. Must pass: code run at load time
// that stays inside the rules is not refused, and the parent's look at the process after the load
// finds nothing (no writable-and-executable or anonymous executable memory, no descriptor).
#include <cmath>
#include <cstdint>
#include <vector>

namespace {
struct Reciprocals {
  std::vector<double> inv;
  Reciprocals() : inv(8193) {
    for (size_t n = 1; n < inv.size(); ++n) inv[n] = 1.0 / static_cast<double>(n);
  }
};
const Reciprocals table;   // built before the first call, while the library loads
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows < 0 || cols <= 0) return 1;
  const double mean_scale = cols < static_cast<int64_t>(table.inv.size()) ? table.inv[cols] : 1.0 / cols;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) { float e = std::exp(xr[c] - m); yr[c] = e; sum += e; }
    // sum * (1/cols) * cols: the table's value is used, and the result is the plain 1/sum
    const float inv = static_cast<float>(1.0 / (sum * mean_scale * static_cast<double>(cols)));
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
  return 0;
}
