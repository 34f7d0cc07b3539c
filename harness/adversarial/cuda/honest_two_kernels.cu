// Honest (issue 39): two kernels a call. The first computes every row's 1/rms into a buffer the kernel
// allocated once (cudaMalloc on its first call, kept), the second normalises with it; both on the
// stream it is given. Its figure is the two kernels' work (CUPTI's records, the gap between them
// excused up to 3 us); the bound requests see the second launch too, which on a few-microsecond
// scenario can lift its figure to the parent's floor (harness/timing/bound.py). Must pass: status ok.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    inv_rms_rows(const __nv_bfloat16* __restrict__ x, float* __restrict__ inv, int64_t cols, float eps) {
  const __nv_bfloat16* xr = x + (int64_t)blockIdx.x * cols;
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
    inv[blockIdx.x] = rsqrtf(total / (float)cols + eps);
  }
}

__global__ void __launch_bounds__(kThreads)
    scale_rows(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const float* __restrict__ inv,
               __nv_bfloat16* __restrict__ y, int64_t cols) {
  const float r = inv[blockIdx.x];
  const int64_t base = (int64_t)blockIdx.x * cols;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads)
    y[base + c] = __float2bfloat16(__bfloat162float(x[base + c]) * r * __bfloat162float(w[c]));
}

}  // namespace

static float* inv = nullptr;
static int64_t inv_rows = 0;

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  if (!x || !w || !y) return 1;
  if (rows <= 0 || cols <= 0) return 2;
  if (rows > 0x7fffffff) return 3;
  if (rows > inv_rows) {
    if (inv) cudaFree(inv);
    inv = nullptr;
    if (cudaMalloc(reinterpret_cast<void**>(&inv), (size_t)rows * sizeof(float)) != cudaSuccess) return 5;
    inv_rows = rows;
  }
  inv_rms_rows<<<(unsigned)rows, kThreads, 0, stream>>>(x, inv, cols, eps);
  scale_rows<<<(unsigned)rows, kThreads, 0, stream>>>(x, w, inv, y, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
