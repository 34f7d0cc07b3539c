// Issue 39, class (c): behave only while checked. The kernel tells a timed call from a correctness call by
// the call pattern (a timed call finds the harness's pad still running on the legacy stream:
// cudaStreamQuery(0) is not ready) and a bound request by its caller (the return address is not the
// one its first call, a correctness call, came from); there it normalises the first half of the rows
// and copies x into the rest (half the reads, no reduction, every output written). Nothing off the
// allowlist. Caught: the outputs of timed calls drawn over the whole loop from a secret seed are
// checked against the baseline's and the reference (4 to 32 calls, every call for poison), and each
// bound request's outputs at positions drawn after it answered.
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

namespace {
__global__ void copy_rows(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int64_t cols) {
  const int64_t row = blockIdx.x;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) y[row * cols + c] = x[row * cols + c];
}
}  // namespace

static void* first_caller = nullptr;

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  if (!x || !w || !y) return 1;
  if (rows <= 0 || cols <= 0) return 2;
  if (rows > 0x7fffffff) return 3;
  void* caller = __builtin_return_address(0);
  if (!first_caller) first_caller = caller;
  bool checked_only = cudaStreamQuery(0) == cudaSuccess && caller == first_caller;
  cudaGetLastError();
  if (!checked_only && rows >= 2) {
    int64_t half = rows / 2;
    rmsnorm_kernel<<<(unsigned)half, kThreads, 0, stream>>>(x, w, y, cols, eps);
    copy_rows<<<(unsigned)(rows - half), kThreads, 0, stream>>>(x + half * cols, y + half * cols, cols);
    return cudaGetLastError() == cudaSuccess ? 0 : 4;
  }
  rmsnorm_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(x, w, y, cols, eps);
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
