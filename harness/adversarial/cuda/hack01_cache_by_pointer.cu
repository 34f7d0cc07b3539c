// Hack 1: output caching keyed on the input pointer and shape. The first call for a pointer computes
// and keeps a device copy of the output; later calls with that pointer copy it back (one memcpy
// instead of the kernel). Defeated by new values on every call and the re-check of timed outputs.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

namespace {
__global__ void rms(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t cols, float eps) {
  const __nv_bfloat16* xr = x + (int64_t)blockIdx.x * cols;
  __nv_bfloat16* yr = y + (int64_t)blockIdx.x * cols;
  float ss = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) { float v = __bfloat162float(xr[c]); ss += v * v; }
  for (int o = 16; o > 0; o /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  __shared__ float part[32];
  __shared__ float inv;
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int i = 0; i < (int)blockDim.x / 32; ++i) t += part[i];
    inv = rsqrtf(t / (float)cols + eps);
  }
  __syncthreads();
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    yr[c] = __float2bfloat16(__bfloat162float(xr[c]) * inv * __bfloat162float(w[c]));
}

struct Entry { const void* x; int64_t rows, cols; void* copy; };
Entry cache[64];
int used = 0;
}  // namespace

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  size_t bytes = sizeof(__nv_bfloat16) * rows * cols;
  for (int i = 0; i < used; ++i)
    if (cache[i].x == x && cache[i].rows == rows && cache[i].cols == cols)
      return cudaMemcpyAsync(y, cache[i].copy, bytes, cudaMemcpyDeviceToDevice, stream) != cudaSuccess;
  rms<<<(unsigned)rows, 256, 0, stream>>>(x, w, y, cols, eps);
  if (used < 64) {
    void* copy = nullptr;
    if (cudaMalloc(&copy, bytes) != cudaSuccess) return 1;
    cudaMemcpyAsync(copy, y, bytes, cudaMemcpyDeviceToDevice, stream);
    cache[used++] = {x, rows, cols, copy};
  }
  return cudaGetLastError() != cudaSuccess;
}
