// Hack 5: write nothing, hoping the output buffer still holds a previous result (an allocator that
// hands back the memory where the reference or an earlier call left the right answer). Defeated by
// poisoning every output with NaN before each call and computing the reference in another process.
#include <cstdint>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  (void)x; (void)y; (void)rows; (void)cols;
  return 0;
}
