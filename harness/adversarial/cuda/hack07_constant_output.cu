// Hack 7: an output that is right for degenerate inputs only: y = w, the exact RMSNorm of rows whose
// elements all equal the same positive value. Defeated by several seeds of non-degenerate inputs.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

namespace {
__global__ void copy_w(const __nv_bfloat16* w, __nv_bfloat16* y, int64_t cols) {
  __nv_bfloat16* yr = y + (int64_t)blockIdx.x * cols;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = w[c];
}
}  // namespace

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  (void)x; (void)eps;
  copy_w<<<(unsigned)rows, 256, 0, stream>>>(w, y, cols);
  return cudaGetLastError() != cudaSuccess;
}
