// IDX files (data/idx.h), plain or gzip-compressed: MNIST-format data sets a user points weft at.
#include <fstream>
#include <sstream>

#include "data/idx.h"
#include "../fuzz.h"

namespace weft::fuzz {
namespace {

// An IDX file as LeCun's format description gives it: 0, 0, the element type, the rank, then
// big-endian u32 dims and the elements (big-endian when wider than a byte).
std::string Idx(uint8_t type, const std::vector<uint32_t>& dims, size_t elem_bytes) {
  std::string out = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  size_t n = 1;
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>(d >> shift);
    n *= d;
  }
  for (size_t i = 0; i < n * elem_bytes; ++i) out += static_cast<char>(i * 37);
  return out;
}

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds = {
      Idx(0x08, {3, 4, 4}, 1),  // uint8 images
      Idx(0x08, {5}, 1),        // uint8 labels
      Idx(0x09, {2, 3}, 1),     // int8
      Idx(0x0C, {2, 2}, 4),     // int32
      Idx(0x0D, {3}, 4),        // float32
      Idx(0x0E, {1, 2}, 8),     // float64
      Idx(0x08, {0, 28, 28}, 1),
  };
  // The real, gzip-compressed Fashion-MNIST labels (Debian's dataset-fashion-mnist), when installed.
  std::ifstream f(std::string(data::kFashionMnistDir) + "/t10k-labels-idx1-ubyte.gz", std::ios::binary);
  if (f) {
    std::stringstream ss;
    ss << f.rdbuf();
    seeds.push_back(ss.str());
  }
  return seeds;
}

void Decode(std::string_view in) {
  const TempFile f(in, ".idx");
  data::ReadIdx(f.path());
}

}  // namespace

WEFT_FUZZ_TARGET(idx, {.seeds = Seeds, .decode = Decode});

}  // namespace weft::fuzz
