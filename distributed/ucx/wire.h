// The wire format of messages between weft processes (version 1), shared by tensor transfers and
// (next) the control plane.
//
//   std::string head = EncodeTensorHeader(/*src_task=*/1, /*step_id=*/7, "key", tensor, false, /*eager=*/true, /*seq=*/0);
//   // send head followed by tensor.raw_data() (eager) or head alone, then the data under DataTag(1, seq)
//   WireMessage m;
//   Status s = DecodeMessage(bytes, length, &m);   // every field checked against `length`
//
// A message is a fixed 64-byte header, then `rank` int64 dims, then the key bytes, then (eager
// messages only) zero padding up to `payload_offset` (a multiple of 64, so the receiver can make a
// tensor over its receive buffer without copying) and `payload_bytes` of tensor data. All integers
// are little-endian. `header_crc` is the CRC-32C of the header (with the crc field zero), dims and
// key: a damaged header is never trusted, whatever its length says. `reserved1` carries the
// message's MAC on authenticated connections (SealMessage) and is outside the CRC.
//
// Tags (64 bits): [63..56] class, [55..40] source task (global index), [39..0] sequence.
//   class 1: a message with a WireHeader (probed for with the class mask; the sequence is 0)
//   class 2: the data of a rendezvous transfer; its sequence comes from the header's `seq`
// Kinds 16 and 17 (worker addresses) are retired: connections are set up over TCP (handshake.h); 32 and up are reserved for the control plane (register / run / abort / health), which
// uses the same header with the method in `key` and its body as a uint8 payload.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/sha256.h"
#include "core/siphash.h"
#include "core/status.h"
#include "core/tensor.h"

namespace weft {

inline constexpr uint32_t kWireMagic = 0x54464557;  // "WEFT" in little-endian bytes
inline constexpr uint16_t kWireVersion = 1;
inline constexpr size_t kWireHeaderBytes = 64;
inline constexpr int kWireMaxRank = 32;
inline constexpr size_t kWireMaxKeyBytes = 16 << 10;
inline constexpr uint32_t kWireMinChunkBytes = 4096;

enum class WireKind : uint16_t {
  kTensor = 1,        // a rendezvous tensor: key = rendezvous key, payload = the tensor's bytes
  kControlFirst = 32, // the control plane (distributed/server/control.h):
  kControlRequest = 32,  // step_id = request id, key = method, payload = uint8 body
  kControlReply = 33,    // step_id = the request's id, key = method, payload = uint8 body
};

enum WireFlags : uint32_t {
  kWireFlagDead = 1u << 0,    // the tensor is dead (control flow): no data
  kWireFlagInline = 1u << 1,  // the payload follows the header (eager); otherwise a rendezvous transfer
  kWireFlagChunked = 1u << 2, // rendezvous in chunks of `chunk_bytes` (staged from device memory): chunk i
                              // comes under DataTag(src, seq + i)
};

struct WireHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t kind;
  uint32_t header_crc;
  uint32_t flags;
  uint64_t step_id;
  uint64_t seq;            // rendezvous transfers: the data tag's sequence
  uint64_t payload_bytes;  // the tensor's bytes (also for rendezvous transfers, where they come later)
  uint32_t key_bytes;
  uint16_t src_task;       // the sender's global task index (also in the tag; both must agree)
  uint8_t dtype;
  uint8_t rank;
  uint32_t payload_offset;  // eager: where the payload starts; rendezvous: the message length
  uint32_t chunk_bytes;     // kWireFlagChunked: the chunk size; 0 otherwise
  uint64_t reserved1;  // the SipHash-2-4 tag of an authenticated message (SealMessage); 0 otherwise
};
static_assert(sizeof(WireHeader) == kWireHeaderBytes);

