// The wire format: round trips for eager and rendezvous headers, and every kind of damage is
// rejected with an error naming the field.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>

#include "core/crc32c.h"
#include "distributed/ucx/handshake.h"
#include "distributed/ucx/wire.h"

using namespace weft;

namespace {

std::string EagerMessage(const Tensor& t, const std::string& key, uint64_t step = 7) {
  std::string m = EncodeTensorHeader(3, step, key, t, false, true, 0);
  m.append(static_cast<const char*>(t.raw_data()), t.bytes());
  return m;
}

Status Decode(const std::string& bytes, WireMessage* m) {
  return DecodeMessage(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), m);
}

}  // namespace

TEST_CASE("wire: eager and rendezvous headers round-trip") {
  Tensor t = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const std::string m = EagerMessage(t, "a;1;b;x:0;0:0");
  CHECK(m.size() == 128 + 24);  // 64 header + 16 dims + 13 key, padded to 128, then the data
  WireMessage w;
  REQUIRE(Decode(m, &w).ok());
  CHECK(w.eager);
  CHECK(!w.is_dead);
  CHECK(w.key == "a;1;b;x:0;0:0");
  CHECK(w.header.step_id == 7);
  CHECK(w.header.src_task == 3);
  CHECK(w.dtype == DType::kFloat32);
  CHECK(w.dims == std::vector<int64_t>{2, 3});
  CHECK(std::memcmp(w.payload, t.raw_data(), t.bytes()) == 0);
  CHECK((w.payload - reinterpret_cast<const uint8_t*>(m.data())) % 64 == 0);

  const std::string r = EncodeTensorHeader(3, 9, "k", t, false, false, 42);
  REQUIRE(Decode(r, &w).ok());
  CHECK(!w.eager);
  CHECK(w.header.seq == 42);
  CHECK(w.header.payload_bytes == 24);
  CHECK(w.payload == nullptr);

  const std::string chunked = EncodeTensorHeader(3, 9, "k", t, false, false, 42, WireKind::kTensor, 4096);
  REQUIRE(Decode(chunked, &w).ok());
  CHECK(w.chunk_bytes == 4096);
  CHECK(w.header.seq == 42);
  CHECK_THROWS(EncodeTensorHeader(3, 9, "k", t, false, true, 0, WireKind::kTensor, 4096));  // eager: no chunks

  const std::string dead = EncodeTensorHeader(0, 1, "k", Tensor(), true, true, 0);
  REQUIRE(Decode(dead, &w).ok());
  CHECK(w.is_dead);

  Tensor empty(DType::kInt64, TensorShape({0, 5}));
  REQUIRE(Decode(EagerMessage(empty, "k"), &w).ok());
  CHECK(w.header.payload_bytes == 0);
  CHECK(w.dims == std::vector<int64_t>{0, 5});
}

TEST_CASE("wire: tags keep class, task and sequence apart") {
  CHECK((HeaderTag(5) & kTagClassMask) == kTagClassHeader);
  CHECK((DataTag(5, 77) & kTagClassMask) == kTagClassData);
  CHECK(TagSourceTask(DataTag(65535, kTagSeqMask)) == 65535);
  CHECK((DataTag(1, 3) & kTagSeqMask) == 3);
  CHECK(DataTag(1, 3) != DataTag(2, 3));
}

