/* One request's calls in native code: the executor's Python would otherwise run between every two
 * calls of a batch (about a microsecond each, laid out differently in every process), which on a
 * kernel of a few microseconds is a large part of the figure and differs between identical twins.
 *
 * x86-64 System V: integer-class arguments (pointers, int32, int64) go in order to six registers
 * and then the stack, float arguments to xmm0-7, independently of each other. So any entry point
 * of at most 16 integer-class and 8 float arguments can be called through one prototype that takes
 * 16 integers and then 8 floats: the callee reads the ones it declares, the caller pops the stack.
 * The parent's own figure is still the kernel's account of this process's CPU time. */
#include <stdint.h>

typedef int (*entry_t)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       float, float, float, float, float, float, float, float);

/* Calls fn once for each of the n slots named in idx; slot s's arguments are ints[s*ni ...] and
 * floats[s*nf ...] (a table the executor packed once when the slots were mapped). */
int ks_batch(void *fn, int n, const int32_t *idx, int ni, const int64_t *ints, int nf, const float *floats,
             int32_t *rc) {
  if (ni < 0 || ni > 16 || nf < 0 || nf > 8) return -1;
  entry_t f = (entry_t)fn;
  for (int c = 0; c < n; c++) {
    int64_t a[16] = {0};
    float x[8] = {0};
    int64_t s = idx[c];
    for (int j = 0; j < ni; j++) a[j] = ints[s * ni + j];
    for (int j = 0; j < nf; j++) x[j] = floats[s * nf + j];
    rc[c] = f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
              a[14], a[15], x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]);
  }
  return 0;
}
