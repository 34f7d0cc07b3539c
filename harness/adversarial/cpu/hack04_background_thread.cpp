// Hack 4: a background CPU thread that outlives the call (here started through timer_create with
// SIGEV_THREAD, so no pthread_create appears in the binary). It would finish the work long after the
// timer stopped. Defeated by counting the threads the candidate leaves running.
#include <csignal>
#include <cstdint>
#include <ctime>

namespace {
void later(union sigval) {}
timer_t timer;
bool armed = false;
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (!armed) {
    struct sigevent ev = {};
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = later;
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) return 1;
    armed = true;
  }
  struct itimerspec when = {};
  when.it_value.tv_sec = 5;  // the helper thread stays alive meanwhile
  timer_settime(timer, 0, &when, nullptr);
  (void)x; (void)y; (void)rows; (void)cols;
  return 0;
}
