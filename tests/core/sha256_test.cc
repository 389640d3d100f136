#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/sha256.h"

using namespace weft;

namespace {

std::string Hex(const Sha256Digest& d) { return HexString(d.data(), d.size()); }

std::string Repeat(char c, size_t n) { return std::string(n, c); }

// Both block functions (the hardware one where the CPU has it) over `data` in one go.
std::vector<std::string> BothWays(const std::string& data) {
  std::vector<std::string> out;
  for (int hw = 0; hw < (Sha256HardwareAvailable() ? 2 : 1); ++hw) {
    uint32_t state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    // Pad by hand (FIPS 180-4 5.1.1) so the block functions are tested on their own.
    std::string m = data;
    m.push_back('\x80');
    while (m.size() % 64 != 56) m.push_back('\0');
    const uint64_t bits = data.size() * 8;
    for (int i = 7; i >= 0; --i) m.push_back(static_cast<char>(bits >> (8 * i)));
    const auto* p = reinterpret_cast<const uint8_t*>(m.data());
    if (hw) {
      Sha256BlocksHardware(state, p, m.size() / 64);
    } else {
      Sha256BlocksPortable(state, p, m.size() / 64);
    }
    std::string hex;
    for (uint32_t w : state) hex += fmt::format("{:08x}", w);
    out.push_back(hex);
  }
  return out;
}

}  // namespace

// FIPS 180-2, appendix B (and the empty message's well-known digest).
TEST_CASE("SHA-256: FIPS 180-2 vectors") {
  CHECK(Hex(Sha256Hash("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Hex(Sha256Hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Hex(Sha256Hash(Repeat('a', 1000000))) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  CHECK(Hex(Sha256Hash("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  for (const std::string& h : BothWays("abc")) {
    CHECK(h == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  }
}

TEST_CASE("SHA-256: incremental updates and the hardware path agree with one-shot portable hashing") {
  std::mt19937 rng(17);
  for (size_t n : {0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1000, 4097}) {
    std::string data(n, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    const std::vector<std::string> both = BothWays(data);
    if (both.size() == 2) CHECK_MESSAGE(both[0] == both[1], "n = ", n);
    CHECK(Hex(Sha256Hash(data)) == both[0]);
    Sha256 piecewise;  // uneven pieces across block boundaries
    for (size_t i = 0; i < n;) {
      const size_t take = std::min<size_t>(n - i, 1 + rng() % 70);
      piecewise.Update(data.data() + i, take);
      i += take;
    }
    CHECK(Hex(piecewise.Final()) == both[0]);
  }
}

// RFC 4231, section 4 (test cases 1-4, 5 truncated to 128 bits, 6 and 7 with a 131-byte key).
TEST_CASE("HMAC-SHA256: RFC 4231 vectors") {
  CHECK(Hex(HmacSha256(Repeat('\x0b', 20)).Compute("Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(Hex(HmacSha256("Jefe").Compute("what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(Hex(HmacSha256(Repeat('\xaa', 20)).Compute(Repeat('\xdd', 50))) ==
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::string key4;
  for (int i = 1; i <= 25; ++i) key4.push_back(static_cast<char>(i));
  CHECK(Hex(HmacSha256(key4).Compute(Repeat('\xcd', 50))) ==
        "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  CHECK(Hex(HmacSha256(Repeat('\x0c', 20)).Compute("Test With Truncation")).substr(0, 32) ==
        "a3b6167473100ee06e0c796c2955552b");
  CHECK(Hex(HmacSha256(Repeat('\xaa', 131)).Compute("Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  CHECK(Hex(HmacSha256(Repeat('\xaa', 131))
                .Compute("This is a test using a larger than block-size key and a larger than block-size data. The "
                         "key needs to be hashed before being used by the HMAC algorithm.")) ==
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
  // Parts are concatenated; Compute64 is the digest's first 8 bytes, little-endian.
  const HmacSha256 jefe("Jefe");
  CHECK(jefe.Compute({"what do ya ", "", "want for nothing?"}) == jefe.Compute("what do ya want for nothing?"));
  CHECK(jefe.Compute64({"what do ya want for nothing?"}) == 0x4e7560bf46c1dc5bull);
}

TEST_CASE("ConstantTimeEqual") {
  const std::string a = "0123456789abcdef", b = "0123456789abcdeF";
  CHECK(ConstantTimeEqual(a.data(), a.data(), a.size()));
  CHECK_FALSE(ConstantTimeEqual(a.data(), b.data(), a.size()));
  CHECK(ConstantTimeEqual(a.data(), b.data(), a.size() - 1));
  CHECK(ConstantTimeEqual(a.data(), b.data(), 0));
}
