/* The harness's cache flush on the CPU: every cache line of the given ranges written back and evicted
 * from every cache level of every core (CLFLUSHOPT where the CPU has it, else CLFLUSH), then a fence.
 * Built by the trusted parent with the system compiler (harness/native/__init__.py) and called only
 * by it, on the buffers a round's calls are about to read: the cost follows the data, not the size
 * of the last-level cache (a VM here reports a 480 MiB L3, which a buffer-writing flush must
 * overwrite twice per round). */
#include <stddef.h>
#include <stdint.h>

#define LINE 64

static int has_clflushopt(void) {
  unsigned int a = 7, b = 0, c = 0, d = 0;
  __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
  return (b >> 23) & 1;
}

static int opt = -1;

int ks_flush_kind(void) {
  if (opt < 0) opt = has_clflushopt();
  return opt;
}

void ks_flush(const char *p, size_t n) {
  uintptr_t a = (uintptr_t)p & ~(uintptr_t)(LINE - 1), end = (uintptr_t)p + n;
  if (ks_flush_kind()) {
    for (; a < end; a += LINE) __asm__ volatile("clflushopt (%0)" : : "r"(a) : "memory");
  } else {
    for (; a < end; a += LINE) __asm__ volatile("clflush (%0)" : : "r"(a) : "memory");
  }
  __asm__ volatile("mfence" : : : "memory");
}