TEST_CASE("wire: damaged messages are rejected") {
  Tensor t = Tensor::FromVector<int32_t>({1, 2, 3, 4});
  const std::string good = EagerMessage(t, "key");
  WireMessage w;
  auto expect = [&](const std::string& bytes, Code code, const std::string& part, bool trusted) {
    Status s = Decode(bytes, &w);
    CHECK(s.code() == code);
    CHECK_MESSAGE(s.message().find(part) != std::string::npos, s.message());
    CHECK(w.header_trusted == trusted);
  };
  expect("hello", Code::kDataLoss, "shorter than the 64-byte header", false);
  std::string bad = good;
  bad[0] ^= 1;
  expect(bad, Code::kDataLoss, "bad magic", false);
  bad = good;
  bad[4] = 9;  // version
  expect(bad, Code::kInvalidArgument, "version 9", false);
  bad = good;
  bad[64 + 8 + 1] ^= 0x20;  // a key byte: the checksum no longer matches
  expect(bad, Code::kDataLoss, "checksum", false);
  // Truncated and padded payloads: the header is intact, so the key is known.
  expect(good.substr(0, good.size() - 3), Code::kDataLoss, "truncated", true);
  expect(good + "x", Code::kDataLoss, "truncated or padded", true);
  expect(good.substr(0, 70), Code::kDataLoss, "shorter than its header", false);
  // Fields that disagree with each other behind a valid checksum (as a buggy sender would write them).
  auto edited = [&](auto edit) {
    std::string m = good;
    WireHeader h;
    std::memcpy(&h, m.data(), sizeof(h));
    edit(h);
    const size_t rest = 8 * size_t{h.rank} + h.key_bytes;
    WireHeader zero = h;
    zero.header_crc = 0;
    std::memcpy(m.data(), &zero, sizeof(zero));
    h.header_crc = Crc32c(m.data() + kWireHeaderBytes, std::min(rest, m.size() - kWireHeaderBytes),
                          Crc32c(&zero, sizeof(zero)));
    std::memcpy(m.data(), &h, sizeof(h));
    return m;
  };
  expect(edited([](WireHeader& h) { h.payload_bytes = 12; }), Code::kDataLoss, "header says 12", true);
  expect(edited([](WireHeader& h) { h.dtype = 77; }), Code::kDataLoss, "unknown dtype 77", true);
  expect(edited([](WireHeader& h) { h.kind = 5; }), Code::kInvalidArgument, "unknown message kind 5", true);
  expect(edited([](WireHeader& h) { h.flags |= 0x80; }), Code::kInvalidArgument, "unknown flags", true);
  // Chunks: only on rendezvous transfers, with a chunk size of at least 4 KiB, and never one without the other.
  expect(edited([](WireHeader& h) { h.flags |= kWireFlagChunked; h.chunk_bytes = 4096; }), Code::kDataLoss,
         "rendezvous transfers only", true);
  expect(edited([](WireHeader& h) { h.chunk_bytes = 4096; }), Code::kDataLoss, "chunk size 4096", true);
  expect(edited([](WireHeader& h) { h.payload_offset = 64; }), Code::kDataLoss, "payload offset 64", true);
  expect(edited([](WireHeader& h) { h.src_task = 4; }).substr(0, 10), Code::kDataLoss, "shorter", false);
  std::string negative = edited([](WireHeader&) {});
  const int64_t minus = -4;
  std::memcpy(negative.data() + kWireHeaderBytes, &minus, 8);
  negative = [&] {  // re-seal after editing the dims
    std::string m = negative;
    WireHeader h;
    std::memcpy(&h, m.data(), sizeof(h));
    WireHeader zero = h;
    zero.header_crc = 0;
    h.header_crc = Crc32c(m.data() + kWireHeaderBytes, 8 + 3, Crc32c(&zero, sizeof(zero)));
    std::memcpy(m.data(), &h, sizeof(h));
    return m;
  }();
  expect(negative, Code::kDataLoss, "negative dimension -4", true);
  CHECK_THROWS_AS(EncodeTensorHeader(0, 0, std::string(kWireMaxKeyBytes + 1, 'k'), t, false, true, 0), Error);
}

// SealMessage's tag is SipHash-2-4 (core/siphash.h, checked against the reference vectors) of the
// message as sent with reserved1 zero; any changed byte fails the check, whole or in pieces.
TEST_CASE("wire: a sealed message's MAC is SipHash-2-4 of the message; any changed byte or another key fails it") {
  const ClusterKey cluster("wire-test-secret");
  const SipHash24 key = cluster.MessageKey(0, 11, 1, 22);
  const Tensor t = Tensor::FromVector<float>({1.5f, -2.0f}, TensorShape({2}));
  std::string head = EncodeTensorHeader(0, 5, "a;b;c;tensor;0:0", t, false, true, 0);
  const std::string payload(static_cast<const char*>(t.raw_data()), t.bytes());
  SealMessage(&head, payload, key);
  const std::string message = head + payload;
  std::string zeroed = message;
  std::memset(zeroed.data() + offsetof(WireHeader, reserved1), 0, sizeof(uint64_t));
  uint64_t tag;
  std::memcpy(&tag, message.data() + offsetof(WireHeader, reserved1), sizeof(tag));
  CHECK(tag == key.Compute(zeroed));
  const auto* bytes = reinterpret_cast<const uint8_t*>(message.data());
  CHECK(CheckMessageSeal(bytes, message.size(), key).ok());
  for (size_t piece : {size_t{1}, size_t{7}, size_t{13}, message.size()}) {
    MessageMacStream s(key);
    for (size_t off = 0; off < message.size(); off += piece) s.Update(off, bytes + off, std::min(piece, message.size() - off));
    CHECK(s.Check(bytes).ok());
  }
  for (size_t i = 0; i < message.size(); ++i) {
    std::string bad = message;
    bad[i] ^= 0x01;
    const auto* b = reinterpret_cast<const uint8_t*>(bad.data());
    const Status s = CheckMessageSeal(b, bad.size(), key);
    CHECK_MESSAGE(s.code() == Code::kUnauthenticated, "byte ", i);
    MessageMacStream stream(key);
    stream.Update(0, b, bad.size());
    CHECK_MESSAGE(stream.Check(b).code() == Code::kUnauthenticated, "byte ", i);
  }
  CHECK(CheckMessageSeal(bytes, message.size(), cluster.MessageKey(1, 22, 0, 11)).code() == Code::kUnauthenticated);
  CHECK(CheckMessageSeal(bytes, message.size() - 1, key).code() == Code::kUnauthenticated);  // truncated
}
