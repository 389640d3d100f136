#include "core/byte_io.h"

namespace weft {

void ByteWriter::Shape(const TensorShape& s) {
  Pod<uint8_t>(s.unknown_rank());
  Pod<uint32_t>(s.unknown_rank() ? 0 : s.rank());
  if (!s.unknown_rank()) for (int64_t d : s.dims()) Pod<int64_t>(d);
}

void ByteWriter::WriteTensor(const Tensor& t) {
  Pod<uint8_t>(static_cast<uint8_t>(t.dtype()));
  Shape(t.shape());
  Pod<uint64_t>(t.bytes());
  out_.append(static_cast<const char*>(t.raw_data()), t.bytes());
}

std::string ByteReader::Str(std::string_view what) {
  const uint32_t n = Pod<uint32_t>(what);
  Need(n, what);
  std::string s(in_.substr(pos_, n));
  pos_ += n;
  return s;
}

std::string ByteReader::Text(std::string_view what) {
  const size_t at = pos_;
  std::string s = Str(what);
  if (!IsValidUtf8(s)) Fail(fmt::format("{}: the text at byte {} is not valid UTF-8", what, at + 4));
  return s;
}

bool IsValidUtf8(std::string_view s) {
  // RFC 3629: 1-4 byte sequences, no overlongs, no surrogates (U+D800..U+DFFF), nothing past U+10FFFF.
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (end - p <= n) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (int i = 2; i <= n; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
    }
    p += n + 1;
  }
  return true;
}

TensorShape ByteReader::Shape(std::string_view what) {
  const bool unknown = Pod<uint8_t>(what) != 0;
  const uint32_t rank = Pod<uint32_t>(what);
  if (unknown) return TensorShape::Unknown();
  if (rank > 64) Fail(fmt::format("{}: rank {} is not plausible", what, rank));
  std::vector<int64_t> dims(rank);
  for (auto& d : dims) {
    d = Pod<int64_t>(what);
    if (d < -1) Fail(fmt::format("{}: negative dimension {}", what, d));
  }
  return TensorShape(dims);
}

DType ByteReader::ReadDType(std::string_view what) {
  const uint8_t t = Pod<uint8_t>(what);
  if (t == 0 || t > static_cast<uint8_t>(DType::kBFloat16)) Fail(fmt::format("{}: bad dtype code {}", what, t));
  return static_cast<DType>(t);
}

Tensor ByteReader::ReadTensor(std::string_view what) {
  const DType dt = ReadDType(what);
  const TensorShape shape = Shape(what);
  const uint64_t bytes = Pod<uint64_t>(what);
  if (!shape.IsFullyDefined()) Fail(fmt::format("{}: tensor with unknown shape", what));
  int64_t n = 0;
  try {
    n = shape.num_elements();
  } catch (const Error&) {
    Fail(fmt::format("{}: tensor shape {} is too large", what, shape.ToString()));
  }
  if (bytes != static_cast<uint64_t>(n) * DTypeSize(dt)) {
    Fail(fmt::format("{}: {} bytes for a {}{} tensor", what, bytes, DTypeName(dt), shape.ToString()));
  }
  const char* p = Bytes(bytes, what);
  Tensor t(dt, shape);
  if (bytes) std::memcpy(t.raw_data(), p, bytes);
  return t;
}

const char* ByteReader::Bytes(size_t n, std::string_view what) {
  Need(n, what);
  const char* p = in_.data() + pos_;
  pos_ += n;
  return p;
}

void ByteReader::Fail(const std::string& msg) const {
  throw Error(errors::DataLoss("{}: {} (at byte {})", context_, msg, pos_));
}

}  // namespace weft
