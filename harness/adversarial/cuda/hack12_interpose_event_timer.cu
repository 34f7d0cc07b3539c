// Hack 12: interpose the driver's event timer by exporting cuEventElapsedTime (cudaEventElapsedTime
// itself would clash with the static CUDA runtime at link time). Refused by the binary check on
// exported C symbols.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

extern "C" int cuEventElapsedTime(float* ms, void* start, void* end) {
  (void)start; (void)end;
  *ms = 1e-3f;
  return 0;
}

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  (void)x; (void)w; (void)y; (void)rows; (void)cols; (void)eps; (void)stream;
  return 0;
}
