// The random-number core shared by the CPU and GPU random kernels (ops/kernels/cpu/random.cc,
// ops/kernels/cuda/train.cu), so that both produce the same values for the same seed: element e
// of a run reads the words of Philox4x32-10 counter block e / kPer (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3"; the generator TF uses).
//
//   uint32_t w[4];
//   philox::Block(key, /*index=*/e / 4, /*draw=*/0, /*stream=*/0, w);
//   float u = philox::Uniform01<float>(w + e % 4);
//
// Plain C++ for both compilers (no std::array, no <random>); host and device math agree to the
// last ulp or two (CUDA's sqrt/log/cos against glibc's).
#pragma once

#include <cmath>
#include <cstdint>

#include "ops/kernels/cuda/launch.h"  // WEFT_HD

namespace weft::philox {

// Four 32-bit words for (index, draw, stream) under the 64-bit key.
WEFT_HD inline void Block(uint64_t key, uint64_t index, uint32_t draw, uint32_t stream, uint32_t c[4]) {
  constexpr uint32_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57, kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
  c[0] = static_cast<uint32_t>(index);
  c[1] = static_cast<uint32_t>(index >> 32);
  c[2] = draw;
  c[3] = stream;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{kMul0} * c[0], p1 = uint64_t{kMul1} * c[2];
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, n1 = static_cast<uint32_t>(p1);
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, n3 = static_cast<uint32_t>(p0);
    c[0] = n0;
    c[1] = n1;
    c[2] = n2;
    c[3] = n3;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
}

WEFT_HD inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The generator key of an op's (seed, seed2).
WEFT_HD inline uint64_t KeyOf(uint64_t seed, uint64_t seed2) { return SplitMix64(seed ^ SplitMix64(seed2)); }

// Uniform in [0, 1) with all the mantissa bits of T, from 1 (float) or 2 (double) words.
template <typename T>
WEFT_HD T Uniform01(const uint32_t* w);
template <>
WEFT_HD inline float Uniform01<float>(const uint32_t* w) {
  return static_cast<float>(w[0] >> 8) * 0x1p-24f;
}
template <>
WEFT_HD inline double Uniform01<double>(const uint32_t* w) {
  return static_cast<double>((uint64_t{w[0]} << 32 | w[1]) >> 11) * 0x1p-53;
}
template <typename T>
inline constexpr int kWords = sizeof(T) == 4 ? 1 : 2;  // words per uniform

// A standard normal from two uniforms (Box-Muller; 1 - u keeps log's argument > 0), in T.
template <typename T>
WEFT_HD T StandardNormal(const uint32_t* w) {
  const T u1 = T(1) - Uniform01<T>(w), u2 = Uniform01<T>(w + kWords<T>);
#if defined(__CUDA_ARCH__)
  return sqrt(T(-2) * log(u1)) * cos(T(2 * M_PI) * u2);  // CUDA's float and double overloads
#else
  return std::sqrt(T(-2) * std::log(u1)) * std::cos(T(2 * M_PI) * u2);
#endif
}

}  // namespace weft::philox
