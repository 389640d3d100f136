// Attributes that size memory or loops are checked for overflow and against a limit where the
// node is built (issue 17, finding 5), with the node and attr named: window arithmetic
// (ksize, strides, dilations) with checked int64 products, list outputs (num_split) up to
// kMaxListArity, dims up to TensorShape::kMaxElements. Limits: core/checked.h, core/shape.h.
// The expected values of the allowed cases are closed forms (which filter tap a dilated window
// keeps in bounds), never another run of weft.
#include <chrono>

#include "core/checked.h"
#include "ops/framework.h"
#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

using IntList = std::vector<int64_t>;

// A 3x3 filter of values 1..9 ([KH, KW, 1, 1]): f[1, 1] = 5.
Tensor Filter3x3() { return T<double>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3, 1, 1}); }

TEST_CASE("Conv2D with a huge dilation is InvalidArgument naming the attr, not a wrong result") {
  const Tensor x = T<double>({2}, {1, 1, 1, 1});
  // The case: dilation 2^62 made the window arithmetic wrap and the result x * f[0,0].
  for (int64_t d : {int64_t{1} << 62, int64_t{1} << 32, std::numeric_limits<int64_t>::max()}) {
    CAPTURE(d);
    ExpectOpError("Conv2D", {x, Filter3x3()}, {{"padding", "SAME"}, {"dilations", IntList{d, d}}},
                  Code::kInvalidArgument, "dilations");
  }
  ExpectOpError("Conv2D", {x, Filter3x3()}, {{"padding", "SAME"}, {"strides", IntList{1, int64_t{1} << 40}}},
                Code::kInvalidArgument, "strides");
  ExpectOpError("DepthwiseConv2D", {x, Filter3x3()}, {{"padding", "SAME"}, {"dilations", IntList{1, int64_t{1} << 62}}},
                Code::kInvalidArgument, "dilations");
}

TEST_CASE("Conv2D with the largest allowed dilation keeps only the centre tap in bounds") {
  // SAME, 1x1 input, 3x3 filter, dilation d: the effective window is 2d + 1, padded d on each
  // side, so the taps sit at -d, 0, d and only f[1, 1] meets the input: y = x * f[1, 1] = 10.
  const Tensor x = T<double>({2}, {1, 1, 1, 1});
  for (int64_t d : {int64_t{2}, int64_t{1} << 20, kMaxWindowAttr}) {
    CAPTURE(d);
    ExpectNear(RunOp("Conv2D", {x, Filter3x3()}, {{"padding", "SAME"}, {"dilations", IntList{d, d}}})[0],
               T<double>({10}, {1, 1, 1, 1}));
  }
}

TEST_CASE("pooling windows and strides beyond the limit are InvalidArgument naming the attr") {
  const Tensor x = Rand({1, 4, 4, 1});
  for (int64_t k : {int64_t{1} << 31, int64_t{1} << 62, std::numeric_limits<int64_t>::max()}) {
    CAPTURE(k);
    ExpectOpError("MaxPool", {x}, {{"ksize", IntList{k, 1}}, {"strides", IntList{1, 1}}, {"padding", "SAME"}},
                  Code::kInvalidArgument, "ksize");
    ExpectOpError("AvgPool", {x}, {{"ksize", IntList{1, 1}}, {"strides", IntList{1, k}}, {"padding", "SAME"}},
                  Code::kInvalidArgument, "strides");
  }
}

TEST_CASE("Split with num_split beyond kMaxListArity is a prompt InvalidArgument naming the node and attr") {
  // It used to allocate the outputs' bookkeeping for seconds and then throw bad_alloc.
  const Tensor x = Rand({4});
  for (int64_t n : {int64_t{10'000'000}, kMaxListArity + 1, int64_t{1} << 40, std::numeric_limits<int64_t>::max()}) {
    CAPTURE(n);
    const auto start = std::chrono::steady_clock::now();
    ExpectOpError("Split", {x}, {{"axis", int64_t{0}}, {"num_split", n}}, Code::kInvalidArgument, "num_split");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  }
  ExpectOpError("Split", {x}, {{"axis", int64_t{0}}, {"num_split", int64_t{10'000'000}}}, Code::kInvalidArgument,
                "Split 'op'");  // the node is named
}

