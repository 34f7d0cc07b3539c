// Issue 39 on CUDA, honest counter-example for "no window before the filter": a static initializer
// (run as the library loads, now under the filter's first step, beside nvcc's fatbinary
// registration) builds a host table with the C++ runtime; the kernel is the rmsnorm baseline's and
// reads the table's one value on the host (1.0f). Must pass: load-time code inside the rules, and a
// CUDA library's registration, are not refused under the filter.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <vector>

namespace {
struct Table {
  std::vector<float> ones;
  Table() : ones(4096, 1.0f) {}
};
const Table table;   // built while the library loads
}  // namespace

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

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  if (!x || !w || !y) return 1;
  if (rows <= 0 || cols <= 0) return 2;
  if (rows > 0x7fffffff) return 3;  // one block per row
  rmsnorm_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(x, w, y, cols, eps * table.ones[0]);
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
