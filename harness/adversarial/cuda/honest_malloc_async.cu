// Honest (issue 39): a workspace from the stream-ordered allocator on the stream it is given. Each call takes
// rows floats with cudaMallocAsync, one kernel computes every row's 1/rms into it and normalises with
// it, and cudaFreeAsync gives it back on the same stream: nothing outlives the call, nothing off the
// given stream. It was killed by the executor's seccomp filter (SIGSYS, issue 39); each native executor
// now sets the allocator's pool up before its filter (harness/executor/process.py, cmd_cuda), and
// tools/lab/alloc_syscalls.py names the calls the allocator makes under the filter. Must pass: ok.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    rmsnorm_ws(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
               __nv_bfloat16* __restrict__ y, float* __restrict__ ws, int64_t cols, float eps) {
  const __nv_bfloat16* xr = x + (int64_t)blockIdx.x * cols;
  __nv_bfloat16* yr = y + (int64_t)blockIdx.x * cols;
  float ss = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    float v = __bfloat162float(xr[c]);
    ss += v * v;
  }
  for (int off = 16; off > 0; off /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, off);
  __shared__ float partial[kThreads / 32];
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.f;
    for (int i = 0; i < kThreads / 32; ++i) total += partial[i];
    ws[blockIdx.x] = rsqrtf(total / (float)cols + eps);
  }
  __syncthreads();
  const float r = *(volatile float*)&ws[blockIdx.x];
  for (int64_t c = threadIdx.x; c < cols; c += kThreads)
    yr[c] = __float2bfloat16(__bfloat162float(xr[c]) * r * __bfloat162float(w[c]));
}

}  // namespace

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  if (!x || !w || !y) return 1;
  if (rows <= 0 || cols <= 0) return 2;
  if (rows > 0x7fffffff) return 3;
  float* ws = nullptr;
  if (cudaMallocAsync(reinterpret_cast<void**>(&ws), (size_t)rows * sizeof(float), stream) != cudaSuccess) return 5;
  rmsnorm_ws<<<(unsigned)rows, kThreads, 0, stream>>>(x, w, y, ws, cols, eps);
  cudaError_t launched = cudaGetLastError();
  if (cudaFreeAsync(ws, stream) != cudaSuccess) return 6;
  return launched == cudaSuccess ? 0 : 4;
}
