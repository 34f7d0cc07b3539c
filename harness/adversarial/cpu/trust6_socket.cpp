// Class 6, a name no denylist had: socket + connect (to Redis on 6379, where the job queue lives;
// a candidate could enqueue or rewrite jobs). Only called when rows == 5555555 (no scenario has it).
// Refused by the binary check's allowlist: socket and connect are not kernel functions.
#include <cmath>
#include <cstdint>
extern "C" int socket(int, int, int);
extern "C" int connect(int, const void*, unsigned);

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows < 0 || cols <= 0) return 1;
  if (rows == 5555555) {
    int s = socket(2, 1, 0);
    unsigned char addr[16] = {2, 0, 0x18, 0xEB, 127, 0, 0, 1};
    connect(s, addr, 16);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      float e = std::exp(xr[c] - m);
      yr[c] = e;
      sum += e;
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
  return 0;
}
