/* One request's calls in native code: the executor's Python would otherwise run between every two
 * calls of a batch (about a microsecond each, laid out differently in every process), which on a
 * kernel of a few microseconds is a large part of the figure and differs between identical twins.
 *
 * x86-64 System V: integer-class arguments (pointers, int32, int64) go in order to six registers
 * and then the stack, float arguments to xmm0-7, independently of each other. So any entry point
 * of at most 16 integer-class and 8 float arguments can be called through one prototype that takes
 * 16 integers and then 8 floats: the callee reads the ones it declares, the caller pops the stack.
 * The parent's own figure is still the kernel's account of this process's CPU time.
 *
 * Layout, drawn again for every call. Where a process's stack and code happen to lie changes what
 * the same machine code costs, for the whole life of the process: on the development VM the
 * baseline softmax read 1.155-1.281 ms a call as only the environment's length (so the stack's
 * place) changed, 1.131-1.298 ms from one process to the next with ASLR on (tools/lab/
 * layout_probe.py, docs/harness-lab.md "Layout"). Two executors running identical code therefore read
 * differently for a whole evaluation, an offset no number of rounds shows. So each call runs on a
 * stack moved down by a random 16 to 4096 bytes, through a copy of the library drawn at random among
 * those the executor loaded (each mapped where ASLR put it): every implementation's figure is an
 * average over layouts (1.198-1.264 ms, this VM's drift), not one layout's luck. */
#include <stdint.h>

typedef int (*entry_t)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       float, float, float, float, float, float, float, float);

static uint64_t state = 0x9e3779b97f4a7c15ull;

/* The layout draws' seed (the executor sets it once, from the parent's secret). */
void ks_seed(uint64_t seed) { state = seed ? seed : 0x9e3779b97f4a7c15ull; }

static uint64_t next_draw(void) { /* xorshift64* */
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545f4914f6cdd1dull;
}

/* The call on a stack `shift` bytes lower (a multiple of 16, so the ABI's alignment holds); a frame
 * of its own, so the shift is gone when it returns. */
__attribute__((noinline)) static int shifted(entry_t f, uint64_t shift, const int64_t *a, const float *x) {
  volatile char *pad = __builtin_alloca(shift);
  pad[0] = 0;
  __asm__ volatile("" : : "r"(pad) : "memory");
  return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14],
           a[15], x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]);
}

/* Calls one of the nfn copies of the entry point (fns) once for each of the n slots named in idx;
 * slot s's arguments are ints[s*ni ...] and floats[s*nf ...] (a table the executor packed once when
 * the slots were mapped). */
int ks_batch(void *const *fns, int nfn, int n, const int32_t *idx, int ni, const int64_t *ints, int nf,
             const float *floats, int32_t *rc) {
  if (ni < 0 || ni > 16 || nf < 0 || nf > 8 || nfn < 1) return -1;
  for (int c = 0; c < n; c++) {
    int64_t a[16] = {0};
    float x[8] = {0};
    int64_t s = idx[c];
    for (int j = 0; j < ni; j++) a[j] = ints[s * ni + j];
    for (int j = 0; j < nf; j++) x[j] = floats[s * nf + j];
    uint64_t draw = next_draw();
    entry_t f = (entry_t)fns[(draw >> 32) % (uint64_t)nfn];
    rc[c] = shifted(f, 16 * (1 + (draw & 255)), a, x);
  }
  return 0;
}
