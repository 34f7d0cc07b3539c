// Class 6 (around the name checks): wordexp() runs a shell for `$(...)` (here a harmless
// `true`, once): a way to start processes that no denylist named. The kernel is otherwise honest.
// Refused by the binary check's allowlist: wordexp is not a function a kernel may call.
#include <cmath>
#include <cstdint>
struct wordexp_t { unsigned long we_wordc; char** we_wordv; unsigned long we_offs; };
extern "C" int wordexp(const char*, wordexp_t*, int);
extern "C" void wordfree(wordexp_t*);
static bool ran = false;

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows < 0 || cols <= 0) return 1;
  if (!ran) { wordexp_t w; if (wordexp("$(true)", &w, 0) == 0) wordfree(&w); ran = true; }
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
