// One CTA's tile of C = A * B^T with CuTe: cp.async copies of A's and B's K-major tiles into shared
// memory, SM80 tensor-core MMAs (16x8x16, fp16 in, fp32 accumulate) by 2 x 2 warps, fp16 stores.
// One shared-memory stage: simple rather than fast (the agent's room to improve).
#pragma once
#include <cute/tensor.hpp>

namespace gemm_cute {

using namespace cute;

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kThreads = 128;
// K-major tiles, each row padded by 8 halves: rows stay 16-byte aligned, banks spread a little.
using SmemLayoutA = Layout<Shape<Int<kBlockM>, Int<kBlockK>>, Stride<Int<kBlockK + 8>, _1>>;
using SmemLayoutB = Layout<Shape<Int<kBlockN>, Int<kBlockK>>, Stride<Int<kBlockK + 8>, _1>>;

// 128 threads as 32 x 4, each copying 8 consecutive halves (16 bytes) of a row per step.
using G2SCopy = decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, half_t>{},
                                         Layout<Shape<_32, _4>, Stride<_4, _1>>{},
                                         Layout<Shape<_1, _8>>{}));
using Mma = decltype(make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2, _2, _1>>{},
                                    Tile<_32, _32, _16>{}));

__global__ void __launch_bounds__(kThreads)
gemm_tile_kernel(half_t const* A, half_t const* B, half_t* C, int M, int N, int K) {
  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, Int<1>{}));
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(K, Int<1>{}));
  Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(N, Int<1>{}));

  auto tiler = make_shape(Int<kBlockM>{}, Int<kBlockN>{}, Int<kBlockK>{});
  auto coord = make_coord(blockIdx.x, blockIdx.y, _);
  Tensor gA = local_tile(mA, tiler, coord, Step<_1, X, _1>{});   // (BM, BK, k)
  Tensor gB = local_tile(mB, tiler, coord, Step<X, _1, _1>{});   // (BN, BK, k)
  Tensor gC = local_tile(mC, tiler, coord, Step<_1, _1, X>{});   // (BM, BN)

  __shared__ alignas(16) half_t smem_a[cosize_v<SmemLayoutA>];
  __shared__ alignas(16) half_t smem_b[cosize_v<SmemLayoutB>];
  Tensor sA = make_tensor(make_smem_ptr(smem_a), SmemLayoutA{});
  Tensor sB = make_tensor(make_smem_ptr(smem_b), SmemLayoutB{});

  G2SCopy g2s;
  ThrCopy thr_copy = g2s.get_slice(threadIdx.x);
  Tensor tAgA = thr_copy.partition_S(gA);   // (CPY, CPY_M, CPY_K, k)
  Tensor tAsA = thr_copy.partition_D(sA);   // (CPY, CPY_M, CPY_K)
  Tensor tBgB = thr_copy.partition_S(gB);
  Tensor tBsB = thr_copy.partition_D(sB);

  Mma mma;
  ThrMMA thr_mma = mma.get_slice(threadIdx.x);
  Tensor tCsA = thr_mma.partition_A(sA);    // (MMA, MMA_M, MMA_K)
  Tensor tCsB = thr_mma.partition_B(sB);    // (MMA, MMA_N, MMA_K)
  Tensor tCgC = thr_mma.partition_C(gC);    // (MMA, MMA_M, MMA_N)
  Tensor tCrA = thr_mma.make_fragment_A(tCsA);
  Tensor tCrB = thr_mma.make_fragment_B(tCsB);
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);

  int k_tiles = size<3>(tAgA);
  for (int kt = 0; kt < k_tiles; ++kt) {
    copy(g2s, tAgA(_, _, _, kt), tAsA);
    copy(g2s, tBgB(_, _, _, kt), tBsB);
    cp_async_fence();
    cp_async_wait<0>();
    __syncthreads();
    copy(tCsA, tCrA);
    copy(tCsB, tCrB);
    gemm(mma, tCrA, tCrB, tCrC);
    __syncthreads();
  }

  CUTE_UNROLL
  for (int i = 0; i < size(tCrC); ++i) {
    tCgC(i) = static_cast<half_t>(tCrC(i));
  }
}

}  // namespace gemm_cute
