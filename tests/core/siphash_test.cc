#include <doctest/doctest.h>

#include <random>
#include <string>

#include "core/siphash.h"
#include "core/status.h"

using namespace weft;

namespace {

// The reference key 00 01 .. 0f; message i is the bytes 00 .. i-1.
std::string RefKey() {
  std::string k;
  for (int i = 0; i < 16; ++i) k.push_back(static_cast<char>(i));
  return k;
}
std::string RefMessage(size_t n) {
  std::string m;
  for (size_t i = 0; i < n; ++i) m.push_back(static_cast<char>(i));
  return m;
}

}  // namespace

TEST_CASE("SipHash24: the reference implementation's vectors (veorq/SipHash vectors.h, vectors_sip64)") {
  const SipHash24 mac(RefKey());
  // vectors.h lists the tags as little-endian bytes: {0x31, 0x0e, 0x0e, 0xdd, 0x47, 0xdb, 0x6f, 0x72} for 0 bytes.
  CHECK(mac.Compute(RefMessage(0)) == 0x726fdb47dd0e0e31ULL);
  CHECK(mac.Compute(RefMessage(1)) == 0x74f839c593dc67fdULL);
  CHECK(mac.Compute(RefMessage(2)) == 0x0d6c8009d9a94f5aULL);
  CHECK(mac.Compute(RefMessage(3)) == 0x85676696d7fb7e2dULL);
  CHECK(mac.Compute(RefMessage(7)) == 0xab0200f58b01d137ULL);
  CHECK(mac.Compute(RefMessage(8)) == 0x93f5f5799a932462ULL);
  CHECK(mac.Compute(RefMessage(9)) == 0x9e0082df0ba9e4b0ULL);
  CHECK(mac.Compute(RefMessage(15)) == 0xa129ca6149be45e5ULL);  // the paper's example (appendix A)
}

TEST_CASE("SipHash24: pieces of any sizes give the one-shot tag; every key and message bit matters") {
  std::mt19937 rng(7);
  std::string m(300, '\0');
  for (char& c : m) c = static_cast<char>(rng());
  const SipHash24 mac(RefKey());
  for (size_t n : {size_t{0}, size_t{5}, size_t{8}, size_t{63}, size_t{300}}) {
    const uint64_t whole = mac.Compute(std::string_view(m).substr(0, n));
    for (size_t cut1 = 0; cut1 <= n; cut1 += 3) {
      for (size_t cut2 = cut1; cut2 <= n; cut2 += 7) {
        SipHash24::Stream s = mac.Begin();
        s.Update(m.data(), cut1);
        s.Update(m.data() + cut1, cut2 - cut1);
        s.Update(m.data() + cut2, n - cut2);
        CHECK(s.Finish() == whole);
      }
    }
    CHECK(mac.Compute({std::string_view(m).substr(0, n / 2), std::string_view(m).substr(n / 2, n - n / 2)}) == whole);
  }
  const uint64_t base = mac.Compute(m);
  std::string key = RefKey();
  key[15] ^= 0x80;
  CHECK(SipHash24(key).Compute(m) != base);
  m[299] ^= 1;
  CHECK(mac.Compute(m) != base);
  m[299] ^= 1;
  m.push_back('\0');  // a longer message ending in a zero differs (the length is absorbed)
  CHECK(mac.Compute(m) != base);
}

TEST_CASE("SipHash24: a key of the wrong length is InvalidArgument naming its length") {
  try {
    SipHash24 bad("short");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.status().code() == Code::kInvalidArgument);
    CHECK(e.status().message().find("5 bytes") != std::string::npos);
  }
}
