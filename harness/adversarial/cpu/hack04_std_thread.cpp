// Hack 4 / task rule: split rows over std::thread workers on a single-threaded task. Refused by the
// source check (<thread> belongs to the task's `pthread` denylist family).
#include <cmath>
#include <cstdint>
#include <thread>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  auto work = [=](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * cols; float* yr = y + r * cols;
      float m = xr[0];
      for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
      double s = 0;
      for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
      for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(yr[c] / s);
    }
  };
  std::thread t(work, 0, rows / 2);
  work(rows / 2, rows);
  t.join();
  return 0;
}
