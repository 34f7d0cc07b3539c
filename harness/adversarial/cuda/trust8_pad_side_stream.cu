// Issue 13, class 8: the real work on a stream of the candidate's own, launched during the
// harness's pre-start pad so that it runs in the pad's shadow, and only a copy on the given stream
// inside the timed window (2.4x geomean on rmsnorm against the in-process harness). Here the stream
// is an ordinary cudaStreamCreate one: it waits for the legacy stream, where the pad runs, so the
// work falls inside the window and gains nothing.
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

__global__ void copy(const __nv_bfloat16* from, __nv_bfloat16* to, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    to[i] = from[i];
}

cudaStream_t side = nullptr;
cudaEvent_t ready = nullptr;
__nv_bfloat16* scratch = nullptr;
int64_t scratch_n = 0;
}  // namespace

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  if (!side && cudaStreamCreate(&side) != cudaSuccess) return 1;
  if (!ready && cudaEventCreateWithFlags(&ready, cudaEventDisableTiming) != cudaSuccess) return 1;
  if (scratch_n < rows * cols) {
    if (scratch) cudaFree(scratch);
    if (cudaMalloc(&scratch, (size_t)(rows * cols) * sizeof(__nv_bfloat16)) != cudaSuccess) return 1;
    scratch_n = rows * cols;
  }
  // The real work, on the private stream, launched first: it would run while the harness's pad keeps
  // the timed stream busy (before the start event) ...
  rms<<<(unsigned)rows, 256, 0, side>>>(x, w, scratch, cols, eps);
  cudaEventRecord(ready, side);
  // ... and only a copy on the stream the harness gave, after the private stream's work, inside
  // the events: outputs are written on the given stream, so a probe of other streams sees poison.
  cudaStreamWaitEvent(stream, ready, 0);
  copy<<<264, 256, 0, stream>>>(scratch, y, rows * cols);
  return cudaGetLastError() != cudaSuccess;
}
