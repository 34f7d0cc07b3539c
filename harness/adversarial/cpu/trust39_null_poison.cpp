// Issue 39, the calibration poisoned from inside the executor: the CPU figure of a call is its
// request's CPU time less the smallest null request's (all of a request but the calls), and both are
// spent in the executor, whose process the candidate owns. At its first call this kernel finds the
// interpreter's GOT slot for recvmsg() (the executor reads every request through it), makes its page
// writable (mprotect without PROT_EXEC, a raw system call: the filter allows it) and points the slot
// at a hook that reads each request as it arrives and burns 0.8 ms of CPU in the timed rounds' null
// requests ("null":true, on several slots; the warm-up's name one slot again and again, and inflating
// those would only make the batches longer). Every figure is then short of 0.8 ms a request (1.4-4x
// on r64-c128's requests of 2-3 ms of calls). The kernel itself is honest softmax. A hand-written
// walk of the loader's link map needs nothing off the allowlist (cuda/forge1 does it); this one takes
// dl_iterate_phdr and recvmsg by name, so it runs with the allowlist off. Caught: the native executors
// subtract the smallest null request of them all (the baseline's executor, the same code, never ran
// the candidate's), far past the baseline's is a finding, and the lean bound requests (no recv of
// Python's on their path) bound the rounds' figures from below.
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

bool hooked = false;

void burn(long ns) {
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

long find(const char* buf, long n, const char* word) {
  long w = static_cast<long>(strlen(word));
  for (long i = 0; i + w <= n; ++i)
    if (memcmp(buf + i, word, w) == 0) return i + w;
  return -1;
}

long number(const char* buf, long n, long* at) {
  long v = 0;
  while (*at < n && buf[*at] >= '0' && buf[*at] <= '9') v = 10 * v + (buf[(*at)++] - '0');
  return v;
}

// A timed round's null request: {"cmd":"call","table":..,"idx":[a,b,...],"null":true} with a != b.
bool rounds_null(const char* buf, long n) {
  if (find(buf, n, "\"null\":true") < 0) return false;
  long at = find(buf, n, "\"idx\":[");
  if (at < 0) return false;
  long a = number(buf, n, &at);
  if (at >= n || buf[at] != ',') return false;
  ++at;
  return number(buf, n, &at) != a;
}

ssize_t hooked_recvmsg(int fd, struct msghdr* msg, int flags) {
  ssize_t got = recvmsg(fd, msg, flags);
  if (got > 0 && msg->msg_iovlen > 0 && rounds_null(static_cast<const char*>(msg->msg_iov[0].iov_base), got))
    burn(800000);
  return got;
}

void hook() {
  hooked = true;
  Find f{"recvmsg", nullptr};
  dl_iterate_phdr(find_slot, &f);
  if (!f.slot) return;
  uintptr_t page = reinterpret_cast<uintptr_t>(f.slot) & ~uintptr_t(4095);
  raw3(10 /* mprotect */, static_cast<long>(page), 4096, PROT_READ | PROT_WRITE);   // a full-RELRO slot too
  *f.slot = reinterpret_cast<uintptr_t>(&hooked_recvmsg);
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (!hooked) hook();       // every copy of the library hooks the slot again: any of them will do
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
