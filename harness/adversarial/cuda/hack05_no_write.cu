// Hack 5: launch nothing, hoping the output buffer still holds an earlier result that the caching
// allocator handed back. Defeated by poisoning outputs with NaN before every call and computing the
// reference in another process.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  (void)x; (void)w; (void)y; (void)rows; (void)cols; (void)eps; (void)stream;
  return 0;
}
