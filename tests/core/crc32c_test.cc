#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/crc32c.h"

using namespace weft;

namespace {

// Bitwise reference: one polynomial step per bit, no tables.
uint32_t Reference(const unsigned char* p, size_t n, uint32_t init) {
  uint32_t c = ~init;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0u);
  }
  return ~c;
}

}  // namespace

TEST_CASE("CRC-32C known vectors") {
  CHECK(Crc32c("", 0) == 0u);
  CHECK(Crc32c("123456789", 9) == 0xE3069283u);
  CHECK(Crc32cPortable("123456789", 9) == 0xE3069283u);
  std::vector<unsigned char> buf(32, 0);
  CHECK(Crc32c(buf.data(), 32) == 0x8A9136AAu);  // RFC 3720 B.4
  std::memset(buf.data(), 0xff, 32);
  CHECK(Crc32c(buf.data(), 32) == 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<unsigned char>(i);
  CHECK(Crc32c(buf.data(), 32) == 0x46DD794Eu);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<unsigned char>(31 - i);
  CHECK(Crc32c(buf.data(), 32) == 0x113FDB5Cu);
}

TEST_CASE("CRC-32C: hardware, table and bitwise reference agree on random data of odd lengths") {
  std::mt19937_64 rng(7);
  std::vector<unsigned char> data(5000 + 8);  // room for the longest length at the largest offset
  for (auto& b : data) b = static_cast<unsigned char>(rng());
  MESSAGE("SSE4.2 crc32 available: " << Crc32cHardwareAvailable());
  for (size_t n : {1, 3, 7, 8, 9, 15, 17, 63, 255, 1001, 4999}) {
    for (size_t offset : {0, 1, 5}) {  // unaligned starts too
      const uint32_t want = Reference(data.data() + offset, n, 0);
      CHECK(Crc32cPortable(data.data() + offset, n) == want);
      CHECK(Crc32c(data.data() + offset, n) == want);
      if (Crc32cHardwareAvailable()) CHECK(Crc32cHardware(data.data() + offset, n) == want);
    }
  }
}

TEST_CASE("CRC-32C extends piecewise through init") {
  const std::string s = "The quick brown fox jumps over the lazy dog";
  const uint32_t whole = Crc32c(s.data(), s.size());
  CHECK(whole == 0x22620404u);
  for (size_t split : {0ul, 1ul, 9ul, 20ul, s.size()}) {
    CHECK(Crc32c(s.data() + split, s.size() - split, Crc32c(s.data(), split)) == whole);
    CHECK(Crc32cPortable(s.data() + split, s.size() - split, Crc32cPortable(s.data(), split)) == whole);
  }
}
