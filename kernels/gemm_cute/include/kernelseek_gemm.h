// The task's own header (task.yaml: kernel.include_dirs: [include]): the entry point every candidate
// defines, so that a kernel's signature is checked by the compiler against the task's.
#pragma once
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

// c[m, n] = sum_k a[m, k] * b[n, k] (fp16 in and out, fp32 accumulation); a, b, c row-major, contiguous.
// Returns 0 on success, non-zero for shapes the kernel does not support. Launches on `stream`.
extern "C" int gemm_fp16(const __half* a, const __half* b, __half* c, int64_t m, int64_t n, int64_t k,
                         cudaStream_t stream);
