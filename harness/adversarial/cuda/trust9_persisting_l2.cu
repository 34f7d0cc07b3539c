// Trust class 9: device-wide state left behind. On its first call the kernel sets aside the
// largest persisting-L2 region the GPU allows (cudaLimitPersistingL2CacheSize) and puts an
// access-policy window over its input rows on the stream it is given, then computes honestly; both
// stay set, so later calls (its own, and the baseline's, which gets a smaller L2) run with them.
// Caught: after every call the harness reads the limit and the stream's window through the driver,
// resets them and rejects a call that left them set.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    rmsnorm_kernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                   __nv_bfloat16* __restrict__ y, int64_t cols, float eps) {
  const __nv_bfloat16* xr = x + (int64_t)blockIdx.x * cols;
  __nv_bfloat16* yr = y + (int64_t)blockIdx.x * cols;

  float ss = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    float v = __bfloat162float(xr[c]);
    ss += v * v;
  }
  for (int off = 16; off > 0; off /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, off);

  __shared__ float partial[kThreads / 32];
  __shared__ float inv_rms;
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.f;
    for (int i = 0; i < kThreads / 32; ++i) total += partial[i];
    inv_rms = rsqrtf(total / (float)cols + eps);
  }
  __syncthreads();

  const float r = inv_rms;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads)
    yr[c] = __float2bfloat16(__bfloat162float(xr[c]) * r * __bfloat162float(w[c]));
}

}  // namespace

static bool pinned = false;

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  if (!x || !w || !y) return 1;
  if (rows <= 0 || cols <= 0) return 2;
  if (rows > 0x7fffffff) return 3;
  if (!pinned) {
    pinned = true;
    int dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, dev);
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, prop.persistingL2CacheMaxSize);
    cudaStreamAttrValue attr = {};
    attr.accessPolicyWindow.base_ptr = const_cast<__nv_bfloat16*>(x);
    size_t bytes = (size_t)rows * cols * sizeof(__nv_bfloat16);
    attr.accessPolicyWindow.num_bytes = bytes < (size_t)prop.accessPolicyMaxWindowSize ? bytes
                                                                                       : prop.accessPolicyMaxWindowSize;
    attr.accessPolicyWindow.hitRatio = 1.0f;
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr);
  }
  rmsnorm_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(x, w, y, cols, eps);
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
