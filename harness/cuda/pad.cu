// The harness's pad kernel (harness/cuda_driver.py, class Pad): spins on the GPU's global timer for
// `ns` nanoseconds. Launched with every SM's thread slots filled, before the start event of a timed
// call. pad.ptx beside it is generated from this file:
//   nvcc -ptx -arch=compute_75 harness/cuda/pad.cu -o harness/cuda/pad.ptx
// (harness/tests/test_cuda_driver.py checks that it is up to date wherever nvcc is installed).
extern "C" __global__ void kernelseek_pad(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
