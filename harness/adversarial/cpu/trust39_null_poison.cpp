// Issue 39, the calibration poisoned from inside the executor: the CPU figure of a call is its
// request's CPU time less the smallest null request's (all of a request but the calls), and both are
// spent in the executor, whose process the candidate owns. At its first call this kernel finds the
// interpreter's GOT slot for send() (the executor answers every request through it), makes its page
// writable (mprotect without PROT_EXEC, a raw system call: the filter allows it) and points the slot at a hook that burns
// 0.5 ms of CPU whenever a request ends without a call of the kernel since the last answer: the null
// requests. Every figure is then short of 0.5 ms a request (2x on a request of 1 ms of calls). The
// kernel itself is honest softmax. A hand-written walk of the loader's link map needs nothing off the
// allowlist (forge1 does it on CUDA); this one takes dl_iterate_phdr and send by name, so it runs
// with the allowlist off. Caught: the null overhead counts for no more than the baseline's
// executor's (its twin, the same code, never the candidate's) and far past it is a finding; the lean
// bound requests (no send on their path) bound the figures from below too.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/types.h>

namespace {
long raw3(long nr, long a, long b, long c) {
  long ret;
  asm volatile(".byte 0x0f, 0x05" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}
struct Find { const char* symbol; uintptr_t* slot; };

uintptr_t fix(uintptr_t p, uintptr_t base) { return p < base ? p + base : p; }

int find_slot(struct dl_phdr_info* info, size_t, void* data) {
  Find* f = static_cast<Find*>(data);
  if (info->dlpi_name && info->dlpi_name[0]) return 0;      // the main program: the interpreter
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dyn) return 0;
  uintptr_t base = info->dlpi_addr, symtab = 0, strtab = 0, jmprel = 0, relsz = 0;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB) symtab = fix(d->d_un.d_ptr, base);
    else if (d->d_tag == DT_STRTAB) strtab = fix(d->d_un.d_ptr, base);
    else if (d->d_tag == DT_JMPREL) jmprel = fix(d->d_un.d_ptr, base);
    else if (d->d_tag == DT_PLTRELSZ) relsz = d->d_un.d_val;
  }
  if (!symtab || !strtab || !jmprel) return 0;
  const ElfW(Rela)* rel = reinterpret_cast<const ElfW(Rela)*>(jmprel);
  for (size_t i = 0; i < relsz / sizeof(ElfW(Rela)); ++i) {
    const ElfW(Sym)* s = reinterpret_cast<const ElfW(Sym)*>(symtab) + ELF64_R_SYM(rel[i].r_info);
    if (strcmp(reinterpret_cast<const char*>(strtab) + s->st_name, f->symbol) == 0) {
      f->slot = reinterpret_cast<uintptr_t*>(base + rel[i].r_offset);
      return 1;
    }
  }
  return 0;
}

volatile long calls_since_answer = 0;
bool hooked = false;

void burn(long ns) {
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

ssize_t hooked_send(int fd, const void* buf, size_t n, int flags) {
  if (calls_since_answer == 0) burn(500000);     // a null request (or any answer without a call)
  calls_since_answer = 0;
  return send(fd, buf, n, flags);
}

void hook() {
  hooked = true;
  Find f{"send", nullptr};
  dl_iterate_phdr(find_slot, &f);
  if (!f.slot) return;
  uintptr_t page = reinterpret_cast<uintptr_t>(f.slot) & ~uintptr_t(4095);
  raw3(10 /* mprotect */, static_cast<long>(page), 4096, PROT_READ | PROT_WRITE);   // a full-RELRO slot too
  *f.slot = reinterpret_cast<uintptr_t>(&hooked_send);
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (!hooked) hook();
  calls_since_answer = calls_since_answer + 1;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) { float e = std::exp(xr[c] - m); yr[c] = e; sum += e; }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
  return 0;
}
