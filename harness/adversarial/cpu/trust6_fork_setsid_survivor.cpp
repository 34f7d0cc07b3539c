// Trust class 6 (runtime part): a process that outlives the evaluation. `_Fork` (glibc's fork
// without atfork handlers: no name on a list) plus `setsid` leaves a process in its own session,
// out of reach of a kill of the harness's process group, that lives on after the evaluation (here
// for 5 s, then it exits: a real one would wait and rewrite files, e.g. the compile cache). The
// kernel itself is honest. Caught: clone without CLONE_THREAD kills the executor (seccomp); without
// the filter, the parent finds the executor's child and the orphans re-parented to it -> rejected.
#include <cmath>
#include <cstdint>
#include <unistd.h>

extern "C" pid_t _Fork(void);

namespace {
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

bool forked = false;
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (!forked) {
    forked = true;
    if (_Fork() == 0) {
      setsid();
      sleep(5);
      _exit(0);
    }
  }
  softmax(x, y, rows, cols);
  return 0;
}
