// Hack 12: patch the harness from inside its process: a constructor runs Python through the C API
// to replace the CUDA event timer. Refused by the binary check (Py* symbols).
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

extern "C" int PyRun_SimpleString(const char*);

__attribute__((constructor)) static void patch() {
  PyRun_SimpleString("import torch; torch.cuda.Event.elapsed_time = lambda self, end: 1e-3");
}

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  (void)x; (void)w; (void)y; (void)rows; (void)cols; (void)eps; (void)stream;
  return 0;
}
