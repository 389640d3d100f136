#include "data/idx.h"

#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <memory>

#include "core/file.h"

namespace weft::data {

namespace {

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

// Reads exactly n bytes (gzread handles plain files too); false at a short read.
bool ReadExactly(gzFile f, void* dst, size_t n) {
  auto* p = static_cast<char*>(dst);
  while (n > 0) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n, 1u << 30));
    const int got = gzread(f, p, chunk);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

uint32_t BigEndian32(const unsigned char* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

}  // namespace

Tensor ReadIdx(const std::string& path) {
  const int fd = OpenRegularFile(path, "IDX file");
  GzFile f(gzdopen(fd, "rb"));  // owns fd from here (gzclose closes it)
  if (!f) {
    ::close(fd);
    throw Error(errors::ResourceExhausted("IDX file '{}': cannot start reading it (zlib)", path));
  }
  unsigned char magic[4];
  if (!ReadExactly(f.get(), magic, 4)) throw Error(errors::DataLoss("IDX file '{}': truncated header", path));
  if (magic[0] != 0 || magic[1] != 0) {
    throw Error(errors::DataLoss("IDX file '{}': bad magic number {:02x}{:02x}{:02x}{:02x} (not an IDX file)", path,
                                 magic[0], magic[1], magic[2], magic[3]));
  }
  DType dtype;
  size_t elem;
  switch (magic[2]) {
    case 0x08: dtype = DType::kUInt8; elem = 1; break;
    case 0x09: dtype = DType::kInt32; elem = 1; break;  // int8, widened
    case 0x0C: dtype = DType::kInt32; elem = 4; break;
    case 0x0D: dtype = DType::kFloat32; elem = 4; break;
    case 0x0E: dtype = DType::kFloat64; elem = 8; break;
    default:
      throw Error(errors::DataLoss("IDX file '{}': unsupported element type 0x{:02x}", path, magic[2]));
  }
  const int rank = magic[3];
  if (rank < 1 || rank > 8) throw Error(errors::DataLoss("IDX file '{}': implausible rank {}", path, rank));
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    unsigned char b[4];
    if (!ReadExactly(f.get(), b, 4)) throw Error(errors::DataLoss("IDX file '{}': truncated header", path));
    dims[i] = BigEndian32(b);
  }
  TensorShape shape(dims);
  int64_t n = 0;
  try {
    n = shape.num_elements();
  } catch (const Error&) {
    throw Error(errors::DataLoss("IDX file '{}': dims {} are too large", path, shape.ToString()));
  }
  if (n > (int64_t{1} << 34)) throw Error(errors::DataLoss("IDX file '{}': dims {} are too large", path, shape.ToString()));
  // The data, in chunks: memory grows with the bytes the file really holds, so a header whose dims
  // promise more (a damaged or hostile 16-byte file can claim 2^34 elements) fails as truncated
  // without allocating what it claims first.
  const size_t want = static_cast<size_t>(n) * elem;
  constexpr size_t kChunk = size_t{16} << 20;
  std::vector<unsigned char> raw;
  while (raw.size() < want) {
    const size_t at = raw.size();
    raw.resize(at + std::min(kChunk, want - at));
    if (!ReadExactly(f.get(), raw.data() + at, raw.size() - at)) {
      throw Error(errors::DataLoss("IDX file '{}': truncated: dims {} need {} bytes of data", path, shape.ToString(),
                                   want));
    }
  }
  char extra;
  if (gzread(f.get(), &extra, 1) > 0) {
    throw Error(errors::DataLoss("IDX file '{}': data longer than dims {} say", path, shape.ToString()));
  }
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char* b = raw.data() + i * elem;
    switch (magic[2]) {
      case 0x08: t.data<uint8_t>()[i] = b[0]; break;
      case 0x09: t.data<int32_t>()[i] = static_cast<int8_t>(b[0]); break;
      case 0x0C: t.data<int32_t>()[i] = static_cast<int32_t>(BigEndian32(b)); break;
      case 0x0D: {
        const uint32_t u = BigEndian32(b);
        std::memcpy(&t.data<float>()[i], &u, 4);
        break;
      }
      case 0x0E: {
        const uint64_t u = (uint64_t{BigEndian32(b)} << 32) | BigEndian32(b + 4);
        std::memcpy(&t.data<double>()[i], &u, 8);
        break;
      }
    }
  }
  return t;
}

MnistSplit LoadMnist(const std::string& dir, bool train) {
  const std::string prefix = train ? "train" : "t10k";
  auto find = [&](const std::string& stem) {
    for (const std::string& name : {stem + ".gz", stem}) {
      const std::string p = dir + "/" + name;
      if (std::filesystem::exists(p)) return p;
    }
    throw Error(errors::NotFound("no {}[.gz] in '{}' (expected the MNIST / Fashion-MNIST IDX files)", stem, dir));
  };
  const std::string images_path = find(prefix + "-images-idx3-ubyte");
  const std::string labels_path = find(prefix + "-labels-idx1-ubyte");
  MnistSplit s{ReadIdx(images_path), ReadIdx(labels_path)};
  if (s.images.dtype() != DType::kUInt8 || s.images.rank() != 3) {
    throw Error(errors::DataLoss("IDX file '{}': expected uint8 images [N,rows,cols], got {}", images_path,
                                 s.images.DebugString()));
  }
  if (s.labels.dtype() != DType::kUInt8 || s.labels.rank() != 1 || s.labels.dim(0) != s.images.dim(0)) {
    throw Error(errors::DataLoss("IDX files '{}' and '{}': {} labels for {} images", labels_path, images_path,
                                 s.labels.DebugString(), s.images.DebugString()));
  }
  return s;
}

}  // namespace weft::data
