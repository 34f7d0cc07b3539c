// Hack 4 / task rule: start a worker with pthread_create declared by hand (no header to spot).
// Refused by the binary check on the object's undefined symbols.
#include <cmath>
#include <cstdint>

extern "C" int pthread_create(unsigned long*, const void*, void* (*)(void*), void*);
extern "C" int pthread_join(unsigned long, void**);

namespace {
struct Job { const float* x; float* y; int64_t r0, r1, cols; };
void* work(void* p) {
  Job* j = static_cast<Job*>(p);
  for (int64_t r = j->r0; r < j->r1; ++r) {
    const float* xr = j->x + r * j->cols; float* yr = j->y + r * j->cols;
    float m = xr[0];
    for (int64_t c = 1; c < j->cols; ++c) m = std::fmax(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < j->cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    for (int64_t c = 0; c < j->cols; ++c) yr[c] = static_cast<float>(yr[c] / s);
  }
  return nullptr;
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  Job a{x, y, 0, rows / 2, cols}, b{x, y, rows / 2, rows, cols};
  unsigned long t;
  pthread_create(&t, nullptr, work, &a);
  work(&b);
  pthread_join(t, nullptr);
  return 0;
}
