// Hack 12: interpose the clock. Exports clock_gettime so that, were the library loaded globally, the
// harness's timer would read a fake clock. Refused by the binary check on exported C symbols.
#include <cstdint>
#include <ctime>

extern "C" int clock_gettime(clockid_t, struct timespec* ts) {
  ts->tv_sec = 0;
  ts->tv_nsec = 0;
  return 0;
}

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  (void)x; (void)y; (void)rows; (void)cols;
  return 0;
}
