// CRC-32C (Castagnoli, polynomial 0x1EDC6F41 reflected as 0x82F63B78), the checksum of iSCSI,
// ext4 and TFRecord. Uses the SSE4.2 `crc32` instruction when the CPU has it (checked once at run
// time, so the library builds without -march=native) and a table-driven loop otherwise.
//
//   uint32_t c = Crc32c("123456789", 9);                // 0xE3069283
//   uint32_t ab = Crc32c(b, nb, Crc32c(a, na));          // == Crc32c of a followed by b
//
// `init` is the CRC of the bytes before `data` (0 for none), so checksums can be extended piecewise.
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft {

uint32_t Crc32c(const void* data, size_t n, uint32_t init = 0);

// The two implementations behind Crc32c, exposed for tests and benchmarks.
uint32_t Crc32cPortable(const void* data, size_t n, uint32_t init = 0);
// True when Crc32cHardware may be called (x86-64 with SSE4.2).
bool Crc32cHardwareAvailable();
// REQUIRES: Crc32cHardwareAvailable().
uint32_t Crc32cHardware(const void* data, size_t n, uint32_t init = 0);

}  // namespace weft