TEST_CASE("a dim beyond 2^50 or a rank beyond 254 is InvalidArgument where the shape is made") {
  Graph g;
  Scope s = Scope::Root(&g);
  CHECK_THROWS_WITH_AS(ops::Placeholder(s, DType::kFloat32, TensorShape({int64_t{1} << 62})),
                       doctest::Contains("exceeds the limit 2^50"), Error);
  CHECK_THROWS_WITH_AS(TensorShape::UnknownOfRank(255), doctest::Contains("rank 255"), Error);
  CHECK_THROWS_WITH_AS(TensorShape(std::vector<int64_t>(255, 1)), doctest::Contains("maximum rank 254"), Error);
  // A shape input known only by its length: a vector of 2^40 dims is not a rank.
  const Output dims = ops::Placeholder(s, DType::kInt32, TensorShape({int64_t{1} << 40}));
  CHECK_THROWS_WITH_AS(s.Op("Fill", {dims, ops::Const(s, 1.0f)}), doctest::Contains("rank 1099511627776"), Error);
}

TEST_CASE("OneHot depth and Tile multiples whose output overflows are InvalidArgument") {
  ExpectOpError("OneHot", {T<int32_t>({0, 1})}, {{"depth", int64_t{1} << 62}}, Code::kInvalidArgument, "2^50");
  ExpectOpError("Tile", {Rand({2, 3})}, {{"multiples", IntList{int64_t{1} << 40, int64_t{1} << 40}}},
                Code::kInvalidArgument, "too many elements");
}

TEST_CASE("checked arithmetic: every overflow is InvalidArgument naming the operands") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  CHECK(CheckedMul(int64_t{1} << 31, int64_t{1} << 31, "x") == int64_t{1} << 62);
  CHECK_THROWS_WITH_AS(CheckedMul(int64_t{1} << 32, int64_t{1} << 31, "window"),
                       doctest::Contains("window: 4294967296 * 2147483648 overflows int64"), Error);
  CHECK_THROWS_AS(CheckedMul(kMin, -1, "x"), Error);
  CHECK(CheckedAdd(kMax - 1, 1, "x") == kMax);
  CHECK_THROWS_AS(CheckedAdd(kMax, 1, "x"), Error);
  CHECK_THROWS_AS(CheckedSub(kMin, 1, "x"), Error);
  CHECK(CheckedNarrow<int32_t>(int64_t{-2147483648}, "x") == INT32_MIN);
  CHECK_THROWS_WITH_AS(CheckedNarrow<int32_t>(int64_t{1} << 31, "count"),
                       doctest::Contains("count: 2147483648 is out of range [-2147483648, 2147483647]"), Error);
  CHECK_THROWS_AS(CheckedNarrow<uint8_t>(-1, "x"), Error);
  CHECK_THROWS_WITH_AS(CheckAttrRange(0, 1, 10, "num"), doctest::Contains("attr 'num' = 0 must be in [1, 10]"), Error);
}

TEST_CASE("an int attr read as int is checked, not wrapped") {
  AttrMap attrs = {{"n", AttrValue(int64_t{(int64_t{1} << 32) + 3})}};
  CHECK_THROWS_WITH_AS(GetAttr<int>(attrs, "n", "Op 'x'"), doctest::Contains("Op 'x': attr 'n'"), Error);
  attrs["n"] = int64_t{-5};
  CHECK(GetAttr<int>(attrs, "n", "Op 'x'") == -5);
}

}  // namespace
}  // namespace weft::test
