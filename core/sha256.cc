#include "core/sha256.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace weft {
namespace {

constexpr uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr uint32_t kInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

inline uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

inline uint32_t LoadBigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

using BlockFn = void (*)(uint32_t*, const uint8_t*, size_t);

BlockFn ChooseBlocks() { return Sha256HardwareAvailable() ? &Sha256BlocksHardware : &Sha256BlocksPortable; }

void Blocks(uint32_t state[8], const uint8_t* blocks, size_t n) {
  static const BlockFn fn = ChooseBlocks();
  fn(state, blocks, n);
}

}  // namespace

void Sha256BlocksPortable(uint32_t state[8], const uint8_t* p, size_t num_blocks) {
  for (; num_blocks > 0; --num_blocks, p += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) w[i] = LoadBigEndian32(p + 4 * i);
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 = h + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[i] + w[i];
      const uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#if defined(__x86_64__)
bool Sha256HardwareAvailable() {
  static const bool available = [] {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const bool ssse3_sse41 = (c & bit_SSSE3) != 0 && (c & bit_SSE4_1) != 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return ssse3_sse41 && (b & bit_SHA) != 0;
  }();
  return available;
}

// The SHA extensions: sha256rnds2 does two rounds on the state held as (ABEF, CDGH);
// sha256msg1/msg2 extend the message schedule four words at a time (Intel's "Intel SHA
// Extensions" paper, section 4).
__attribute__((target("sha,sse4.1,ssse3"))) void Sha256BlocksHardware(uint32_t state[8], const uint8_t* p,
                                                                        size_t num_blocks) {
  const __m128i kShuffle = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0]));      // DCBA
  __m128i state1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4]));   // HGFE
  tmp = _mm_shuffle_epi32(tmp, 0xB1);                                              // CDAB
  state1 = _mm_shuffle_epi32(state1, 0x1B);                                        // EFGH
  __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);                                // ABEF
  state1 = _mm_blend_epi16(state1, tmp, 0xF0);                                     // CDGH
  for (; num_blocks > 0; --num_blocks, p += 64) {
    const __m128i abef_save = state0, cdgh_save = state1;
    __m128i msg[4];
    for (int i = 0; i < 4; ++i) {
      msg[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), kShuffle);
    }
    // 16 groups of four rounds; group g uses schedule words W[4g..4g+3], held in msg[g % 4].
    for (int g = 0; g < 16; ++g) {
      const __m128i m = msg[g % 4];
      __m128i k = _mm_add_epi32(m, _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kK[4 * g])));
      state1 = _mm_sha256rnds2_epu32(state1, state0, k);
      k = _mm_shuffle_epi32(k, 0x0E);
      state0 = _mm_sha256rnds2_epu32(state0, state1, k);
      // Finish the next group's words: msg[(g + 1) % 4] holds msg1(W[4g-12..], W[4g-8..]); add
      // W[4g-3..4g] (from this group and the one before) and apply msg2 with this group's words.
      if (g >= 3 && g <= 14) {
        __m128i& next = msg[(g + 1) % 4];
        next = _mm_add_epi32(next, _mm_alignr_epi8(m, msg[(g + 3) % 4], 4));
        next = _mm_sha256msg2_epu32(next, m);
      }
      // Start the words four groups ahead in the previous group's slot (after its use above).
      if (g >= 1 && g <= 12) msg[(g + 3) % 4] = _mm_sha256msg1_epu32(msg[(g + 3) % 4], m);
    }
    state0 = _mm_add_epi32(state0, abef_save);
    state1 = _mm_add_epi32(state1, cdgh_save);
  }
  tmp = _mm_shuffle_epi32(state0, 0x1B);        // FEBA
  state1 = _mm_shuffle_epi32(state1, 0xB1);     // DCHG
  state0 = _mm_blend_epi16(tmp, state1, 0xF0);  // DCBA
  state1 = _mm_alignr_epi8(state1, tmp, 8);     // ABEF -> HGFE
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), state0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), state1);
}
#else
bool Sha256HardwareAvailable() { return false; }
void Sha256BlocksHardware(uint32_t state[8], const uint8_t* p, size_t num_blocks) {
  Sha256BlocksPortable(state, p, num_blocks);
}
#endif

