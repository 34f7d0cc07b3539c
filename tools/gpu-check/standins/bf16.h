// bf16 <-> float for the CPU stand-ins (round to nearest even).
#include <cstdint>
#include <cstring>
#include <cmath>
static inline float bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static inline uint16_t f2bf(float f) { uint32_t u; memcpy(&u, &f, 4); if (std::isnan(f)) return 0x7fc0; u += 0x7fff + ((u >> 16) & 1); return (uint16_t)(u >> 16); }
