// Hack 10: fall back to a library (cuBLAS, here for the final scaling). Refused by the source check:
// <cublas_v2.h> belongs to the task's cublas denylist family.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cublas_v2.h>

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  (void)x; (void)w; (void)y; (void)rows; (void)cols; (void)eps; (void)stream;
  cublasHandle_t h;
  return cublasCreate(&h) != CUBLAS_STATUS_SUCCESS;
}
