// Class 6: the preprocessor digraph %: is #, so `%:include` is an #include the old line check did
// not see. It pulls an arbitrary file in, and the compile errors that follow show its lines in the
// log given back to the model (here /etc/passwd; a task's reference or another run's kernel would do).
// Refused by the source check (a digraph directive is a directive) and, whatever the spelling, by the
// compiler's own list of the files it read (only system headers) inside a sandbox without those files.
#include <cmath>
#include <cstdint>
%:include </etc/passwd>

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = x[i];
  return 0;
}
