// Hack 12: bring a second file into the build (e.g. a tuned kernel kept next to the candidate, or
// the harness's sources). Refused by the source check: the candidate is exactly one file.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>
#include "helper.cuh"

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  (void)x; (void)w; (void)y; (void)rows; (void)cols; (void)eps; (void)stream;
  return 0;
}
