// The wire decoder (distributed/ucx/wire.h): every message a task receives over UCX goes through
// DecodeMessage first, from any peer that can reach the port.
#include <cstring>

#include "core/crc32c.h"
#include "distributed/ucx/wire.h"
#include "../fuzz.h"

namespace weft::fuzz {
namespace {

std::string Eager(const std::string& head, const Tensor& t) {
  return head + std::string(static_cast<const char*>(t.raw_data()), t.bytes());
}

std::vector<std::string> Seeds() {
  const Tensor f = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor i = Tensor::FromVector<int64_t>({7, -8});
  const Tensor empty(DType::kInt32, TensorShape({0, 4}));
  const Tensor scalar = Tensor::Scalar<double>(2.5);
  const Tensor address = Tensor::FromVector<uint8_t>({1, 2, 3, 4, 5});
  const Tensor big(DType::kUInt8, TensorShape({1 << 16}));
  return {
      Eager(EncodeTensorHeader(1, 7, "/job:worker/replica:0/task:1/device:CPU:0;1;/job:worker/replica:0/task:0/"
                                     "device:CPU:0;x:0;0:0", f, false, true, 0), f),
      Eager(EncodeTensorHeader(0, 1, "k", i, false, true, 0), i),
      Eager(EncodeTensorHeader(2, 3, "empty", empty, false, true, 0), empty),
      Eager(EncodeTensorHeader(2, 3, "scalar", scalar, false, true, 0), scalar),
      EncodeTensorHeader(3, 9, "dead", f, true, true, 0),
      EncodeTensorHeader(1, 5, "rendezvous", f, false, false, 42),
      EncodeTensorHeader(1, 5, "chunked", big, false, false, 43, WireKind::kTensor, kWireMinChunkBytes),
      Eager(EncodeTensorHeader(1, 11, "Health", address, false, true, 0, WireKind::kControlRequest), address),
      Eager(EncodeTensorHeader(1, 11, "Health", address, false, true, 0, WireKind::kControlReply), address),
  };
}

void Decode(std::string_view in) {
  WireMessage m;
  Status s = DecodeMessage(reinterpret_cast<const uint8_t*>(in.data()), in.size(), &m);
  if (!s.ok()) throw Error(s);
  // What the receiver does next with a live tensor (tensor_channel_recv.cc): a shape from the dims.
  if (!m.is_dead) TensorShape shape(m.dims);
}

// The header CRC covers the header (its crc field zero), the dims and the key; recomputed when the
// (mutated) rank and key length still fit the input.
void Fixup(std::string& in) {
  if (in.size() < kWireHeaderBytes) return;
  WireHeader h;
  std::memcpy(&h, in.data(), sizeof(h));
  const size_t rest = 8 * size_t{h.rank} + h.key_bytes;
  if (h.key_bytes > kWireMaxKeyBytes || in.size() - kWireHeaderBytes < rest) return;
  h.header_crc = 0;
  h.header_crc = Crc32c(in.data() + kWireHeaderBytes, rest, Crc32c(&h, sizeof(h)));
  std::memcpy(in.data(), &h, sizeof(h));
}

}  // namespace

WEFT_FUZZ_TARGET(wire, {.seeds = Seeds, .decode = Decode, .fixup = Fixup});

}  // namespace weft::fuzz
