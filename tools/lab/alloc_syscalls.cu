// The stream-ordered allocator under the executor's seccomp filter (issue 39): which system calls do
// cudaMallocAsync / cudaFreeAsync on a stream make once CUDA is up, and which of them does the
// filter refuse? Loaded by tools/lab/alloc_syscalls.py into a fresh Python process, which
// installs the executor's own filter with every "kill" turned into SECCOMP_RET_TRAP: each refused
// call then raises SIGSYS instead of killing the process, and the handler below writes down its
// number, its six arguments and, for open/openat, the path; the call returns -EPERM and the process
// goes on, so every refused call of a step is listed, not only the first.
#include <cuda_runtime.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

namespace {

char log_buf[1 << 16];
volatile size_t log_used = 0;

// Each piece also straight to stderr (write(2) is async-signal-safe and allowed by the filter), so that
// what was found survives a process that the refused calls' failures bring down.
void put(const char* s) {
  size_t n = strnlen(s, 512);
  ssize_t ignored = write(2, s, n);
  (void)ignored;
  if (log_used + n + 1 < sizeof log_buf) {
    memcpy(log_buf + log_used, s, n);
    log_used += n;
    log_buf[log_used] = 0;
  }
}

void put_u(uint64_t v, int base) {
  char tmp[32];
  int i = 31;
  tmp[i] = 0;
  if (v == 0) tmp[--i] = '0';
  while (v && i > 0) {
    int d = (int)(v % base);
    tmp[--i] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    v /= base;
  }
  if (base == 16) put("0x");
  put(tmp + i);
}

void on_sigsys(int, siginfo_t* si, void* ucv) {
  ucontext_t* uc = static_cast<ucontext_t*>(ucv);
  greg_t* r = uc->uc_mcontext.gregs;
  const greg_t args[6] = {r[REG_RDI], r[REG_RSI], r[REG_RDX], r[REG_R10], r[REG_R8], r[REG_R9]};
  put("  trapped nr=");
  put_u((uint64_t)si->si_syscall, 10);
  put(" args=");
  for (int i = 0; i < 6; ++i) {
    put_u((uint64_t)args[i], 16);
    put(i < 5 ? "," : "");
  }
  const char* path = nullptr;
  if (si->si_syscall == 2) path = reinterpret_cast<const char*>(args[0]);     // open(path, flags)
  if (si->si_syscall == 257) path = reinterpret_cast<const char*>(args[1]);   // openat(dirfd, path, flags)
  if (path) {
    put(" path=");
    char p[200];
    size_t i = 0;
    for (; i + 1 < sizeof p && path[i]; ++i) p[i] = path[i];
    p[i] = 0;
    put(p);
  }
  put("\n");
  r[REG_RAX] = -EPERM;   // the call did not run: it fails, and the caller goes on
}

cudaStream_t stream = nullptr;

void put_err(const char* what, cudaError_t e) {
  put("  ");
  put(what);
  put(": ");
  put(e == cudaSuccess ? "ok" : cudaGetErrorString(e));
  put("\n");
}

}  // namespace

extern "C" int probe_setup() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSYS, &sa, nullptr) != 0) return 1;
  if (cudaFree(nullptr) != cudaSuccess) return 2;
  if (cudaStreamCreate(&stream) != cudaSuccess) return 3;
  return 0;
}

// Before the filter: the device's default pool made and used once (`bytes`), and with keep=1 its
// release threshold raised so that it keeps what it reserved between synchronisations.
extern "C" int probe_prewarm(size_t bytes, int keep) {
  put("prewarm\n");
  if (keep) {
    cudaMemPool_t pool;
    int dev = 0;
    cudaGetDevice(&dev);
    put_err("cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, dev));
    uint64_t threshold = UINT64_MAX;
    put_err("cudaMemPoolSetAttribute(release threshold)",
            cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  }
  void* p = nullptr;
  put_err("cudaMallocAsync", cudaMallocAsync(&p, bytes, stream));
  put_err("cudaFreeAsync", cudaFreeAsync(p, stream));
  put_err("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  return 0;
}

// Under the filter: one workspace of `bytes` taken, written, given back, the stream synchronised.
extern "C" int probe_step(size_t bytes) {
  put("step ");
  put_u(bytes, 10);
  put(" bytes\n");
  void* p = nullptr;
  cudaError_t a = cudaMallocAsync(&p, bytes, stream);
  put_err("cudaMallocAsync", a);
  if (a == cudaSuccess) {
    put_err("cudaMemsetAsync", cudaMemsetAsync(p, 1, bytes, stream));
    put_err("cudaFreeAsync", cudaFreeAsync(p, stream));
  }
  cudaError_t s = cudaStreamSynchronize(stream);
  put_err("cudaStreamSynchronize", s);
  cudaGetLastError();
  return a == cudaSuccess && s == cudaSuccess ? 0 : 1;
}

extern "C" const char* probe_log() { return log_buf; }
