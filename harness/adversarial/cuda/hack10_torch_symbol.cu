// Hack 10: call PyTorch's own kernel through a hand-written declaration in namespace at::.
// Refused by the binary check: at:: belongs to the torch denylist family.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

namespace at { namespace native {
void rms_norm_cuda_kernel(const void* x, const void* w, void* y, int64_t rows, int64_t cols, float eps, void* stream);
} }

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  at::native::rms_norm_cuda_kernel(x, w, y, rows, cols, eps, stream);
  return 0;
}
