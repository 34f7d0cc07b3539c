"""What a process's layout does to the time of identical code (the reason for harness/native/batch.c's
per-call layout draws), measured outside the harness.

    python3 -m tools.lab.layout_probe [--task-dir kernels/cpu_softmax] [--scenario rows=256,cols=1024]
                                      [--processes 6] [--rounds 60]

Builds the task's baseline (a cpu task whose entry point takes (x, y, rows, cols)) as the harness
does, and a small C driver that loads it and calls it on 12 buffers in turn, each call after the
buffer's lines are flushed and 8 MiB are written over the caches, timing each call by the thread's
CPU clock. Each line it prints is one process: the median over its buffers of each buffer's median.
It runs the driver in three ways:

1. ASLR off (setarch -R), the environment longer by 0 to 4 KiB from one process to the next: only
   the stack's place moves;
2. ASLR on, one process after another: stack, libraries and buffers placed anew each time;
each of them also with every call through one of 8 copies of the library drawn at random, on a
stack shifted by a random 16-4096 bytes (what the executor's batch loop does).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

DRIVER = r"""
#define _GNU_SOURCE
#include <alloca.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

typedef int (*fn_t)(const float *, float *, int64_t, int64_t);
static double cpu_ns(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

__attribute__((noinline)) static int shifted(fn_t f, size_t shift, const float *x, float *y, int64_t r, int64_t c) {
  volatile char *pad = alloca(shift);
  pad[0] = 0;
  return f(x, y, r, c);
}

int main(int argc, char **argv) {
  /* argv: rows cols rounds randomize lib [copies...] */
  int64_t rows = atoll(argv[1]), cols = atoll(argv[2]);
  int rounds = atoi(argv[3]), randomize = atoi(argv[4]), nfn = argc - 5, nb = 12;
  fn_t fns[16];
  for (int k = 0; k < nfn && k < 16; k++) {
    void *h = dlopen(argv[5 + k], RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    fns[k] = (fn_t)dlsym(h, "softmax_rows");
  }
  size_t n = (size_t)(rows * cols), bytes = 2 * n * sizeof(float);
  float *in = malloc(n * sizeof(float)), *buf[12];
  char *junk = malloc(8 << 20);
  for (int i = 0; i < nb; i++) {
    int fd = memfd_create("probe", 0);
    if (ftruncate(fd, bytes)) return 1;
    buf[i] = mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  }
  double *t = malloc(sizeof(double) * nb * rounds), med[12];
  srand(getpid());
  for (int r = 0; r < rounds; r++) {
    for (size_t i = 0; i < n; i++) in[i] = (rand() % 1000) / 100.0f + (float)((i / cols) % 7) * 10.0f;
    for (int i = 0; i < nb; i++) {
      memcpy(buf[i], in, n * sizeof(float));
      for (size_t o = 0; o < bytes; o += 64) _mm_clflush((char *)buf[i] + o);
      _mm_mfence();
      memset(junk, r, 8 << 20);
      fn_t f = fns[randomize ? rand() % nfn : 0];
      size_t shift = randomize ? 16 * (1 + rand() % 256) : 16;
      double t0 = cpu_ns();
      shifted(f, shift, buf[i], buf[i] + n, rows, cols);
      t[i * rounds + r] = cpu_ns() - t0;
    }
  }
  for (int i = 0; i < nb; i++) { qsort(t + i * rounds, rounds, sizeof(double), cmp); med[i] = t[i * rounds + rounds / 2]; }
  qsort(med, nb, sizeof(double), cmp);
  printf("%.4f\n", (med[nb / 2 - 1] + med[nb / 2]) / 2e6);
  return 0;
}
"""


def build(workdir, task_dir):
    from harness.build.compile import build as harness_build
    from harness.task.model import load_task
    task = load_task(task_dir)
    lib = os.path.join(workdir, "kernel.so")
    # Built as an evaluation builds the baseline (harness/build/compile.py: its flags, its sandbox).
    b = harness_build(task, task.baseline.read_bytes(), os.path.join(workdir, "cache"), namespace="baseline")
    if not b.ok:
        raise SystemExit(f"layout_probe: the baseline did not build: {b.log[-400:]}")
    b.write_library(lib)
    copies = [lib]
    for k in range(1, 8):
        copies.append(os.path.join(workdir, f"kernel{k}.so"))
        shutil.copyfile(lib, copies[-1])
    src, exe = os.path.join(workdir, "probe.c"), os.path.join(workdir, "probe")
    with open(src, "w") as fh:
        fh.write(DRIVER)
    subprocess.run([shutil.which("cc") or "gcc", "-O2", "-o", exe, src, "-ldl"], check=True)
    return exe, copies


def run(exe, libs, rows, cols, rounds, randomize, aslr=True, env_pad=0):
    env = dict(os.environ, PROBE_PAD="x" * env_pad)
    argv = [exe, str(rows), str(cols), str(rounds), "1" if randomize else "0", *libs]
    if not aslr:
        argv = ["setarch", os.uname().machine, "-R", *argv]
    out = subprocess.run(["taskset", "-c", "0", *argv], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m tools.lab.layout_probe", description=__doc__.split("\n\n")[0])
    ap.add_argument("--task-dir", default="kernels/cpu_softmax")
    ap.add_argument("--scenario", default="rows=256,cols=1024")
    ap.add_argument("--processes", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args(argv)
    params = dict(kv.split("=") for kv in args.scenario.split(","))
    rows, cols = int(params["rows"]), int(params["cols"])
    with tempfile.TemporaryDirectory(prefix="layout-probe-") as workdir:
        exe, libs = build(workdir, args.task_dir)
        print(f"{os.path.basename(args.task_dir.rstrip('/'))} baseline, rows={rows} cols={cols}: ms a call, "
              f"the median over 12 buffers of each one's median of {args.rounds} calls; one figure a process")

        def line(label, xs):
            print(f"  {label:<52} {' '.join(f'{x:.3f}' for x in xs)}   "
                  f"(range {100 * (max(xs) / min(xs) - 1):.1f} %)")
        have_setarch = shutil.which("setarch") is not None
        pads = range(0, 4096, 4096 // args.processes)
        where = "ASLR off, the environment" if have_setarch else "(no setarch: ASLR on) the environment"
        line(f"{where} 0-4 KiB longer (the stack moves)",
             [run(exe, libs[:1], rows, cols, args.rounds, False, aslr=not have_setarch, env_pad=p) for p in pads])
        line("the same, each call: 1 of 8 copies, stack shifted",
             [run(exe, libs, rows, cols, args.rounds, True, aslr=not have_setarch, env_pad=p) for p in pads])
        line("ASLR on, one process after another",
             [run(exe, libs[:1], rows, cols, args.rounds, False) for _ in pads])
        line("the same, each call: 1 of 8 copies, stack shifted",
             [run(exe, libs, rows, cols, args.rounds, True) for _ in pads])
    return 0


if __name__ == "__main__":
    sys.exit(main())
