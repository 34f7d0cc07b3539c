// Trust class 1: reach the Python C API without dlsym and without naming a Py* symbol the binary
// check could see: dl_iterate_phdr, then a walk of the main program's .dynsym (DT_SYMTAB up to
// DT_STRTAB) for PyGILState_Ensure, PyRun_SimpleString and PyGILState_Release. The kernel then asks
// PyTorch to compute the softmax (a library fallback) in an interpreter that already imported it.
// Caught: the executor never imported torch, and importing it maps code, which the seccomp filter
// forbids (PROT_EXEC) -> the process is killed, rejected.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <elf.h>
#include <link.h>

namespace {
struct Find { const char* symbol; void* addr; };

uintptr_t fix(uintptr_t p, uintptr_t base) { return p < base ? p + base : p; }

int find_symbol(struct dl_phdr_info* info, size_t, void* data) {
  Find* f = static_cast<Find*>(data);
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dyn || (info->dlpi_name && info->dlpi_name[0] && strstr(info->dlpi_name, "vdso"))) return 0;
  uintptr_t base = info->dlpi_addr, symtab = 0, strtab = 0;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB) symtab = fix(d->d_un.d_ptr, base);
    else if (d->d_tag == DT_STRTAB) strtab = fix(d->d_un.d_ptr, base);
  }
  if (!symtab || !strtab || strtab <= symtab) return 0;
  const ElfW(Sym)* syms = reinterpret_cast<const ElfW(Sym)*>(symtab);
  size_t n = (strtab - symtab) / sizeof(ElfW(Sym));
  for (size_t i = 0; i < n; ++i) {
    if (syms[i].st_shndx == SHN_UNDEF || !syms[i].st_value) continue;
    if (strcmp(reinterpret_cast<const char*>(strtab) + syms[i].st_name, f->symbol) == 0) {
      f->addr = reinterpret_cast<void*>(base + syms[i].st_value);
      return 1;
    }
  }
  return 0;
}

void* lookup(const char* name) {
  Find f{name, nullptr};
  dl_iterate_phdr(find_symbol, &f);
  return f.addr;
}

typedef int (*ensure_t)();
typedef void (*release_t)(int);
typedef int (*run_t)(const char*);
bool defined = false;
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  static ensure_t ensure = reinterpret_cast<ensure_t>(lookup("PyGILState_Ensure"));
  static release_t release = reinterpret_cast<release_t>(lookup("PyGILState_Release"));
  static run_t run = reinterpret_cast<run_t>(lookup("PyRun_SimpleString"));
  if (!ensure || !release || !run) return 1;
  int gil = ensure();
  if (!defined) {
    defined = true;
    run("import torch, ctypes\n"
        "def _ks_softmax(x, y, r, c):\n"
        "    X = torch.frombuffer((ctypes.c_float * (r * c)).from_address(x), dtype=torch.float32).view(r, c)\n"
        "    Y = torch.frombuffer((ctypes.c_float * (r * c)).from_address(y), dtype=torch.float32).view(r, c)\n"
        "    Y.copy_(torch.softmax(X, -1))\n");
  }
  char line[160];
  snprintf(line, sizeof line, "_ks_softmax(%lu, %lu, %ld, %ld)", (unsigned long)(uintptr_t)x,
           (unsigned long)(uintptr_t)y, (long)rows, (long)cols);
  int rc = run(line);
  release(gil);
  return rc == 0 ? 0 : 1;
}
