#include "core/siphash.h"

#include <bit>
#include <cstring>

#include "core/status.h"

namespace weft {
namespace {

inline uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

inline void SipRound(uint64_t v[4]) {
  v[0] += v[1];
  v[1] = Rotl(v[1], 13);
  v[1] ^= v[0];
  v[0] = Rotl(v[0], 32);
  v[2] += v[3];
  v[3] = Rotl(v[3], 16);
  v[3] ^= v[2];
  v[0] += v[3];
  v[3] = Rotl(v[3], 21);
  v[3] ^= v[0];
  v[2] += v[1];
  v[1] = Rotl(v[1], 17);
  v[1] ^= v[2];
  v[2] = Rotl(v[2], 32);
}

// Two compression rounds per 8-byte word (the "2" of SipHash-2-4).
inline void Absorb(uint64_t v[4], uint64_t m) {
  v[3] ^= m;
  SipRound(v);
  SipRound(v);
  v[0] ^= m;
}

inline uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t m;
  std::memcpy(&m, p, sizeof(m));
  if constexpr (std::endian::native == std::endian::big) m = __builtin_bswap64(m);
  return m;
}

}  // namespace

SipHash24::SipHash24(std::string_view key) {
  WEFT_REQUIRE(key.size() == kKeyBytes, "SipHash24: a key of {} bytes (it takes {})", key.size(), kKeyBytes);
  k0_ = LoadLittleEndian64(reinterpret_cast<const uint8_t*>(key.data()));
  k1_ = LoadLittleEndian64(reinterpret_cast<const uint8_t*>(key.data()) + 8);
}

SipHash24::Stream SipHash24::Begin() const {
  Stream s;
  s.v_[0] = k0_ ^ 0x736f6d6570736575ULL;  // "somepseudorandomlygeneratedbytes"
  s.v_[1] = k1_ ^ 0x646f72616e646f6dULL;
  s.v_[2] = k0_ ^ 0x6c7967656e657261ULL;
  s.v_[3] = k1_ ^ 0x7465646279746573ULL;
  return s;
}

void SipHash24::Stream::Update(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t used = total_ % 8;
  total_ += n;
  // Finish the word a previous piece started.
  while (used != 0 && n > 0) {
    tail_ |= uint64_t{*p++} << (8 * used);
    --n;
    if (++used == 8) {
      Absorb(v_, tail_);
      tail_ = 0;
      used = 0;
    }
  }
  uint64_t v[4] = {v_[0], v_[1], v_[2], v_[3]};  // (in registers through the loop)
  for (; n >= 8; n -= 8, p += 8) Absorb(v, LoadLittleEndian64(p));
  for (int i = 0; i < 4; ++i) v_[i] = v[i];
  for (size_t i = 0; i < n; ++i) tail_ |= uint64_t{p[i]} << (8 * i);
}

uint64_t SipHash24::Stream::Finish() const {
  uint64_t v[4] = {v_[0], v_[1], v_[2], v_[3]};
  Absorb(v, tail_ | (total_ << 56));  // the last word carries the length's low byte
  v[2] ^= 0xff;
  for (int i = 0; i < 4; ++i) SipRound(v);  // the "4"
  return v[0] ^ v[1] ^ v[2] ^ v[3];
}

uint64_t SipHash24::Compute(std::initializer_list<std::string_view> parts) const {
  Stream s = Begin();
  for (std::string_view part : parts) s.Update(part.data(), part.size());
  return s.Finish();
}

}  // namespace weft
