// Attention forward, bf16 in/out, fp32 accumulation, sm_90 (runs on any sm_80+).
//
// Baseline for the flash_attn_fwd task: a plain FlashAttention-2-style kernel.
//   - one thread block = 64 query rows of one (batch, head); 4 warps, 16 rows each;
//   - K/V streamed through shared memory in tiles of kBlockN keys (cp.async, zero-filled past Sk);
//   - S = Q K^T and O += P V with mma.sync m16n8k16 (bf16 in, fp32 accumulate);
//   - online softmax in fp32 registers (base-2 exponentials), P rounded to bf16 for the P V product;
//   - causal = top-left (key j visible to query i iff j <= i), tiles past the diagonal skipped.
// No wgmma, no TMA, no warp specialisation, no persistent scheduling: making it fast is the job.
//
// Layout: q[B,H,Sq,D], k/v[B,Hkv,Sk,D], o[B,H,Sq,D], contiguous; query head h reads kv head
// h / (H/Hkv). Pointers must be 16-byte aligned (PyTorch allocations are).

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kBlockM = kWarps * 16;  // query rows per block

template <int D>
struct Cfg {
  static constexpr int kBlockN = D <= 128 ? 64 : 32;  // keys per tile (D=256 keeps registers in check)
  static constexpr int kStride = D + 8;               // smem row pitch in bf16: +16 B avoids bank conflicts
  static constexpr int kSmemBytes = (kBlockM + 2 * kBlockN) * kStride * 2;
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte async copy global -> shared; when !pred nothing is read and the destination is zero-filled.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool pred) {
  int n = pred ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(n));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// d += a * b, m16n8k16, a row-major 16x16 bf16, b column-major 16x8 bf16, d 16x8 fp32.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// Copy `rows` rows of D bf16 (rows >= valid are zero-filled) from global (row pitch D) to smem.
template <int D>
__device__ __forceinline__ void load_tile(__nv_bfloat16* smem, const __nv_bfloat16* gmem, int rows, int valid) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  for (int c = threadIdx.x; c < rows * kChunks; c += kThreads) {
    int r = c / kChunks, col = (c % kChunks) * 8;
    bool ok = r < valid;
    const __nv_bfloat16* src = gmem + (ok ? (int64_t)r * D + col : 0);
    cp_async16(smem + r * Cfg<D>::kStride + col, src, ok);
  }
}

