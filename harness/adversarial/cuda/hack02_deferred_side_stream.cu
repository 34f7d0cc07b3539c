// Hack 2: return while another stream still writes. The kernel runs on the candidate's own
// non-blocking stream after a short spin, and nothing links it to the harness's stream, so the end
// event completes at once. Defeated by fingerprinting the output at return and again after a device
// synchronisation, and by comparing host wall time with event time.
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

__global__ void spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}

cudaStream_t side = nullptr;
}  // namespace

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  (void)stream;
  if (!side && cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) return 1;
  spin<<<1, 1, 0, side>>>(2000000);  // about 1 ms: the harness's fingerprint at return sees poison
  rms<<<(unsigned)rows, 256, 0, side>>>(x, w, y, cols, eps);
  return cudaGetLastError() != cudaSuccess;
}
