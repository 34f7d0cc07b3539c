// Issue 39, honest counter-example for the calibration and the bound: an honestly faster softmax
// (the maximum by comparisons the compiler vectorises instead of std::fmax, 8 float partial sums
// added in double; the same float exp), with a path chosen by the row's width, not by the phase.
// Must pass, and its speedup must stand: the null calibration taken from the twins and the lean
// calls' bound leave a kernel that is really faster as fast as it is.
#include <cmath>
#include <cstdint>

namespace {
float row_max(const float* xr, int64_t cols) {
  float m = xr[0];
  for (int64_t c = 1; c < cols; ++c) m = xr[c] > m ? xr[c] : m;
  return m;
}

void wide_row(const float* xr, float* yr, int64_t cols) {
  const float m = row_max(xr, cols);
  float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t c = 0;
  for (; c + 8 <= cols; c += 8)
    for (int k = 0; k < 8; ++k) { float e = std::exp(xr[c + k] - m); yr[c + k] = e; part[k] += e; }
  double sum = 0.0;
  for (int k = 0; k < 8; ++k) sum += part[k];
  for (; c < cols; ++c) { float e = std::exp(xr[c] - m); yr[c] = e; sum += e; }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < cols; ++i) yr[i] *= inv;
}

void narrow_row(const float* xr, float* yr, int64_t cols) {
  const float m = row_max(xr, cols);
  double sum = 0.0;
  for (int64_t c = 0; c < cols; ++c) { float e = std::exp(xr[c] - m); yr[c] = e; sum += e; }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows < 0 || cols <= 0) return 1;
  for (int64_t r = 0; r < rows; ++r) {
    if (cols >= 64) wide_row(x + r * cols, y + r * cols, cols);
    else narrow_row(x + r * cols, y + r * cols, cols);
  }
  return 0;
}
