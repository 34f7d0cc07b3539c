// The harness's pad kernel (harness/cuda_driver.py, class Pad): spins on the GPU's global timer for
// `ns` nanoseconds. Launched with every SM's thread slots filled, before the start event of a timed
// call. Blocks from `spinning` on return at once: with every slot held by the spinning ones, they are
// dispatched only as those end, so a launch with a random number of them leaves the GPU's block
// scheduler in a random state for the call that follows (Pad.launch's `rotate`).
// pad.ptx beside it is generated from this file:
//   nvcc -ptx -arch=compute_75 harness/cuda/pad.cu -o harness/cuda/pad.ptx
// (harness/tests/test_cuda_driver.py checks that it is up to date wherever nvcc is installed).
extern "C" __global__ void kernelseek_pad(unsigned long long ns, unsigned int spinning) {
  if (blockIdx.x >= spinning) return;
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
