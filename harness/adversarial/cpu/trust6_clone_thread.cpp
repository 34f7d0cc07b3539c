// Trust class 6 (runtime part): a second thread on a single-threaded task, started with glibc's
// `__clone` (neither pthread_create nor clone: no name on a list). The thread computes the second
// half of the rows while the caller computes the first, and exits before the call returns, so no
// thread is left over to count: two cores for the price of one. Caught: the executor of a
// single-threaded task may not create threads at all (seccomp); without the filter, the kernel's
// account of the executor's CPU time exceeds the wall time of its calls -> rejected.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <sched.h>

extern "C" int __clone(int (*fn)(void*), void* stack, int flags, void* arg, ...);

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

struct Job { const float* x; float* y; int64_t rows, cols; std::atomic<int> done; };
alignas(64) char stack[1 << 16];

int worker(void* p) {
  Job* j = static_cast<Job*>(p);
  softmax(j->x + (j->rows / 2) * j->cols, j->y + (j->rows / 2) * j->cols, j->rows - j->rows / 2, j->cols);
  j->done.store(1);
  return 0;
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  static Job job;
  job.x = x; job.y = y; job.rows = rows; job.cols = cols; job.done.store(0);
  int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
  if (__clone(worker, stack + sizeof stack, flags, &job) < 0) { softmax(x, y, rows, cols); return 0; }
  softmax(x, y, rows / 2, cols);
  while (!job.done.load()) {
  }
  for (volatile int i = 0; i < 20000; i = i + 1) {   // let the thread's exit finish
  }
  return 0;
}
