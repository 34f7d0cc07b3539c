// Hack 9: precision downgrade. Computes the softmax with values rounded to bfloat16 (8 bits of
// mantissa), as a kernel using half the memory traffic would. Defeated by the tolerance rule: the
// error must stay within 2x that of PyTorch's float32 result.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace {
float to_bf16(float v) {
  uint32_t u; std::memcpy(&u, &v, 4);
  u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000u;
  std::memcpy(&v, &u, 4);
  return v;
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols; float* yr = y + r * cols;
    float m = to_bf16(xr[0]);
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, to_bf16(xr[c]));
    float s = 0;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = to_bf16(std::exp(to_bf16(xr[c]) - m)); s += yr[c]; }
    for (int64_t c = 0; c < cols; ++c) yr[c] = to_bf16(yr[c] / s);
  }
  return 0;
}
