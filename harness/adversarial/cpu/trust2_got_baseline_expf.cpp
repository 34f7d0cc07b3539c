// Trust class 2: slow the baseline down instead of speeding the candidate up. A harness that loads
// the baseline into the candidate's process lets the candidate find the baseline's GOT slot for
// expf (dl_iterate_phdr, the object whose name ends in baseline.so, its DT_JMPREL relocations: no
// dlsym, no mprotect: partial RELRO leaves .got.plt writable) and point it at an expf that burns
// ~200 extra iterations per element: the speedup over the baseline is inflated ~10x while the
// candidate itself stays honest. Caught because the baseline runs in a process that never loaded
// the candidate (expect: ok, no speedup beyond an honest kernel's).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <elf.h>
#include <link.h>

namespace {
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

bool patched = false;

float slow_expf(float v) {
  for (volatile int i = 0; i < 200; i = i + 1) {
  }
  return std::exp(v);
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
    Find f{"baseline.so", "expf", nullptr};
    dl_iterate_phdr(find_slot, &f);
    if (f.slot) *f.slot = reinterpret_cast<uintptr_t>(&slow_expf);
  }
  softmax(x, y, rows, cols);
  return 0;
}
