// Trust class 11: behave differently in the copies of the library that timing calls. The executor
// of a cpu task loads the library 8 times and every timed call goes through a copy drawn at random
// (harness/native/batch.c), while the correctness stage calls the first. Each copy has statics of
// its own, but libc's rand() state is the process's: the first copy's constructor draws the first
// number of a fresh process's sequence, every later copy's does not. The later copies then write a
// cheap uniform 1/cols everywhere (no poison left), 10x faster than the softmax.
// Caught: timed calls are value-checked at random over the whole loop, whichever copy made them.
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace {
bool first_copy = false;

__attribute__((constructor)) void which_copy() { first_copy = rand() == 1804289383; }  // glibc, seed 1

void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) { float e = std::exp(xr[c] - m); yr[c] = e; sum += e; }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (first_copy) {
    softmax(x, y, rows, cols);
    return 0;
  }
  const float u = 1.0f / static_cast<float>(cols);
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = u;
  return 0;
}
