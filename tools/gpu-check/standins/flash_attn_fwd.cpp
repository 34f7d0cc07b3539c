// CPU stand-in of flash_attn_fwd for check.py --device cpu (small scenarios only: naive loops).
// CPU stand-in mimicking the GPU baseline's numerics: fp32 scores, online softmax over 64-key tiles,
// P rounded to bf16, fp32 accumulation, row sum from fp32 p.
#include "bf16.h"
#include <vector>
#include <algorithm>
extern "C" int flash_attn_fwd(const uint16_t* q, const uint16_t* k, const uint16_t* v, uint16_t* o, int64_t B, int64_t H,
    int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D, int32_t causal, float scale, void*) {
  const int BN = D <= 128 ? 64 : 32; const float sl2 = scale * 1.4426950408889634f;
  std::vector<float> acc(D), s(BN);
  for (int64_t b = 0; b < B; ++b) for (int64_t h = 0; h < H; ++h) {
    int64_t hk = h / (H / Hkv);
    const uint16_t* kb = k + (b*Hkv+hk)*Sk*D; const uint16_t* vb = v + (b*Hkv+hk)*Sk*D;
    for (int64_t i = 0; i < Sq; ++i) {
      const uint16_t* qi = q + ((b*H+h)*Sq+i)*D;
      float m = -INFINITY, l = 0; std::fill(acc.begin(), acc.end(), 0.f);
      int64_t n_end = causal ? std::min<int64_t>(Sk, (i/64+1)*64) : Sk;
      for (int64_t n0 = 0; n0 < n_end; n0 += BN) {
        float mx = m;
        for (int j = 0; j < BN; ++j) { int64_t key = n0 + j; float x = -INFINITY;
          if (key < Sk && !(causal && key > i)) { float d = 0; for (int64_t c = 0; c < D; ++c) d += bf2f(qi[c]) * bf2f(kb[key*D+c]); x = d * sl2; }
          s[j] = x; mx = std::max(mx, x); }
        float base = mx == -INFINITY ? 0.f : mx, al = std::exp2(m - base); m = mx; l *= al;
        for (auto& a : acc) a *= al;
        for (int j = 0; j < BN; ++j) { float p = std::exp2(s[j] - base); l += p; if (p == 0) continue;
          float pb = bf2f(f2bf(p)); for (int64_t c = 0; c < D; ++c) acc[c] += pb * bf2f(vb[(n0+j)*D+c]); }
      }
      for (int64_t c = 0; c < D; ++c) o[((b*H+h)*Sq+i)*D+c] = f2bf(acc[c] / l);
    }
  }
  return 0;
}
