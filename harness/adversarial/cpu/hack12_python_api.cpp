// Hack 12: patch the harness from inside its process. A constructor runs Python code through the
// C API (resolved at load time from the interpreter) to replace the timer. Refused by the binary
// check: Py* symbols are forbidden; and the timer runs in a process the parent only reads from.
#include <cstdint>

extern "C" int PyRun_SimpleString(const char*);

__attribute__((constructor)) static void patch() {
  PyRun_SimpleString("import time; time.perf_counter_ns = lambda: 0");
}

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  (void)x; (void)y; (void)rows; (void)cols;
  return 0;
}
