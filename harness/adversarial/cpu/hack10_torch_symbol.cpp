// Hack 10: call into PyTorch's own kernels without including any header: the symbol is declared by
// hand and would be resolved at load time from the libraries already in the harness process.
// Refused by the binary check: the object references a symbol in namespace at:: (PyTorch).
#include <cstdint>

namespace at { namespace native {
void softmax_lastdim_kernel_impl(const float* x, float* y, int64_t rows, int64_t cols);
} }

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  at::native::softmax_lastdim_kernel_impl(x, y, rows, cols);
  return 0;
}
