// Little-endian byte strings with bounds-checked reading: the graph file (graph/graph_io.cc) and
// the control plane's messages (distributed/server/control.cc) are written and read with these.
//
//   ByteWriter w;
//   w.Pod<uint32_t>(1);
//   w.Str("name");
//   w.WriteTensor(t);                        // dtype u8, shape, nbytes u64, row-major bytes
//   ByteReader r(w.out(), "RunStep request");
//   uint32_t v = r.Pod<uint32_t>("version");  // truncation: DataLoss "RunStep request: truncated while
//   Tensor u = r.ReadTensor("feed 0");        //   reading version (at byte 0)"
//
// Every problem throws Error(DataLoss) naming the context, the field and the byte offset; Text
// (a name) that is not valid UTF-8 is one (Str is bytes).
#pragma once

#include <cstring>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/tensor.h"

namespace weft {

// Whether `s` is well-formed UTF-8 (RFC 3629). Every name read from a file is checked
// (ByteReader::Text, checkpoint tensor names): names reach Python, where bad bytes would surface as
// a UnicodeDecodeError instead of DataLoss.
bool IsValidUtf8(std::string_view s);

class ByteWriter {
 public:
  template <typename T> void Pod(T v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(T)); }
  void Str(std::string_view s) {
    Pod<uint32_t>(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  // unknown_rank u8, rank u32, dims i64 (-1 = unknown).
  void Shape(const TensorShape& s);
  // dtype u8, shape, nbytes u64, bytes (host tensors).
  void WriteTensor(const Tensor& t);
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class ByteReader {
 public:
  // `context` starts every error ("graph file 'x.weftgraph'").
  ByteReader(std::string_view in, std::string context) : in_(in), context_(std::move(context)) {}
  template <typename T> T Pod(std::string_view what) {
    Need(sizeof(T), what);
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string Str(std::string_view what);
  // Str that must be UTF-8 (names, text attributes): DataLoss naming `what` and the offset if not.
  std::string Text(std::string_view what);
  TensorShape Shape(std::string_view what);
  DType ReadDType(std::string_view what);
  Tensor ReadTensor(std::string_view what);
  const char* Bytes(size_t n, std::string_view what);
  size_t pos() const { return pos_; }
  size_t remaining() const { return in_.size() - pos_; }
  [[noreturn]] void Fail(const std::string& msg) const;

 private:
  void Need(size_t n, std::string_view what) const {
    if (in_.size() - pos_ < n) Fail(fmt::format("truncated while reading {}", what));
  }
  std::string_view in_;
  std::string context_;
  size_t pos_ = 0;
};

}  // namespace weft
