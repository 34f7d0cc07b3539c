// Issue 39, class (d), against the bound's batch mode: the calls of a batch run at once. As forge1 the
// figures are written at 0.6 of what ran; and the executor's bound-request loop is replaced (through
// the Python C API found by a hand-written walk, as forge5) by one that passes the entry a marker
// stream, on which the kernel goes to one of eight streams of its own in turn, and synchronises the
// device after a request's last call. The calls of a batch then overlap wherever one call leaves the
// GPU idle (a one-row rmsnorm is one block): W_K and its slope read less than K calls in a stream.
// Every call's outputs are written before the answer (the parent reads them all), so what this tests
// is the bound's known blind spot, the stream order the candidate owns (docs/harness-threats.md).
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <elf.h>
#include <stdint.h>
#include <string.h>
// <link.h> is not included: it brings <dlfcn.h> in, which the source check refuses by name. The loader's
// structures are declared here instead, as glibc lays them out: a name list sees nothing.
#define ElfW(type) Elf64_##type
struct link_map { ElfW(Addr) l_addr; char* l_name; ElfW(Dyn)* l_ld; struct link_map *l_next, *l_prev; };
struct r_debug { int r_version; struct link_map* r_map; ElfW(Addr) r_brk; int r_state; ElfW(Addr) r_ldbase; };

// --- the walk: ld.so found below __tls_get_addr (an allowlisted symbol ld.so defines), its _r_debug in
// its own .dynsym, the loader's link map from there, every object's .dynsym searched in turn. No dlsym,
// no dl_iterate_phdr, no Py* symbol in this object: nothing a name list can see.
extern "C" void* __tls_get_addr(void*);

namespace walk {

typedef uintptr_t addr;

addr fix(addr p, addr base) { return p < base ? p + base : p; }   // d_ptr relocated in memory or not

void* lookup(addr base, const ElfW(Dyn)* dyn, const char* name) {
  addr symtab = 0, strtab = 0, strsz = 0;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB) symtab = fix(d->d_un.d_ptr, base);
    else if (d->d_tag == DT_STRTAB) strtab = fix(d->d_un.d_ptr, base);
    else if (d->d_tag == DT_STRSZ) strsz = d->d_un.d_val;
  }
  if (!symtab || !strtab || strtab <= symtab) return nullptr;
  size_t n = (strtab - symtab) / sizeof(ElfW(Sym));          // .dynstr follows .dynsym
  if (n > 4000000) return nullptr;
  const ElfW(Sym)* syms = reinterpret_cast<const ElfW(Sym)*>(symtab);
  for (size_t i = 0; i < n; ++i) {
    if (syms[i].st_shndx == SHN_UNDEF || !syms[i].st_value || syms[i].st_name >= strsz) continue;
    if (strcmp(reinterpret_cast<const char*>(strtab) + syms[i].st_name, name) == 0)
      return reinterpret_cast<void*>(base + syms[i].st_value);
  }
  return nullptr;
}

void* find(const char* name) {
  addr p = reinterpret_cast<addr>(&__tls_get_addr) & ~static_cast<addr>(0xfff);
  addr base = 0;
  for (int i = 0; i < 16384 && p; ++i, p -= 0x1000)
    if (memcmp(reinterpret_cast<const void*>(p), ELFMAG, SELFMAG) == 0) { base = p; break; }
  if (!base) return nullptr;
  const ElfW(Ehdr)* eh = reinterpret_cast<const ElfW(Ehdr)*>(base);
  const ElfW(Phdr)* ph = reinterpret_cast<const ElfW(Phdr)*>(base + eh->e_phoff);
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < eh->e_phnum; ++i)
    if (ph[i].p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(base + ph[i].p_vaddr);
  if (!dyn) return nullptr;
  const r_debug* dbg = static_cast<const r_debug*>(lookup(base, dyn, "_r_debug"));
  if (!dbg) return nullptr;
  for (const link_map* m = dbg->r_map; m; m = m->l_next) {
    if (!m->l_ld) continue;
    void* f = lookup(m->l_addr, m->l_ld, name);
    if (f) return f;
  }
  return nullptr;
}

typedef int (*ensure_t)();
typedef void (*release_t)(int);
typedef int (*run_t)(const char*);

// Runs `code` in the executor's interpreter, under its GIL (ctypes released it for this call).
bool python(const char* code) {
  static ensure_t ensure = reinterpret_cast<ensure_t>(find("PyGILState_Ensure"));
  static release_t release = reinterpret_cast<release_t>(find("PyGILState_Release"));
  static run_t run = reinterpret_cast<run_t>(find("PyRun_SimpleString"));
  if (!ensure || !release || !run) return false;
  int gil = ensure();
  int rc = run(code);
  release(gil);
  return rc == 0;
}

}  // namespace walk

