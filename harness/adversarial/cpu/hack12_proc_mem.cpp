// Hack 12: read or write the harness's memory through /proc (its own process, or the parent's).
// Refused by the binary check: file access is forbidden for every candidate.
#include <cstdint>
#include <cstdio>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  FILE* mem = std::fopen("/proc/self/mem", "r+b");
  if (mem) std::fclose(mem);
  (void)x; (void)y; (void)rows; (void)cols;
  return 0;
}
