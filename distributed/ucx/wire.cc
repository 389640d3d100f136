#include "distributed/ucx/wire.h"

#include <bit>
#include <cstddef>
#include <cstring>

#include "core/crc32c.h"

namespace weft {

static_assert(std::endian::native == std::endian::little, "the wire format is little-endian; add byte swaps here");

namespace {

size_t AlignUp64(size_t n) { return (n + 63) & ~size_t{63}; }

uint32_t HeaderCrc(const WireHeader& h, const uint8_t* rest, size_t rest_bytes) {
  WireHeader copy = h;
  copy.header_crc = 0;
  copy.reserved1 = 0;  // the MAC (SealMessage) is added after the CRC
  return Crc32c(rest, rest_bytes, Crc32c(&copy, sizeof(copy)));
}

}  // namespace

std::string EncodeTensorHeader(int src_task, uint64_t step_id, std::string_view key, const Tensor& value, bool is_dead,
                               bool eager, uint64_t seq, WireKind kind, uint32_t chunk_bytes) {
  std::string out;
  EncodeTensorHeaderInto(&out, src_task, step_id, key, value, is_dead, eager, seq, kind, chunk_bytes);
  return out;
}

void EncodeTensorHeaderInto(std::string* out, int src_task, uint64_t step_id, std::string_view key, const Tensor& value,
                            bool is_dead, bool eager, uint64_t seq, WireKind kind, uint32_t chunk_bytes) {
  WEFT_REQUIRE(key.size() <= kWireMaxKeyBytes, "wire: key of {} bytes is longer than {}", key.size(),
               kWireMaxKeyBytes);
  WEFT_REQUIRE(value.rank() <= kWireMaxRank, "wire: tensor of rank {} for key '{}' (at most {})", value.rank(), key,
               kWireMaxRank);
  WEFT_REQUIRE(src_task >= 0 && src_task <= 0xFFFF, "wire: task index {} does not fit the tag", src_task);
  WireHeader h{};
  h.magic = kWireMagic;
  h.version = kWireVersion;
  h.kind = static_cast<uint16_t>(kind);
  WEFT_REQUIRE(chunk_bytes == 0 || (!eager && !is_dead), "wire: key '{}': only rendezvous transfers go in chunks",
               key);
  h.flags = (is_dead ? uint32_t{kWireFlagDead} : 0u) | (eager ? uint32_t{kWireFlagInline} : 0u) |
            (chunk_bytes > 0 ? uint32_t{kWireFlagChunked} : 0u);
  h.chunk_bytes = chunk_bytes;
  h.step_id = step_id;
  h.seq = seq;
  h.payload_bytes = is_dead ? 0 : value.bytes();
  h.key_bytes = static_cast<uint32_t>(key.size());
  h.src_task = static_cast<uint16_t>(src_task);
  h.dtype = static_cast<uint8_t>(is_dead ? DType::kInvalid : value.dtype());
  h.rank = static_cast<uint8_t>(is_dead ? 0 : value.rank());
  const size_t rest = 8 * h.rank + key.size();
  const size_t head = kWireHeaderBytes + rest;
  h.payload_offset = static_cast<uint32_t>(eager ? AlignUp64(head) : head);
  out->assign(h.payload_offset, '\0');
  auto* p = reinterpret_cast<uint8_t*>(out->data());
  for (int i = 0; i < h.rank; ++i) {
    const int64_t d = value.dim(i);
    std::memcpy(p + kWireHeaderBytes + 8 * i, &d, 8);
  }
  std::memcpy(p + kWireHeaderBytes + 8 * h.rank, key.data(), key.size());
  h.header_crc = HeaderCrc(h, p + kWireHeaderBytes, rest);
  std::memcpy(p, &h, sizeof(h));
}

void WireMessage::Reset() {
  header = WireHeader{};
  dims.clear();
  key.clear();
  dtype = DType::kInvalid;
  is_dead = false;
  eager = false;
  chunk_bytes = 0;
  payload = nullptr;
  header_trusted = false;
}

namespace {

uint64_t MessageMac(const uint8_t* head, size_t head_bytes, std::string_view payload, const SipHash24& key) {
  WireHeader h;
  std::memcpy(&h, head, sizeof(h));
  h.reserved1 = 0;
  return key.Compute({std::string_view(reinterpret_cast<const char*>(&h), sizeof(h)),
                      std::string_view(reinterpret_cast<const char*>(head) + sizeof(h), head_bytes - sizeof(h)),
                      payload});
}

}  // namespace

void SealMessage(std::string* head, std::string_view payload, const SipHash24& key) {
  const uint64_t mac = MessageMac(reinterpret_cast<const uint8_t*>(head->data()), head->size(), payload, key);
  std::memcpy(head->data() + offsetof(WireHeader, reserved1), &mac, sizeof(mac));
}

void MessageMacStream::Update(size_t offset, const uint8_t* data, size_t n) {
  // reserved1 (the MAC itself) is hashed as zeros, as SealMessage did.
  constexpr size_t kMacBegin = offsetof(WireHeader, reserved1), kMacEnd = kMacBegin + sizeof(uint64_t);
  if (offset >= kMacEnd || offset + n <= kMacBegin) {
    inner_.Update(data, n);
    return;
  }
  const size_t zero_begin = std::max(offset, kMacBegin) - offset, zero_end = std::min(offset + n, kMacEnd) - offset;
  static constexpr uint8_t kZeros[sizeof(uint64_t)] = {};
  inner_.Update(data, zero_begin);
  inner_.Update(kZeros, zero_end - zero_begin);
  inner_.Update(data + zero_end, n - zero_end);
}

Status MessageMacStream::Check(const uint8_t* header) const {
  uint64_t got;
  std::memcpy(&got, header + offsetof(WireHeader, reserved1), sizeof(got));
  const uint64_t want = inner_.Finish();
  if (!ConstantTimeEqual(&got, &want, sizeof(want))) {
    return errors::Unauthenticated("wire: the message's MAC does not verify (forged, damaged, or from another "
                                   "incarnation of the sender)");
  }
  return Status();
}

Status CheckMessageSeal(const uint8_t* data, size_t length, const SipHash24& key) {
  if (length < kWireHeaderBytes) {
    return errors::Unauthenticated("wire: a message of {} bytes cannot carry a MAC (the header has {})", length,
                                   kWireHeaderBytes);
  }
  uint64_t got;
  std::memcpy(&got, data + offsetof(WireHeader, reserved1), sizeof(got));
  const uint64_t want = MessageMac(data, length, {}, key);
  if (!ConstantTimeEqual(&got, &want, sizeof(want))) {
    return errors::Unauthenticated("wire: the message's MAC does not verify (forged, damaged, or from another "
                                   "incarnation of the sender)");
  }
  return Status();
}

Status DecodeMessage(const uint8_t* data, size_t length, WireMessage* out) {
  out->Reset();
  if (length < kWireHeaderBytes) {
    return errors::DataLoss("wire: message of {} bytes is shorter than the {}-byte header", length, kWireHeaderBytes);
  }
  WireHeader& h = out->header;
  std::memcpy(&h, data, sizeof(h));
  if (h.magic != kWireMagic) return errors::DataLoss("wire: bad magic {:#010x} (expected {:#010x})", h.magic, kWireMagic);
  if (h.version != kWireVersion) {
    return errors::InvalidArgument("wire: message version {} (this build speaks version {})", h.version, kWireVersion);
  }
  if (h.rank > kWireMaxRank) return errors::DataLoss("wire: rank {} is above {}", h.rank, kWireMaxRank);
  if (h.key_bytes > kWireMaxKeyBytes) {
    return errors::DataLoss("wire: key of {} bytes is above {}", h.key_bytes, kWireMaxKeyBytes);
  }
  const size_t rest = 8 * size_t{h.rank} + h.key_bytes;
  if (length < kWireHeaderBytes + rest) {
    return errors::DataLoss("wire: message of {} bytes is shorter than its header, dims and key ({} bytes)", length,
                            kWireHeaderBytes + rest);
  }
  const uint32_t crc = HeaderCrc(h, data + kWireHeaderBytes, rest);
  if (crc != h.header_crc) {
    return errors::DataLoss("wire: header checksum {:#010x} does not match the header's {:#010x}", crc, h.header_crc);
  }
  out->dims.resize(h.rank);
  if (h.rank > 0) std::memcpy(out->dims.data(), data + kWireHeaderBytes, 8 * size_t{h.rank});
  out->key.assign(reinterpret_cast<const char*>(data) + kWireHeaderBytes + 8 * h.rank, h.key_bytes);
  out->header_trusted = true;
  auto bad = [&](Status s) { return s.WithContext(fmt::format("wire: key '{}' (step {})", out->key, h.step_id)); };
  if (h.kind != static_cast<uint16_t>(WireKind::kTensor) && h.kind != static_cast<uint16_t>(WireKind::kControlRequest) &&
      h.kind != static_cast<uint16_t>(WireKind::kControlReply)) {
    return bad(errors::InvalidArgument("unknown message kind {}", h.kind));
  }
  if ((h.flags & ~uint32_t{kWireFlagDead | kWireFlagInline | kWireFlagChunked}) != 0) {
    return bad(errors::InvalidArgument("unknown flags {:#x}", h.flags));
  }
  const bool chunked = (h.flags & kWireFlagChunked) != 0;
  if (chunked != (h.chunk_bytes > 0) || (chunked && h.chunk_bytes < kWireMinChunkBytes) ||
      (chunked && (h.flags & (kWireFlagDead | kWireFlagInline)) != 0)) {
    return bad(errors::DataLoss("chunk size {} with flags {:#x} (chunks: rendezvous transfers only, at least {} bytes)",
                                h.chunk_bytes, h.flags, kWireMinChunkBytes));
  }
  out->chunk_bytes = h.chunk_bytes;
  out->is_dead = (h.flags & kWireFlagDead) != 0;
  out->eager = (h.flags & kWireFlagInline) != 0;
  if (out->is_dead) {
    if (h.payload_bytes != 0 || h.rank != 0) return bad(errors::DataLoss("a dead tensor carries data"));
  } else {
    out->dtype = static_cast<DType>(h.dtype);
    if (h.dtype == 0 || h.dtype > static_cast<uint8_t>(DType::kBFloat16)) {
      return bad(errors::DataLoss("unknown dtype {}", h.dtype));
    }
    uint64_t elements = 1;
    for (int64_t d : out->dims) {
      if (d < 0) return bad(errors::DataLoss("negative dimension {}", d));
      if (d != 0 && elements > (uint64_t{1} << 62) / static_cast<uint64_t>(d)) {
        return bad(errors::DataLoss("the shape's element count overflows"));
      }
      elements *= static_cast<uint64_t>(d);
    }
    const uint64_t want = elements * DTypeSize(out->dtype);
    if (want != h.payload_bytes) {
      return bad(errors::DataLoss("{} x {} elements is {} bytes but the header says {}", DTypeName(out->dtype),
                                  elements, want, h.payload_bytes));
    }
  }
  const size_t head = kWireHeaderBytes + rest;
  if (out->eager) {
    if (h.payload_offset != AlignUp64(head)) {
      return bad(errors::DataLoss("payload offset {} (expected {})", h.payload_offset, AlignUp64(head)));
    }
    if (length != h.payload_offset + h.payload_bytes) {
      return bad(errors::DataLoss("message of {} bytes, but header and payload make {} (truncated or padded)", length,
                                  h.payload_offset + h.payload_bytes));
    }
    out->payload = data + h.payload_offset;
  } else {
    if (h.payload_offset != head || length != head) {
      return bad(errors::DataLoss("rendezvous header of {} bytes (expected {})", length, head));
    }
    if (h.seq > kTagSeqMask) return bad(errors::DataLoss("sequence {} does not fit the tag", h.seq));
  }
  return Status();
}

}  // namespace weft
