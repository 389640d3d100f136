// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for authenticating the connections and
// messages between weft's tasks (distributed/ucx/handshake.h). Our own small implementation, so
// that weft needs no crypto library; it uses the x86 SHA extensions when the CPU has them (checked
// once at run time, like crc32c.h) and portable code otherwise.
//
//   Sha256Digest d = Sha256("abc", 3);                       // ba7816bf 8f01cfea ...  (FIPS 180-2 B.1)
//   HmacSha256 mac(key);                                     // the key's pads hashed once
//   Sha256Digest tag = mac.Compute({header, payload});       // HMAC over the parts, in order
//   bool ok = ConstantTimeEqual(tag.data(), theirs, 32);     // compare MACs only this way
//
// Thread-safe: Sha256 objects are values (one per thread); HmacSha256::Compute is const.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace weft {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t n);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  // The digest of everything updated so far; the object must not be used afterwards.
  Sha256Digest Final();

 private:
  friend class HmacSha256;
  uint32_t state_[8];
  uint8_t block_[64];
  size_t block_used_ = 0;
  uint64_t total_ = 0;
};

Sha256Digest Sha256Hash(const void* data, size_t n);
inline Sha256Digest Sha256Hash(std::string_view s) { return Sha256Hash(s.data(), s.size()); }

// HMAC-SHA256 with a fixed key: the inner and outer pads' first block is hashed once here, so a
// MAC over a short message costs the message's blocks plus two.
class HmacSha256 {
 public:
  explicit HmacSha256(std::string_view key);
  Sha256Digest Compute(std::initializer_list<std::string_view> parts) const;
  Sha256Digest Compute(std::string_view data) const { return Compute({data}); }
  // The first 8 bytes of Compute as a little-endian integer (a truncated MAC, RFC 2104 section 5).
  uint64_t Compute64(std::initializer_list<std::string_view> parts) const;
  // The same for a message that arrives in pieces: Update Begin()'s state with the parts in order,
  // then Finish64(state) == Compute64(parts).
  Sha256 Begin() const { return inner_; }
  uint64_t Finish64(Sha256 inner) const;

 private:
  Sha256 inner_, outer_;  // after the key's ipad / opad block
};

// Whether a[0..n) == b[0..n), in time that depends on n only (no early exit a timing attack could
// measure).
bool ConstantTimeEqual(const void* a, const void* b, size_t n);

// Lowercase hex of `n` bytes (test vectors, logs).
std::string HexString(const void* data, size_t n);

// The two block functions behind Sha256, exposed for tests and benchmarks.
bool Sha256HardwareAvailable();
void Sha256BlocksPortable(uint32_t state[8], const uint8_t* blocks, size_t num_blocks);
// REQUIRES: Sha256HardwareAvailable().
void Sha256BlocksHardware(uint32_t state[8], const uint8_t* blocks, size_t num_blocks);

}  // namespace weft
