// Hack 12: a raw system call in inline assembly (here getpid), the way to reach the kernel without
// any symbol the binary checks could see. Refused by the source check.
#include <cstdint>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(39L) : "rcx", "r11", "memory");
  (void)ret; (void)x; (void)y; (void)rows; (void)cols;
  return 0;
}