template <int D>
__global__ void __launch_bounds__(kThreads)
    flash_fwd_kernel(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                     const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o, int H, int Hkv,
                     int Sq, int Sk, int causal, float scale_log2) {
  constexpr int kBlockN = Cfg<D>::kBlockN;
  constexpr int kStride = Cfg<D>::kStride;
  constexpr int kNT = kBlockN / 8;  // 8-key column tiles of S
  constexpr int kDT = D / 8;        // 8-wide column tiles of O

  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16* sQ = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* sK = sQ + kBlockM * kStride;
  __nv_bfloat16* sV = sK + kBlockN * kStride;

  // Heaviest causal tiles first: they are the last query blocks.
  const int m_block = gridDim.x - 1 - blockIdx.x;
  const int h = blockIdx.y, b = blockIdx.z;
  const int hk = h / (H / Hkv);
  const int m0 = m_block * kBlockM;

  const __nv_bfloat16* qg = q + ((int64_t)(b * H + h) * Sq + m0) * D;
  const __nv_bfloat16* kg = k + (int64_t)(b * Hkv + hk) * Sk * D;
  const __nv_bfloat16* vg = v + (int64_t)(b * Hkv + hk) * Sk * D;
  __nv_bfloat16* og = o + ((int64_t)(b * H + h) * Sq + m0) * D;

  const int n_end = causal ? min(Sk, m0 + kBlockM) : Sk;  // keys past n_end are masked for every row
  const int n_tiles = (n_end + kBlockN - 1) / kBlockN;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;  // mma fragment coordinates: row group, thread in group
  // ldmatrix: lane supplies the address of row (lane % 8) of matrix (lane / 8).
  const int lm_r = lane % 8, lm_i = lane / 8;

  // Group 0: Q and K tile 0. Group 1: V tile 0.
  load_tile<D>(sQ, qg, kBlockM, Sq - m0);
  load_tile<D>(sK, kg, kBlockN, Sk);
  cp_async_commit();
  load_tile<D>(sV, vg, kBlockN, Sk);
  cp_async_commit();

  float acc_o[kDT][4];
#pragma unroll
  for (int i = 0; i < kDT; ++i) acc_o[i][0] = acc_o[i][1] = acc_o[i][2] = acc_o[i][3] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY};  // rows g and g + 8 of this warp, base-2 scaled
  float row_sum[2] = {0.f, 0.f};              // partial over this thread's columns

  const int row_lo = m0 + warp * 16 + g;  // absolute query index of this thread's first row

  for (int j = 0; j < n_tiles; ++j) {
    const int n0 = j * kBlockN;
    cp_async_wait<1>();  // Q and K tile j have landed (V tile j may still be in flight)
    __syncthreads();

    // ---- S = Q K^T (16 x kBlockN per warp) ----
    float s[kNT][4];
#pragma unroll
    for (int i = 0; i < kNT; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t a[4];
      // matrices: (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
      ldmatrix_x4(a, sQ + (warp * 16 + lm_r + (lm_i & 1) * 8) * kStride + kk * 16 + (lm_i >> 1) * 8);
#pragma unroll
      for (int nt = 0; nt < kNT; nt += 2) {
        uint32_t bk[4];
        // matrices: (keys 0-7, k 0-7), (keys 0-7, k 8-15), (keys 8-15, k 0-7), (keys 8-15, k 8-15)
        ldmatrix_x4(bk, sK + (nt * 8 + lm_r + (lm_i >> 1) * 8) * kStride + kk * 16 + (lm_i & 1) * 8);
        mma_bf16(s[nt], a, bk[0], bk[1]);
        mma_bf16(s[nt + 1], a, bk[2], bk[3]);
      }
    }
    __syncthreads();  // every warp is done with sK
    if (j + 1 < n_tiles) load_tile<D>(sK, kg + (int64_t)(n0 + kBlockN) * D, kBlockN, Sk - n0 - kBlockN);
    cp_async_commit();

    // ---- mask, online softmax ----
    const bool need_mask = (n0 + kBlockN > Sk) || (causal && n0 + kBlockN - 1 > m0);
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[nt][e] * scale_log2;
        if (need_mask) {
          int col = n0 + nt * 8 + 2 * t + (e & 1);
          int row = row_lo + (e >> 1) * 8;
          if (col >= Sk || (causal && col > row)) x = -INFINITY;
        }
        s[nt][e] = x;
      }
    }
    float scale_o[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = row_max[r];
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // A row with every key masked so far keeps max -inf: subtract 0 instead to avoid inf - inf.
      const float base = mx == -INFINITY ? 0.f : mx;
      scale_o[r] = exp2f(row_max[r] - base);
      row_max[r] = mx;
      float sum = 0.f;
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
        s[nt][2 * r] = exp2f(s[nt][2 * r] - base);
        s[nt][2 * r + 1] = exp2f(s[nt][2 * r + 1] - base);
        sum += s[nt][2 * r] + s[nt][2 * r + 1];
      }
      row_sum[r] = row_sum[r] * scale_o[r] + sum;
    }
#pragma unroll
    for (int i = 0; i < kDT; ++i) {
      acc_o[i][0] *= scale_o[0];
      acc_o[i][1] *= scale_o[0];
      acc_o[i][2] *= scale_o[1];
      acc_o[i][3] *= scale_o[1];
    }

    cp_async_wait<1>();  // V tile j has landed (K tile j+1 may still be in flight)
    __syncthreads();

    // ---- O += P V ----
