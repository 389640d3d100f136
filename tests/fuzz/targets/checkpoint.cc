// Checkpoints (train/checkpoint.h): files a user hands to RestoreVariables, `fit` resumes from,
// and the weights member of a whole-model file.
#include <cstring>

#include "core/crc32c.h"
#include "train/checkpoint.h"
#include "../fuzz.h"

namespace weft::fuzz {
namespace {

std::string Saved(const std::vector<std::pair<std::string, Tensor>>& tensors) {
  const TempFile f("", ".weft");
  train::SaveCheckpoint(f.path(), tensors);
  std::FILE* in = std::fopen(f.path().c_str(), "rb");
  std::string bytes;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), in)) > 0;) bytes.append(buf, n);
  std::fclose(in);
  return bytes;
}

std::vector<std::string> Seeds() {
  Tensor flags(DType::kBool, TensorShape({3}));
  for (int i = 0; i < 3; ++i) flags.data<bool>()[i] = i != 1;
  return {
      Saved({{"dense/kernel", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2})},
             {"dense/bias", Tensor::FromVector<float>({0.5f, -0.5f})},
             {"step", Tensor::Scalar<int64_t>(100)}}),
      Saved({{"empty", Tensor(DType::kFloat64, TensorShape({0, 7}))}, {"flags", flags},
             {"pixels", Tensor::FromVector<uint8_t>({0, 127, 255}, {1, 3, 1})},
             {"ids", Tensor::FromVector<int32_t>({-1, 2})}}),
      Saved({}),
  };
}

void Decode(std::string_view in) {
  const TempFile f(in, ".weft");
  train::LoadCheckpoint(f.path());
}

// Recomputes the header CRC and, record by record while the (mutated) lengths still fit, the
// metadata and data CRCs (layout: train/checkpoint.h).
void Fixup(std::string& in) {
  constexpr size_t kHeader = 24;
  if (in.size() < kHeader) return;
  const uint32_t header_crc = Crc32c(in.data(), kHeader - 4);
  std::memcpy(in.data() + kHeader - 4, &header_crc, 4);
  size_t pos = kHeader;
  auto get = [&](size_t at, size_t width) {
    uint64_t v = 0;
    if (at + width <= in.size()) std::memcpy(&v, in.data() + at, width);
    return v;
  };
  while (pos + 4 <= in.size()) {
    const size_t start = pos;
    const uint64_t name_len = get(pos, 4);
    pos += 4 + name_len + 1;                  // name length, name, dtype
    const uint64_t rank = get(pos, 4);
    if (rank > 64) return;
    pos += 4 + 8 * rank;                      // rank, dims
    const uint64_t byte_len = get(pos, 8);
    pos += 8;
    if (pos + 4 > in.size()) return;
    const uint32_t meta_crc = Crc32c(in.data() + start, pos - start);
    std::memcpy(in.data() + pos, &meta_crc, 4);
    pos += 4;
    if (byte_len > in.size() - pos || in.size() - pos - byte_len < 4) return;
    const uint32_t crc = Crc32c(in.data() + pos, byte_len, meta_crc);
    pos += byte_len;
    std::memcpy(in.data() + pos, &crc, 4);
    pos += 4;
  }
}

}  // namespace

WEFT_FUZZ_TARGET(checkpoint, {.seeds = Seeds, .decode = Decode, .fixup = Fixup});

}  // namespace weft::fuzz