#ifdef KS_WALK_TEST   // harness/tests/test_adversarial_walk.py: the walk alone, on the CPU
extern "C" void* ks_walk_find(const char* name) { return walk::find(name); }
extern "C" int ks_walk_python(const char* code) { return walk::python(code) ? 0 : 1; }
#endif
// --- end of the walk

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    rmsnorm_kernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                   __nv_bfloat16* __restrict__ y, int64_t cols, float eps) {
  const __nv_bfloat16* xr = x + (int64_t)blockIdx.x * cols;
  __nv_bfloat16* yr = y + (int64_t)blockIdx.x * cols;
  float ss = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    float v = __bfloat162float(xr[c]);
    ss += v * v;
  }
  for (int off = 16; off > 0; off /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, off);
  __shared__ float partial[kThreads / 32];
  __shared__ float inv_rms;
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.f;
    for (int i = 0; i < kThreads / 32; ++i) total += partial[i];
    inv_rms = rsqrtf(total / (float)cols + eps);
  }
  __syncthreads();
  const float r = inv_rms;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads)
    yr[c] = __float2bfloat16(__bfloat162float(xr[c]) * r * __bfloat162float(w[c]));
}

}  // namespace


static const char kForge[] =
    "import sys\n"
    "def _ks_forge():\n"
    "    for m in (sys.modules.get('__main__'), sys.modules.get('harness.executor.process')):\n"
    "        E = getattr(m, 'Executor', None)\n"
    "        if E is None or getattr(E, '_ks_forged', False):\n"
    "            continue\n"
    "        orig = E._timed_gpu\n"
    "        def timed(self, calls, pad_ms, _orig=orig):\n"
    "            r = _orig(self, calls, pad_ms)\n"
    "            for k in ('span_ms', 'work_ms', 'ms'):\n"
    "                v = r.get(k)\n"
    "                if isinstance(v, list):\n"
    "                    r[k] = [x * 0.6 if isinstance(x, float) else x for x in v]\n"
    
    "            return r\n"
    "        E._timed_gpu = timed\n"
    "        E._ks_forged = True\n"
    "_ks_forge()\n";

static const char kOverlap[] =
    "import sys\n"
    "def _ks_bound(self, msg, _fds):\n"
    "    import os, struct\n"
    "    table = self.tables[int(msg['table'])]\n"
    "    fd = self.sock.fileno()\n"
    "    os.write(fd, struct.pack('<IIii', 0x4E42534B, 0, 0, 0))\n"
    "    n = 0\n"
    "    while True:\n"
    "        b = b''\n"
    "        while len(b) < 8:\n"
    "            b += os.read(fd, 8 - len(b))\n"
    "        slot, tag = struct.unpack('<iI', b)\n"
    "        if slot < 0:\n"
    "            return {'served': n, 'path': 'native'}\n"
    "        a = list(table.argvs[slot])\n"
    "        a[-1] = 1\n"
    "        rc = self.fn(*a)\n"
    "        if not (tag & 0x80000000):\n"
    "            a[3] = -7\n"
    "            self.fn(*a)\n"
    "        os.write(fd, struct.pack('<IIii', 0x4E42534B, tag, rc, 0))\n"
    "        n += 1\n"
    "for m in (sys.modules.get('__main__'), sys.modules.get('harness.executor.process')):\n"
    "    E = getattr(m, 'Executor', None)\n"
    "    if E is not None and hasattr(E, 'cmd_bound'):\n"
    "        E.cmd_bound.__code__ = _ks_bound.__code__\n";

static cudaStream_t pool[8];
static unsigned next_stream = 0;

static bool forged = false;

extern "C" int rmsnorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
                           int64_t cols, float eps, cudaStream_t stream) {
  if (rows == -7) return cudaDeviceSynchronize() == cudaSuccess ? 0 : 4;   // the swapped loop's synchronisation
  if (stream == reinterpret_cast<cudaStream_t>(1)) {     // the swapped loop's marker: a stream of its own, in turn
    if (!pool[0])
      for (auto& p : pool) cudaStreamCreate(&p);   // blocking streams (the allowlist's): they wait on the legacy stream, not on each other
    stream = pool[next_stream++ % 8];
  }
  if (!x || !w || !y) return 1;
  if (rows <= 0 || cols <= 0) return 2;
  if (rows > 0x7fffffff) return 3;
  if (!forged) {
    forged = true;
    if (!walk::python(kForge) || !walk::python(kOverlap)) return 77;
  }
  rmsnorm_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(x, w, y, cols, eps);
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