// Tag helpers (see the layout above).
inline constexpr uint64_t kTagClassMask = 0xFFull << 56;
inline constexpr uint64_t kTagClassHeader = 1ull << 56;
inline constexpr uint64_t kTagClassData = 2ull << 56;
// A tensor message whose whole length (head + payload) fits a receive slot (TensorChannel::kSlotBytes):
// received into a receive posted ahead, not probed. Same bytes as class 1.
inline constexpr uint64_t kTagClassSmall = 3ull << 56;
inline constexpr uint64_t kTagSeqMask = (1ull << 40) - 1;
inline uint64_t HeaderTag(int src_task) { return kTagClassHeader | (static_cast<uint64_t>(src_task & 0xFFFF) << 40); }
inline uint64_t DataTag(int src_task, uint64_t seq) {
  return kTagClassData | (static_cast<uint64_t>(src_task & 0xFFFF) << 40) | (seq & kTagSeqMask);
}
inline uint64_t SmallTag(int src_task) { return kTagClassSmall | (static_cast<uint64_t>(src_task & 0xFFFF) << 40); }
inline int TagSourceTask(uint64_t tag) { return static_cast<int>((tag >> 40) & 0xFFFF); }

// The message head for a tensor: header, dims, key, and for eager messages padding to the payload
// offset (so the sender sends head + tensor bytes as a two-part iov). Throws InvalidArgument for a
// key longer than kWireMaxKeyBytes or a rank above kWireMaxRank.
std::string EncodeTensorHeader(int src_task, uint64_t step_id, std::string_view key, const Tensor& value, bool is_dead,
                               bool eager, uint64_t seq, WireKind kind = WireKind::kTensor,
                               uint32_t chunk_bytes = 0);
// The same into `*out` (replacing its contents, reusing its capacity: a sender that keeps its head
// strings encodes without allocating).
void EncodeTensorHeaderInto(std::string* out, int src_task, uint64_t step_id, std::string_view key, const Tensor& value,
                            bool is_dead, bool eager, uint64_t seq, WireKind kind = WireKind::kTensor,
                            uint32_t chunk_bytes = 0);

struct WireMessage {
  WireHeader header;
  std::vector<int64_t> dims;
  std::string key;
  DType dtype = DType::kInvalid;
  bool is_dead = false;
  bool eager = false;
  uint32_t chunk_bytes = 0;  // > 0: a rendezvous transfer in chunks of this size
  const uint8_t* payload = nullptr;  // eager: inside the decoded bytes
  // True once the header, dims and key passed the CRC: the key can be trusted even when the rest
  // of the message is wrong (so the Recv of that key can fail at once instead of timing out).
  bool header_trusted = false;

  // Back to a default message, keeping the capacity of `dims` and `key` (a receiver that decodes
  // into one message again and again allocates nothing for them).
  void Reset();
};

// Resets `*out` (WireMessage::Reset), then checks magic, version, kind, CRC, dtype, rank, dims, the byte count against dtype x shape, and
// the message length against what the header says; DataLoss or InvalidArgument naming the field
// and both values otherwise.
Status DecodeMessage(const uint8_t* data, size_t length, WireMessage* out);

}  // namespace weft

namespace weft {

// Per-message authentication (docs/security.md): SipHash-2-4 (core/siphash.h) under the
// direction's key (ClusterKey::MessageKey) over the whole message as sent (header with reserved1
// zero, dims, key, padding, and an eager message's payload), stored in reserved1. `head` is the
// message head (EncodeTensorHeader); `payload` the eager payload (empty otherwise).
void SealMessage(std::string* head, std::string_view payload, const SipHash24& key);
// The MAC check of a message that arrives in pieces and is not kept whole (a message longer than
// any valid header message, received to name its key without holding its bytes): Update with
// every piece in order (offset: where it starts in the message), then Check against the MAC in the
// message's first kWireHeaderBytes.
class MessageMacStream {
 public:
  explicit MessageMacStream(const SipHash24& key) : inner_(key.Begin()) {}
  void Update(size_t offset, const uint8_t* data, size_t n);
  // Unauthenticated unless `header`'s reserved1 is the MAC of everything updated (header included).
  Status Check(const uint8_t* header) const;

 private:
  SipHash24::Stream inner_;
};

// Whether the received message's reserved1 is its MAC under `key`. Checked before the header is
// decoded (nothing in it is trusted before). Unauthenticated naming what failed otherwise.
Status CheckMessageSeal(const uint8_t* data, size_t length, const SipHash24& key);

}  // namespace weft