Sha256::Sha256() { std::memcpy(state_, kInit, sizeof(state_)); }

void Sha256::Update(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  total_ += n;
  if (block_used_ > 0) {
    const size_t take = std::min(n, 64 - block_used_);
    std::memcpy(block_ + block_used_, p, take);
    block_used_ += take;
    p += take;
    n -= take;
    if (block_used_ < 64) return;
    Blocks(state_, block_, 1);
    block_used_ = 0;
  }
  if (n >= 64) {
    Blocks(state_, p, n / 64);
    p += n / 64 * 64;
    n %= 64;
  }
  std::memcpy(block_, p, n);
  block_used_ = n;
}

Sha256Digest Sha256::Final() {
  const uint64_t bits = total_ * 8;
  block_[block_used_++] = 0x80;
  if (block_used_ > 56) {
    std::memset(block_ + block_used_, 0, 64 - block_used_);
    Blocks(state_, block_, 1);
    block_used_ = 0;
  }
  std::memset(block_ + block_used_, 0, 56 - block_used_);
  for (int i = 0; i < 8; ++i) block_[56 + i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  Blocks(state_, block_, 1);
  Sha256Digest out;
  for (int i = 0; i < 8; ++i) {
    out[4 * i] = static_cast<uint8_t>(state_[i] >> 24);
    out[4 * i + 1] = static_cast<uint8_t>(state_[i] >> 16);
    out[4 * i + 2] = static_cast<uint8_t>(state_[i] >> 8);
    out[4 * i + 3] = static_cast<uint8_t>(state_[i]);
  }
  return out;
}

Sha256Digest Sha256Hash(const void* data, size_t n) {
  Sha256 h;
  h.Update(data, n);
  return h.Final();
}

HmacSha256::HmacSha256(std::string_view key) {
  uint8_t k[64] = {};
  if (key.size() > 64) {  // RFC 2104: longer keys are hashed first
    const Sha256Digest d = Sha256Hash(key);
    std::memcpy(k, d.data(), d.size());
  } else {
    std::memcpy(k, key.data(), key.size());
  }
  uint8_t pad[64];
  for (int i = 0; i < 64; ++i) pad[i] = k[i] ^ 0x36;
  inner_.Update(pad, 64);
  for (int i = 0; i < 64; ++i) pad[i] = k[i] ^ 0x5c;
  outer_.Update(pad, 64);
}

Sha256Digest HmacSha256::Compute(std::initializer_list<std::string_view> parts) const {
  Sha256 inner = inner_;
  for (std::string_view part : parts) inner.Update(part);
  const Sha256Digest inner_digest = inner.Final();
  Sha256 outer = outer_;
  outer.Update(inner_digest.data(), inner_digest.size());
  return outer.Final();
}

uint64_t HmacSha256::Finish64(Sha256 inner) const {
  const Sha256Digest inner_digest = inner.Final();
  Sha256 outer = outer_;
  outer.Update(inner_digest.data(), inner_digest.size());
  const Sha256Digest d = outer.Final();
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | d[i];
  return v;
}

uint64_t HmacSha256::Compute64(std::initializer_list<std::string_view> parts) const {
  const Sha256Digest d = Compute(parts);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | d[i];
  return v;
}

bool ConstantTimeEqual(const void* a, const void* b, size_t n) {
  const auto* x = static_cast<const volatile uint8_t*>(a);
  const auto* y = static_cast<const volatile uint8_t*>(b);
  uint8_t diff = 0;
  for (size_t i = 0; i < n; ++i) diff |= x[i] ^ y[i];
  return diff == 0;
}

std::string HexString(const void* data, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto* p = static_cast<const uint8_t*>(data);
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[p[i] >> 4];
    out[2 * i + 1] = kHex[p[i] & 15];
  }
  return out;
}

}  // namespace weft
