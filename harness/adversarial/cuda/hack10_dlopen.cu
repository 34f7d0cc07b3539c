// Hack 10: dlopen a library and dlsym its function, so that nothing forbidden is linked (declared by
// hand; <dlfcn.h> would be refused by the source check). Refused by the binary check: dynamic loading
// is forbidden for every candidate.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

extern "C" void* dlopen(const char*, int);
extern "C" void* dlsym(void*, const char*);

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  (void)x; (void)w; (void)y; (void)rows; (void)cols; (void)eps; (void)stream;
  void* lib = dlopen("libcublasLt.so", 2);
  return lib && dlsym(lib, "cublasLtCreate") ? 0 : 1;
}
