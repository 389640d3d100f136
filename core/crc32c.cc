#include "core/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace weft {
namespace {

// Slicing-by-8 tables: table[0] is the classic byte-at-a-time table; table[k][b] is the CRC of
// byte b followed by k zero bytes, so eight input bytes fold in with eight lookups.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0u);
    t[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

inline uint64_t LoadLe64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t HardwareImpl(const unsigned char* p, size_t n, uint32_t crc) {
  uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) c = _mm_crc32_u64(c, LoadLe64(p));
  uint32_t c32 = static_cast<uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return c32;
}

bool DetectHardware() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#endif

}  // namespace

uint32_t Crc32cPortable(const void* data, size_t n, uint32_t init) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~init;
  for (; n >= 8; n -= 8, p += 8) {
    const uint64_t v = LoadLe64(p) ^ c;
    c = kTables[7][v & 0xff] ^ kTables[6][(v >> 8) & 0xff] ^ kTables[5][(v >> 16) & 0xff] ^
        kTables[4][(v >> 24) & 0xff] ^ kTables[3][(v >> 32) & 0xff] ^ kTables[2][(v >> 40) & 0xff] ^
        kTables[1][(v >> 48) & 0xff] ^ kTables[0][v >> 56];
  }
  for (; n > 0; --n, ++p) c = (c >> 8) ^ kTables[0][(c ^ *p) & 0xff];
  return ~c;
}

bool Crc32cHardwareAvailable() {
#if defined(__x86_64__)
  static const bool available = DetectHardware();
  return available;
#else
  return false;
#endif
}

uint32_t Crc32cHardware(const void* data, size_t n, uint32_t init) {
#if defined(__x86_64__)
  return ~HardwareImpl(static_cast<const unsigned char*>(data), n, ~init);
#else
  return Crc32cPortable(data, n, init);
#endif
}

uint32_t Crc32c(const void* data, size_t n, uint32_t init) {
  return Crc32cHardwareAvailable() ? Crc32cHardware(data, n, init) : Crc32cPortable(data, n, init);
}

}  // namespace weft
