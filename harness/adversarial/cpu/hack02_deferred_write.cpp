// Hack 2 (CPU form): return at once and let a background thread write the output shortly after,
// so the timer sees almost nothing. Threads are started through timer_create(SIGEV_THREAD), which
// names no thread function the binary checks would recognise. Defeated by fingerprinting the
// output at return and again a moment later, and by counting threads.
#include <cmath>
#include <csignal>
#include <cstdint>
#include <ctime>

namespace {
struct Job { const float* x; float* y; int64_t rows, cols; } job;

void run(union sigval) {
  for (int64_t r = 0; r < job.rows; ++r) {
    const float* xr = job.x + r * job.cols; float* yr = job.y + r * job.cols;
    float m = xr[0];
    for (int64_t c = 1; c < job.cols; ++c) m = std::fmax(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < job.cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    for (int64_t c = 0; c < job.cols; ++c) yr[c] = static_cast<float>(yr[c] / s);
  }
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  job = {x, y, rows, cols};
  struct sigevent ev = {};
  ev.sigev_notify = SIGEV_THREAD;
  ev.sigev_notify_function = run;
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) return 1;
  struct itimerspec when = {};
  when.it_value.tv_nsec = 300 * 1000;  // 0.3 ms after returning
  timer_settime(timer, 0, &when, nullptr);
  return 0;
}
