// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012): a keyed 64-bit
// PRF, used as the MAC of every message on an authenticated connection (distributed/ucx/wire.h).
// For messages of a few hundred bytes it costs a fraction of HMAC-SHA256's five compressions, and
// its 64-bit tag is what the truncated HMAC gave before (docs/security.md, "Messages").
//
//   SipHash24 mac(key16);                        // 16 key bytes
//   uint64_t tag = mac.Compute({header, body});  // == Compute(header + body)
//   SipHash24::Stream s = mac.Begin();           // the same over pieces
//   s.Update(header.data(), header.size()); s.Update(body.data(), body.size());
//   assert(s.Finish() == tag);
//
// Thread-safe (const); a Stream belongs to one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace weft {

class SipHash24 {
 public:
  static constexpr size_t kKeyBytes = 16;
  // REQUIRES: key.size() == kKeyBytes (InvalidArgument otherwise).
  explicit SipHash24(std::string_view key);

  class Stream {
   public:
    void Update(const void* data, size_t n);
    uint64_t Finish() const;

   private:
    friend class SipHash24;
    uint64_t v_[4] = {};
    uint64_t tail_ = 0;       // the bytes of an unfinished word, little-endian
    uint64_t total_ = 0;      // bytes so far
  };
  Stream Begin() const;
  // The tag of the parts' concatenation.
  uint64_t Compute(std::initializer_list<std::string_view> parts) const;
  uint64_t Compute(std::string_view data) const { return Compute({data}); }

 private:
  uint64_t k0_, k1_;
};

}  // namespace weft
