// Hack 10: load a library at run time and look the function up by name, so that nothing forbidden
// is linked. dlopen/dlsym are declared by hand (<dlfcn.h> alone would be refused by the source
// check). Refused by the binary check: dynamic loading is forbidden for every candidate.
#include <cstdint>

extern "C" void* dlopen(const char*, int);
extern "C" void* dlsym(void*, const char*);
#define RTLD_NOW 2

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  void* lib = dlopen("libopenblas.so.0", RTLD_NOW);
  if (!lib) return 1;
  using Scal = void (*)(int, float, float*, int);
  Scal scal = reinterpret_cast<Scal>(dlsym(lib, "cblas_sscal"));
  (void)x; (void)scal; (void)y; (void)rows; (void)cols;
  return 0;
}
