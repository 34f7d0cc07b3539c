"""Measure one CPU core's ceilings for a cpu task's `peak`: fp32 FMA throughput and copy bandwidth.

    /usr/bin/python3 -m tools.lab.cpu_peak

Compiles a small C++ benchmark with -O3 -march=native (the hardware's ceiling, not what the task's
default flags reach) and prints the best of several runs as task.yaml `peak` values.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = r"""
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <immintrin.h>

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Ten independent accumulators cover the FMA latency on two FMA ports.
static double fma_gflops(long iters) {
  __m256 a[10], b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int k = 0; k < 10; ++k) a[k] = _mm256_set1_ps(1.0f + k);
  double t0 = now();
  for (long i = 0; i < iters; ++i)
    for (int k = 0; k < 10; ++k) a[k] = _mm256_fmadd_ps(a[k], b, c);
  double t = now() - t0;
  float sink = 0; for (int k = 0; k < 10; ++k) sink += _mm256_cvtss_f32(a[k]);
  if (sink == 12345.f) std::printf("#");
  return iters * 10.0 * 8 * 2 / t / 1e9;
}

static double copy_gbps(size_t bytes) {
  char* src = (char*)std::malloc(bytes); char* dst = (char*)std::malloc(bytes);
  std::memset(src, 1, bytes); std::memset(dst, 2, bytes);
  double best = 0;
  for (int r = 0; r < 5; ++r) {
    double t0 = now(); std::memcpy(dst, src, bytes); double t = now() - t0;
    if (2.0 * bytes / t / 1e9 > best) best = 2.0 * bytes / t / 1e9;  // bytes read + written
  }
  std::free(src); std::free(dst);
  return best;
}

int main() {
  double f = 0; for (int r = 0; r < 5; ++r) { double g = fma_gflops(50000000); if (g > f) f = g; }
  std::printf("{\"fma_gflops\": %.2f, \"copy_gbps\": %.2f}\n", f, copy_gbps(size_t(512) << 20));
}
"""


def main():
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "peak.cpp", Path(tmp) / "peak"
        src.write_text(SOURCE)
        subprocess.run(["g++", "-O3", "-march=native", "-o", str(exe), str(src)], check=True)
        figures = json.loads(subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout)
    print(json.dumps(figures))
    print(f"peak: {{tflops: {figures['fma_gflops'] / 1000:.4f}, gbps: {figures['copy_gbps']:.1f}}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
