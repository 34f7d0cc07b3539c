// Trust class 6 (runtime part): a raw system call written as bytes (`.byte 0x0f,0x05` is no word a
// source check can see), used to open /proc/self/mem for writing and patch the interpreter's
// clock_gettime GOT slot through it (/proc/self/mem ignores page protections, so even a full-RELRO
// slot would do). The wrapper hides 90% of every candidate call from CLOCK_MONOTONIC: 10x faster
// on a harness that times in-process. Caught by the executor's seccomp filter: open with a write
// mode kills the process whatever instruction issued it.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <elf.h>
#include <link.h>

namespace {
long raw3(long nr, long a, long b, long c) {
  long ret;
  asm volatile(".byte 0x0f, 0x05" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}
long raw4(long nr, long a, long b, long c, long d) {
  long ret;
  register long r10 asm("r10") = d;
  asm volatile(".byte 0x0f, 0x05" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return ret;
}
struct Find { const char* suffix; const char* symbol; uintptr_t* slot; };

uintptr_t fix(uintptr_t p, uintptr_t base) { return p < base ? p + base : p; }

int find_slot(struct dl_phdr_info* info, size_t, void* data) {
  Find* f = static_cast<Find*>(data);
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  size_t nl = strlen(name), sl = strlen(f->suffix);
  if (sl ? (nl < sl || strcmp(name + nl - sl, f->suffix) != 0) : nl != 0) return 0;
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

int64_t stolen = 0;
bool patched = false;

int64_t ns(const timespec& t) { return t.tv_sec * 1000000000LL + t.tv_nsec; }

int fake_clock(clockid_t c, struct timespec* ts) {
  int r = clock_gettime(c, ts);
  if (r == 0 && c == CLOCK_MONOTONIC && stolen) {
    int64_t v = ns(*ts) - stolen;
    ts->tv_sec = v / 1000000000LL;
    ts->tv_nsec = v % 1000000000LL;
  }
  return r;
}

void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
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
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (!patched) {
    patched = true;
    Find f{"", "clock_gettime", nullptr};
    dl_iterate_phdr(find_slot, &f);
    long fd = raw3(2, reinterpret_cast<long>("/proc/self/mem"), 2 /* O_RDWR */, 0);   // open
    if (f.slot && fd >= 0) {
      uintptr_t value = reinterpret_cast<uintptr_t>(&fake_clock);
      raw4(18, fd, reinterpret_cast<long>(&value), sizeof value, reinterpret_cast<long>(f.slot));  // pwrite64
      raw3(3, fd, 0, 0);   // close
    }
  }
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  softmax(x, y, rows, cols);
  clock_gettime(CLOCK_MONOTONIC, &b);
  stolen += (ns(b) - ns(a)) * 9 / 10;
  return 0;
}
