// Hack 9: precision downgrade. The sum of squares is accumulated in bf16 instead of fp32, as a
// kernel trading accuracy for packed arithmetic would. Defeated by the tolerance rule.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

namespace {
__global__ void rms_bf16(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t cols, float eps) {
  const __nv_bfloat16* xr = x + (int64_t)blockIdx.x * cols;
  __nv_bfloat16* yr = y + (int64_t)blockIdx.x * cols;
  __shared__ float inv;
  if (threadIdx.x == 0) {
    __nv_bfloat16 ss = __float2bfloat16(0.f);
    for (int64_t c = 0; c < cols; ++c) ss = __hadd(ss, __hmul(xr[c], xr[c]));
    inv = rsqrtf(__bfloat162float(ss) / (float)cols + eps);
  }
  __syncthreads();
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    yr[c] = __float2bfloat16(__bfloat162float(xr[c]) * inv * __bfloat162float(w[c]));
}
}  // namespace

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  rms_bf16<<<(unsigned)rows, 256, 0, stream>>>(x, w, y, cols, eps);
  return cudaGetLastError() != cudaSuccess;
}
