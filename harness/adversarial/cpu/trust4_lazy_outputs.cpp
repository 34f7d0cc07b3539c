// Trust class 4: lazy outputs. From the first timed call on (the first four calls are the
// correctness trials), the call computes only the rows on the partial pages at the ends of y, maps
// fresh PROT_NONE pages over the rest (mmap MAP_FIXED, no mprotect) and returns; a SIGSEGV handler
// computes a page when the harness first reads it, after its timer stopped. Caught: the executor
// may not install signal handlers (seccomp), and the parent reads outputs from its own mapping of
// the shared buffer, where the remapped pages are still poison -> "left outputs unwritten".
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

namespace {
const uintptr_t PAGE = 4096;
const float* gx;
float* gy;
int64_t grows, gcols;
int calls = 0;
// The executor loads the library 8 times and the correctness trials call only the first copy; the
// others are called by timing alone. libc's rand() state, the process's, tells the first copy (its
// constructor draws a fresh process's first number): only that one spends its first calls honest.
bool first_copy = false;
__attribute__((constructor)) void which_copy() { first_copy = rand() == 1804289383; }  // glibc, seed 1
bool installed = false;

// Row r of the softmax, writing only columns [c0, c1).
void row(const float* x, float* y, int64_t r, int64_t cols, int64_t c0, int64_t c1) {
  const float* xr = x + r * cols;
  float m = xr[0];
  for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
  double sum = 0.0;
  for (int64_t c = 0; c < cols; ++c) sum += std::exp(xr[c] - m);
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t c = c0; c < c1; ++c) y[r * cols + c] = std::exp(xr[c] - m) * inv;
}
void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) row(x, y, r, cols, 0, cols);
}

void compute_range(uintptr_t lo, uintptr_t hi) {   // every element of y in [lo, hi)
  uintptr_t y0 = reinterpret_cast<uintptr_t>(gy);
  int64_t e0 = (lo - y0) / 4, e1 = (hi - y0 + 3) / 4, n = grows * gcols;
  if (e0 < 0) e0 = 0;
  if (e1 > n) e1 = n;
  for (int64_t e = e0; e < e1;) {
    int64_t r = e / gcols, c0 = e % gcols, c1 = gcols;
    if (r * gcols + c1 > e1) c1 = e1 - r * gcols;
    row(gx, gy, r, gcols, c0, c1);
    e = r * gcols + c1;
  }
}

void on_fault(int, siginfo_t* si, void*) {
  uintptr_t page = reinterpret_cast<uintptr_t>(si->si_addr) & ~(PAGE - 1);
  mmap(reinterpret_cast<void*>(page), PAGE, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  compute_range(page, page + PAGE);
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (first_copy && ++calls <= 4) { softmax(x, y, rows, cols); return 0; }
  if (!installed) {
    installed = true;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, nullptr);
  }
  gx = x; gy = y; grows = rows; gcols = cols;
  uintptr_t y0 = reinterpret_cast<uintptr_t>(y), y1 = y0 + rows * cols * 4;
  uintptr_t lo = (y0 + PAGE - 1) & ~(PAGE - 1), hi = y1 & ~(PAGE - 1);
  if (hi <= lo) { softmax(x, y, rows, cols); return 0; }
  compute_range(y0, lo);
  compute_range(hi, y1);
  mmap(reinterpret_cast<void*>(lo), hi - lo, PROT_NONE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return 0;
}
