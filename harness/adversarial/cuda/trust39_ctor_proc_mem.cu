// Issue 39 on CUDA, no window before the filter: a constructor in the .cu (run by the dynamic linker as
// the executor loads the library, with nvcc's own fatbinary registration) opens /proc/self/mem
// read-write with a raw system call written as bytes and keeps the descriptor; where the filter came
// after the load it outlived it (any code or GOT slot writable from the first timed call, the CUDA
// runtime's included). The kernel is the rmsnorm baseline's. Caught: the library is loaded under the
// filter's first step: the open is refused and named (open, number 2).
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace {
long raw3(long nr, long a, long b, long c) {
  long ret;
  asm volatile(".byte 0x0f, 0x05" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}
long kept = -1;
__attribute__((constructor)) void before_the_filter() {
  kept = raw3(2 /* open */, reinterpret_cast<long>("/proc/self/mem"), 2 /* O_RDWR */, 0);
}
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
  rmsnorm_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(x, w, y, cols, eps);
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
