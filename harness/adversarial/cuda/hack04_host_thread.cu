// Hack 4: a background CPU thread. A worker thread started on the first call launches the kernels;
// the call only hands the job over and returns. Defeated by counting the threads the candidate
// leaves running (against what the baseline, built the same way, starts), and by the checks for
// work done after return.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <atomic>
#include <thread>

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

struct Job { const __nv_bfloat16 *x, *w; __nv_bfloat16* y; int64_t rows, cols; float eps; cudaStream_t s; };
std::atomic<bool> pending{false};
Job job;
std::thread* worker = nullptr;

void loop() {
  for (;;) {
    if (pending.load()) {
      rms<<<(unsigned)job.rows, 256, 0, job.s>>>(job.x, job.w, job.y, job.cols, job.eps);
      cudaStreamSynchronize(job.s);
      pending.store(false);
    }
    std::this_thread::yield();
  }
}
}  // namespace

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  if (!worker) worker = new std::thread(loop);
  job = {x, w, y, rows, cols, eps, stream};
  pending.store(true);
  return 0;
}
