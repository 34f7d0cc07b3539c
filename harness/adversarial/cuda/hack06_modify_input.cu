// Hack 6: write zeros to the output and zero the inputs, whose RMSNorm is exactly zero, so that a
// reference computed afterwards on the same buffers would agree. Defeated by computing the reference
// on a pristine copy and fingerprinting the inputs after the call.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  (void)eps;
  size_t n = sizeof(__nv_bfloat16) * rows * cols;
  cudaMemsetAsync(y, 0, n, stream);
  cudaMemsetAsync(const_cast<__nv_bfloat16*>(x), 0, n, stream);
  cudaMemsetAsync(const_cast<__nv_bfloat16*>(w), 0, sizeof(__nv_bfloat16) * cols, stream);
  return cudaGetLastError() != cudaSuccess;
}