#pragma unroll
    for (int kc = 0; kc < kBlockN / 16; ++kc) {
      // The S accumulators of column tiles 2kc, 2kc+1 are exactly the A fragment of P for keys 16kc..16kc+15.
      uint32_t a[4];
      a[0] = pack_bf16(s[2 * kc][0], s[2 * kc][1]);
      a[1] = pack_bf16(s[2 * kc][2], s[2 * kc][3]);
      a[2] = pack_bf16(s[2 * kc + 1][0], s[2 * kc + 1][1]);
      a[3] = pack_bf16(s[2 * kc + 1][2], s[2 * kc + 1][3]);
#pragma unroll
      for (int dt = 0; dt < kDT; dt += 2) {
        uint32_t bv[4];
        // transposed matrices: (keys 0-7, d 0-7), (keys 8-15, d 0-7), (keys 0-7, d 8-15), (keys 8-15, d 8-15)
        ldmatrix_x4_trans(bv, sV + (kc * 16 + lm_r + (lm_i & 1) * 8) * kStride + dt * 8 + (lm_i >> 1) * 8);
        mma_bf16(acc_o[dt], a, bv[0], bv[1]);
        mma_bf16(acc_o[dt + 1], a, bv[2], bv[3]);
      }
    }
    __syncthreads();  // every warp is done with sV
    if (j + 1 < n_tiles) load_tile<D>(sV, vg + (int64_t)(n0 + kBlockN) * D, kBlockN, Sk - n0 - kBlockN);
    cp_async_commit();
  }
  cp_async_wait<0>();

  // ---- normalise and store ----
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float l = row_sum[r];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    inv[r] = l > 0.f ? 1.f / l : 0.f;
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = warp * 16 + g + r * 8;
    if (m0 + row >= Sq) continue;
    __nv_bfloat16* dst = og + (int64_t)row * D + 2 * t;
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt) {
      *reinterpret_cast<__nv_bfloat162*>(dst + dt * 8) =
          __floats2bfloat162_rn(acc_o[dt][2 * r] * inv[r], acc_o[dt][2 * r + 1] * inv[r]);
    }
  }
}

template <int D>
int launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
           int64_t B, int64_t H, int64_t Hkv, int64_t Sq, int64_t Sk, int causal, float scale,
           cudaStream_t stream) {
  // Raising the dynamic shared-memory limit is a host-side attribute: once per instantiation.
  static bool configured = false;
  if (!configured) {
    if (cudaFuncSetAttribute(flash_fwd_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             Cfg<D>::kSmemBytes) != cudaSuccess)
      return 10;
    configured = true;
  }
  dim3 grid((unsigned)((Sq + kBlockM - 1) / kBlockM), (unsigned)H, (unsigned)B);
  const float scale_log2 = scale * 1.4426950408889634f;  // softmax via exp2
  flash_fwd_kernel<D><<<grid, kThreads, Cfg<D>::kSmemBytes, stream>>>(q, k, v, o, (int)H, (int)Hkv, (int)Sq,
                                                                       (int)Sk, causal, scale_log2);
  return cudaGetLastError() == cudaSuccess ? 0 : 11;
}

}  // namespace

extern "C" int flash_attn_fwd(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                              __nv_bfloat16* o, int64_t B, int64_t H, int64_t Hkv, int64_t Sq, int64_t Sk,
                              int64_t D, int32_t causal, float scale, cudaStream_t stream) {
  if (!q || !k || !v || !o) return 1;
  if (B <= 0 || H <= 0 || Hkv <= 0 || Sq <= 0 || Sk <= 0) return 2;
  if (H % Hkv != 0) return 3;
  if (B > 65535 || H > 65535 || Sq > (int64_t)1 << 30 || Sk > (int64_t)1 << 30 || B * H > ((int64_t)1 << 31) - 1)
    return 4;
  if (((uintptr_t)q | (uintptr_t)k | (uintptr_t)v | (uintptr_t)o) % 16 != 0) return 5;
  const int c = causal ? 1 : 0;
  switch (D) {
    case 64: return launch<64>(q, k, v, o, B, H, Hkv, Sq, Sk, c, scale, stream);
    case 96: return launch<96>(q, k, v, o, B, H, Hkv, Sq, Sk, c, scale, stream);
    case 128: return launch<128>(q, k, v, o, B, H, Hkv, Sq, Sk, c, scale, stream);
    case 256: return launch<256>(q, k, v, o, B, H, Hkv, Sq, Sk, c, scale, stream);
    default: return 6;
  }
}
