// Trust class 5: deferred work on a POSIX timer signal. From the first timed call on, the call
// stores its arguments, arms a 5 us one-shot timer whose SIGALRM handler computes the softmax, and
// returns at once: the handler runs on the same thread moments later, after the harness's clock
// stopped and before it looks at the outputs. No thread is created, so counting threads sees
// nothing. Caught: timers and signal handlers are forbidden in the executor (seccomp); without
// the filter, the parent sees a caught-signal mask and a POSIX timer the executor never had, and
// the executor's CPU time between "done" and the next request.
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>

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

const float* gx;
float* gy;
int64_t grows, gcols;
int calls = 0;
// The executor loads the library 8 times and the correctness trials call only the first copy; the
// others are called by timing alone. libc's rand() state, the process's, tells the first copy (its
// constructor draws a fresh process's first number): only that one spends its first calls honest.
bool first_copy = false;
__attribute__((constructor)) void which_copy() { first_copy = rand() == 1804289383; }  // glibc, seed 1
timer_t timer;
bool armed = false;

void on_alarm(int) { softmax(gx, gy, grows, gcols); }
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (first_copy && ++calls <= 4) { softmax(x, y, rows, cols); return 0; }
  if (!armed) {
    armed = true;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, nullptr);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGALRM;
    timer_create(CLOCK_MONOTONIC, &ev, &timer);
  }
  gx = x; gy = y; grows = rows; gcols = cols;
  struct itimerspec when;
  memset(&when, 0, sizeof when);
  when.it_value.tv_nsec = 5000;
  timer_settime(timer, 0, &when, nullptr);
  return 0;
}
