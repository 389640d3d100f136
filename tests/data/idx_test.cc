#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "data/idx.h"

using namespace weft;
using namespace weft::data;

namespace {

std::string Idx(unsigned char type, std::vector<uint32_t> dims, const std::string& payload) {
  std::string s = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int k = 3; k >= 0; --k) s += static_cast<char>((d >> (8 * k)) & 0xff);
  }
  return s + payload;
}

std::string Write(const std::string& name, const std::string& bytes, bool gzip) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  return path;
}

Code CodeOf(const std::string& path) {
  try {
    ReadIdx(path);
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find(path) != std::string::npos);  // every error names the file
    return e.code();
  }
  return Code::kOk;
}

}  // namespace

TEST_CASE("IDX files read plain and gzipped, uint8 and int32") {
  const std::string u8 = Idx(0x08, {2, 3}, std::string("\x01\x02\x03\x04\x05\xff", 6));
  for (bool gz : {false, true}) {
    Tensor t = ReadIdx(Write(gz ? "weft_u8.idx.gz" : "weft_u8.idx", u8, gz));
    CHECK(t.dtype() == DType::kUInt8);
    CHECK(t.shape() == TensorShape({2, 3}));
    CHECK(t.ToVector<uint8_t>() == std::vector<uint8_t>{1, 2, 3, 4, 5, 255});
  }
  Tensor i = ReadIdx(Write("weft_i32.idx", Idx(0x0C, {2}, std::string("\x00\x00\x01\x00\xff\xff\xff\xfe", 8)), false));
  CHECK(i.ToVector<int32_t>() == std::vector<int32_t>{256, -2});
}

TEST_CASE("bad IDX files are clear errors naming the file") {
  CHECK(CodeOf("/no/such/file.idx") == Code::kNotFound);
  CHECK(CodeOf(Write("weft_magic.idx", "\x12\x34\x08\x01\x00\x00\x00\x01x", false)) == Code::kDataLoss);
  CHECK(CodeOf(Write("weft_short.idx", Idx(0x08, {4, 4}, "abc"), true)) == Code::kDataLoss);
  CHECK(CodeOf(Write("weft_long.idx", Idx(0x08, {2}, "abcd"), false)) == Code::kDataLoss);
  CHECK(CodeOf(Write("weft_type.idx", Idx(0x0B, {1}, "ab"), false)) == Code::kDataLoss);
  CHECK(CodeOf(Write("weft_header.idx", std::string("\x00\x00\x08\x03\x00", 5), false)) == Code::kDataLoss);
  CHECK(CodeOf(Write("weft_huge.idx", Idx(0x08, {0xffffffffu, 0xffffffffu, 0xffffffffu}, ""), false)) == Code::kDataLoss);
}

TEST_CASE("LoadMnist checks images against labels") {
  const auto dir = std::filesystem::temp_directory_path() / "weft_mnist_test";
  std::filesystem::create_directories(dir);
  Write("weft_mnist_test/t10k-images-idx3-ubyte.gz", Idx(0x08, {2, 2, 2}, std::string(8, '\x07')), true);
  Write("weft_mnist_test/t10k-labels-idx1-ubyte", Idx(0x08, {2}, std::string("\x03\x09", 2)), false);
  MnistSplit s = LoadMnist(dir.string(), /*train=*/false);
  CHECK(s.images.shape() == TensorShape({2, 2, 2}));
  CHECK(s.labels.ToVector<uint8_t>() == std::vector<uint8_t>{3, 9});
  Write("weft_mnist_test/t10k-labels-idx1-ubyte", Idx(0x08, {3}, "abc"), false);
  CHECK_THROWS_WITH_AS(LoadMnist(dir.string(), false), doctest::Contains("3] labels for"), Error);
  CHECK_THROWS_WITH_AS(LoadMnist(dir.string(), true), doctest::Contains("no train-images-idx3-ubyte"), Error);
}

TEST_CASE("Fashion-MNIST from Debian's dataset-fashion-mnist") {
  if (!std::filesystem::exists(std::string(kFashionMnistDir) + "/t10k-labels-idx1-ubyte.gz")) {
    MESSAGE("skipped: dataset-fashion-mnist is not installed");
    return;
  }
  MnistSplit test = LoadMnist(kFashionMnistDir, /*train=*/false);
  CHECK(test.images.shape() == TensorShape({10000, 28, 28}));
  CHECK(test.labels.num_elements() == 10000);
  int counts[10] = {};
  for (uint8_t l : test.labels.ToVector<uint8_t>()) {
    REQUIRE(l < 10);
    counts[l]++;
  }
  for (int c : counts) CHECK(c == 1000);  // the test split is balanced
}
