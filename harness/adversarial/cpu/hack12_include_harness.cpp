// Hack 12: pull more than one file into the build (a file next to the candidate, or the harness's
// own sources, to learn or alter how it measures). Refused by the source check: quoted includes
// are not allowed, the candidate is exactly one file.
#include "../../harness/executor/process.py"
#include <cstdint>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  (void)x; (void)y; (void)rows; (void)cols;
  return 0;
}
