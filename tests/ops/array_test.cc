// Array ops: each kernel against a naive reference (edge shapes, empty tensors, rank 0,
// negative axes), shape functions with constant and unknown inputs, finite-difference gradients,
// gradients built over unknown dims, and the errors bad input must give.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "graph/gradients.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

using Dims = std::vector<int64_t>;
using Ints = std::vector<int64_t>;
constexpr Code kInvalid = Code::kInvalidArgument;

// ---- naive reference helpers: row-major index arithmetic on doubles

int64_t Count(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}
Dims Unravel(int64_t i, const Dims& d) {
  Dims idx(d.size());
  for (int k = static_cast<int>(d.size()) - 1; k >= 0; --k) {
    idx[k] = i % d[k];
    i /= d[k];
  }
  return idx;
}
int64_t Ravel(const Dims& idx, const Dims& d) {
  int64_t i = 0;
  for (size_t k = 0; k < d.size(); ++k) i = i * d[k] + idx[k];
  return i;
}
// A float64 tensor of `dims` with element idx = f(idx).
Tensor Make(const Dims& dims, const std::function<double(const Dims&)>& f) {
  std::vector<double> v(Count(dims));
  for (int64_t i = 0; i < Count(dims); ++i) v[i] = f(Unravel(i, dims));
  return T<double>(v, dims);
}
double At(const Tensor& t, const Dims& idx) { return t.ElementAsDouble(Ravel(idx, t.shape().dims())); }
// 0, 1, 2, ... as dtype D.
template <typename D>
Tensor Iota(const Dims& dims) {
  std::vector<double> v(Count(dims));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return T<D>(v, dims);
}
template <typename D>
Tensor Cast(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = t.ElementAsDouble(i);
  return T<D>(v, t.shape().dims());
}
Tensor Run1(std::string_view op, const std::vector<Tensor>& in, const AttrMap& attrs = {}) {
  return RunOp(op, in, attrs).at(0);
}

// Python's slice(start, stop, step) over n elements, by walking (independent of the kernel's formula).
Ints PySlice(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  auto fix = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  const int64_t b = fix(start, step > 0 ? 0 : n - 1), e = fix(stop, step > 0 ? n : -1);
  Ints out;
  for (int64_t i = b; step > 0 ? i < e : i > e; i += step) out.push_back(i);
  return out;
}

// ---- shape queries and reshapes

TEST_CASE("Shape, Size, Rank") {
  ExpectEqual(Run1("Shape", {Rand({2, 3, 0})}), T<int32_t>({2, 3, 0}));
  ExpectEqual(Run1("Shape", {Rand({4})}, {{"out_type", DType::kInt64}}), T<int64_t>({4}));
  ExpectEqual(Run1("Shape", {T<bool>({1})}), T<int32_t>({1}));
  ExpectEqual(Run1("Shape", {T<float>({5}, {})}), T<int32_t>({}, {0}));
  ExpectEqual(Run1("Size", {Rand({2, 3})}), T<int32_t>({6}, {}));
  ExpectEqual(Run1("Size", {Rand({2, 0})}, {{"out_type", DType::kInt64}}), T<int64_t>({0}, {}));
  ExpectEqual(Run1("Rank", {Rand({2, 3, 1})}), T<int32_t>({3}, {}));
  ExpectEqual(Run1("Rank", {T<uint8_t>({1}, {})}), T<int32_t>({0}, {}));
}

TEST_CASE("Reshape") {
  const Tensor x = Iota<float>({2, 3});
  ExpectEqual(Run1("Reshape", {x, T<int32_t>({3, -1})}), Iota<float>({3, 2}));
  ExpectEqual(Run1("Reshape", {x, T<int64_t>({-1})}), Iota<float>({6}));
  ExpectEqual(Run1("Reshape", {Iota<int64_t>({1, 1}), T<int32_t>({}, {0})}), Iota<int64_t>({}));
  ExpectEqual(Run1("Reshape", {Iota<bool>({0, 3}), T<int32_t>({-1, 3})}), Iota<bool>({0, 3}));
  ExpectEqual(Run1("Reshape", {Iota<uint8_t>({0, 3}), T<int32_t>({3, 0})}), Iota<uint8_t>({3, 0}));
  CheckGradient("Reshape", {Rand({2, 3}), T<int32_t>({3, 2})});

  ExpectOpError("Reshape", {x, T<int32_t>({4, 2})}, {}, kInvalid, "[2,3] (6 elements) into shape [4,2]");
  ExpectOpError("Reshape", {x, T<int32_t>({4, -1})}, {}, kInvalid, "not a multiple of 4");
  ExpectOpError("Reshape", {x, T<int32_t>({-1, -1})}, {}, kInvalid, "only one dimension may be -1");
  ExpectOpError("Reshape", {x, T<int32_t>({-2, -3})}, {}, kInvalid, "negative dimension -2");
  ExpectOpError("Reshape", {x, T<int64_t>({1LL << 40, 1LL << 40})}, {}, kInvalid, "too many elements");
  ExpectOpError("Reshape", {x, T<int32_t>({6}, {1, 1})}, {}, kInvalid, "shape");
}

TEST_CASE("Reshape shape function with constant and unknown shapes") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output known = ops::Placeholder(s, DType::kFloat32, TensorShape({2, 3}));
  Output batch = ops::Placeholder(s, DType::kFloat32, TensorShape({-1, 3}));
  CHECK(ops::Reshape(s, known, {3, -1}).shape() == TensorShape({3, 2}));
  CHECK(ops::Reshape(s, batch, {-1}).shape() == TensorShape({-1}));
  CHECK(ops::Reshape(s, batch, {-1, 6}).shape() == TensorShape({-1, 6}));
  // The target is batch's shape [?, 3]: its known dim carries over (TF's partial shape from a tensor).
  CHECK(ops::Reshape(s, known, ops::Shape(s, batch)).shape() == TensorShape({-1, 3}));
  {
    // reshape(x, [shape(x)[0], -1, 4, 2]) packed at run time: the constant dims are known at build.
    Output x = ops::Placeholder(s, DType::kFloat32, TensorShape({-1, 6, 8}));
    Output first = ops::Reshape(s, ops::StridedSlice(s, ops::Shape(s, x, DType::kInt64), {0}, {1}, {1}, 0, 0, 1), {1});
    Output dims = ops::Concat(s, {first, ops::Const(s, Ints{-1, 4, 2}, TensorShape({3}))}, 0);
    CHECK(ops::Reshape(s, x, dims).shape() == TensorShape({-1, -1, 4, 2}));
    Output x6 = ops::Placeholder(s, DType::kFloat32, TensorShape({5, 6, 8}));
    Output first6 = ops::Reshape(s, ops::StridedSlice(s, ops::Shape(s, x6, DType::kInt64), {-1}, {0}, {1}, 0, 0, 1), {1});
    CHECK(ops::Reshape(s, x6, ops::Concat(s, {first6, ops::Const(s, Ints{-1}, TensorShape({1}))}, 0)).shape() ==
          TensorShape({8, -1}));
  }
  CHECK_THROWS_WITH_AS(ops::Reshape(s, known, {4, 2}), doctest::Contains("into shape [4,2]"), Error);
  CHECK_THROWS_WITH_AS(ops::Reshape(s, batch, {-1, -1}), doctest::Contains("only one dimension"), Error);
  CHECK(ops::ExpandDims(s, batch, -1).shape() == TensorShape({-1, 3, 1}));
  CHECK(ops::Squeeze(s, batch).shape().unknown_rank());  // ? may be 1
  CHECK(ops::Concat(s, {batch, known}, 0).shape() == TensorShape({-1, 3}));
  CHECK(ops::Concat(s, {known, known}, -1).shape() == TensorShape({2, 6}));
  CHECK(ops::StridedSlice(s, batch, {0, -1}, {0, 0}, {1, 1}, 1, 0, 2).shape() == TensorShape({-1}));
  CHECK(ops::Fill(s, ops::Const(s, Ints{2, 5}, TensorShape({2})), ops::Const(s, 1.0f)).shape() == TensorShape({2, 5}));
  CHECK_THROWS_WITH_AS(ops::Fill(s, ops::Const(s, Ints{1LL << 40, 1LL << 40}, TensorShape({2})), ops::Const(s, 1.0f)),
                       doctest::Contains("too many elements"), Error);
  CHECK_THROWS_WITH_AS(ops::Concat(s, {known, ops::Placeholder(s, DType::kFloat32, TensorShape({2, 4}))}, 0),
                       doctest::Contains("input 1 has shape [2,4]"), Error);
}

TEST_CASE("Transpose") {
  const Tensor x = Rand({2, 3, 4});
  const Tensor want = Make({4, 2, 3}, [&](const Dims& i) { return At(x, {i[1], i[2], i[0]}); });
  ExpectEqual(Run1("Transpose", {x}, {{"perm", Ints{2, 0, 1}}}), want);
  ExpectEqual(Run1("Transpose", {Cast<int32_t>(Iota<double>({2, 3}))}, {{"perm", Ints{1, 0}}}),
              T<int32_t>({0, 3, 1, 4, 2, 5}, {3, 2}));
  ExpectEqual(Run1("Transpose", {Iota<uint8_t>({2, 3})}, {{"perm", Ints{0, 1}}}), Iota<uint8_t>({2, 3}));
  ExpectEqual(Run1("Transpose", {Iota<float>({0, 3})}, {{"perm", Ints{1, 0}}}), Iota<float>({3, 0}));
  ExpectEqual(Run1("Transpose", {T<bool>({1}, {})}, {{"perm", Ints{}}}), T<bool>({1}, {}));
  CheckGradient("Transpose", {Rand({2, 3, 4})}, {{"perm", Ints{2, 0, 1}}});

  ExpectOpError("Transpose", {x}, {{"perm", Ints{0, 0, 1}}}, kInvalid, "not a permutation");
  ExpectOpError("Transpose", {x}, {{"perm", Ints{1, 0}}}, kInvalid, "rank 2");
}

TEST_CASE("ExpandDims and Squeeze") {
  const Tensor x = Iota<float>({2, 3});
  ExpectEqual(Run1("ExpandDims", {x}, {{"axis", int64_t{0}}}), Iota<float>({1, 2, 3}));
  ExpectEqual(Run1("ExpandDims", {x}, {{"axis", int64_t{-1}}}), Iota<float>({2, 3, 1}));
  ExpectEqual(Run1("ExpandDims", {x}, {{"axis", int64_t{-3}}}), Iota<float>({1, 2, 3}));
  ExpectEqual(Run1("ExpandDims", {Iota<int32_t>({})}, {{"axis", int64_t{0}}}), Iota<int32_t>({1}));
  ExpectOpError("ExpandDims", {x}, {{"axis", int64_t{3}}}, kInvalid, "axis 3 out of range [-3, 2]");
  CheckGradient("ExpandDims", {Rand({2, 3})}, {{"axis", int64_t{1}}});

  const Tensor y = Iota<bool>({1, 2, 1, 3, 1});
  ExpectEqual(Run1("Squeeze", {y}), Iota<bool>({2, 3}));
  ExpectEqual(Run1("Squeeze", {y}, {{"axis", Ints{0, -1}}}), Iota<bool>({2, 1, 3}));
  ExpectEqual(Run1("Squeeze", {Iota<double>({1, 1})}), Iota<double>({}));
  ExpectEqual(Run1("Squeeze", {Iota<double>({0, 1})}), Iota<double>({0}));
  ExpectOpError("Squeeze", {y}, {{"axis", Ints{1}}}, kInvalid, "its size is 2, not 1");
  ExpectOpError("Squeeze", {y}, {{"axis", Ints{5}}}, kInvalid, "axis 5 out of range");
  CheckGradient("Squeeze", {Rand({1, 3, 1})}, {{"axis", Ints{-1}}});
}

// ---- Concat / Split

TEST_CASE("Concat") {
  const Tensor a = Rand({2, 1, 3}, -1, 1, 1), b = Rand({2, 2, 3}, -1, 1, 2), c = Rand({2, 0, 3}, -1, 1, 3);
  const Tensor want = Make({2, 3, 3}, [&](const Dims& i) {
    return i[1] < 1 ? At(a, i) : At(b, {i[0], i[1] - 1, i[2]});
  });
  ExpectEqual(Run1("Concat", {a, b, c}, {{"axis", int64_t{1}}}), want);
  ExpectEqual(Run1("Concat", {a, c, b}, {{"axis", int64_t{-2}}}), want);
  ExpectEqual(Run1("Concat", {Iota<int32_t>({2}), T<int32_t>({7})}, {{"axis", int64_t{0}}}), T<int32_t>({0, 1, 7}));
  ExpectEqual(Run1("Concat", {T<bool>({1, 0}, {2, 1}), T<bool>({0, 1}, {2, 1})}, {{"axis", int64_t{1}}}),
              T<bool>({1, 0, 0, 1}, {2, 2}));
  ExpectEqual(Run1("Concat", {Iota<float>({3})}, {{"axis", int64_t{0}}}), Iota<float>({3}));
  CheckGradient("Concat", {Rand({2, 1, 3}, -1, 1, 1), Rand({2, 2, 3}, -1, 1, 2), Rand({2, 0, 3})},
                {{"axis", int64_t{1}}});
  CheckGradient("Concat", {Rand({2, 3}, -1, 1, 1), Rand({1, 3}, -1, 1, 2)}, {{"axis", int64_t{0}}});

  ExpectOpError("Concat", {Rand({2, 3}), Rand({3, 3})}, {{"axis", int64_t{1}}}, kInvalid,
                "input 1 has shape [3,3] but input 0 has shape [2,3]");
  ExpectOpError("Concat", {Rand({2, 3}), Rand({2, 3, 1})}, {{"axis", int64_t{0}}}, kInvalid, "input 1");
  ExpectOpError("Concat", {Rand({2}), Rand({2})}, {{"axis", int64_t{1}}}, kInvalid, "axis 1 out of range");
  ExpectOpError("Concat", {T<float>({1}, {}), T<float>({1}, {})}, {{"axis", int64_t{0}}}, kInvalid, "out of range");
}

TEST_CASE("Split") {
  const Tensor x = Rand({2, 6, 1});
  auto out = RunOp("Split", {x}, {{"axis", int64_t{1}}, {"num_split", int64_t{3}}});
  REQUIRE(out.size() == 3);
  for (int p = 0; p < 3; ++p) {
    ExpectEqual(out[p], Make({2, 2, 1}, [&](const Dims& i) { return At(x, {i[0], 2 * p + i[1], i[2]}); }));
  }
  out = RunOp("Split", {Iota<int64_t>({4, 0})}, {{"axis", int64_t{-2}}, {"num_split", int64_t{2}}});
  ExpectEqual(out[1], Iota<int64_t>({2, 0}));
  ExpectEqual(RunOp("Split", {Iota<uint8_t>({3})}, {{"axis", int64_t{0}}, {"num_split", int64_t{3}}})[2],
              T<uint8_t>({2}));
  CheckGradient("Split", {Rand({2, 6})}, {{"axis", int64_t{1}}, {"num_split", int64_t{3}}});
  CheckGradient("Split", {Rand({4, 3})}, {{"axis", int64_t{0}}, {"num_split", int64_t{2}}});
  ExpectOpError("Split", {Rand({2, 5})}, {{"axis", int64_t{1}}, {"num_split", int64_t{2}}}, kInvalid,
                "does not divide into 2");
  ExpectOpError("Split", {Rand({2, 5})}, {{"axis", int64_t{2}}, {"num_split", int64_t{1}}}, kInvalid, "out of range");
}

// ---- slicing

TEST_CASE("Slice") {
  const Tensor x = Rand({3, 4, 2});
  ExpectEqual(Run1("Slice", {x}, {{"begin", Ints{1, 1, 0}}, {"size", Ints{2, -1, 1}}}),
              Make({2, 3, 1}, [&](const Dims& i) { return At(x, {i[0] + 1, i[1] + 1, i[2]}); }));
  ExpectEqual(Run1("Slice", {x}, {{"begin", Ints{3, 0, 0}}, {"size", Ints{-1, 2, 2}}}), Make({0, 2, 2}, nullptr));
  ExpectEqual(Run1("Slice", {Iota<int32_t>({5})}, {{"begin", Ints{2}}, {"size", Ints{2}}}), T<int32_t>({2, 3}));
  ExpectEqual(Run1("Slice", {Iota<bool>({})}, {{"begin", Ints{}}, {"size", Ints{}}}), Iota<bool>({}));
  CheckGradient("Slice", {Rand({3, 4, 2})}, {{"begin", Ints{1, 1, 0}}, {"size", Ints{2, -1, 1}}});
  ExpectOpError("Slice", {x}, {{"begin", Ints{1, 1, 0}}, {"size", Ints{3, 1, 1}}}, kInvalid,
                "begin 1 size 3 out of bounds for dim 0 of shape [3,4,2]");
  ExpectOpError("Slice", {x}, {{"begin", Ints{-1, 0, 0}}, {"size", Ints{1, 1, 1}}}, kInvalid, "out of bounds");
  ExpectOpError("Slice", {x}, {{"begin", Ints{0}}, {"size", Ints{1}}}, kInvalid, "rank 1");
}

// One StridedSlice case on a [5, 6] (or any 2-D) tensor against python slicing per dim.
struct Spec2 {
  Ints begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, shrink = 0;
};
void CheckStridedSlice2D(const Tensor& x, const Spec2& c) {
  AttrMap attrs = {{"begin", c.begin},          {"end", c.end},           {"strides", c.strides},
                   {"begin_mask", c.begin_mask}, {"end_mask", c.end_mask}, {"shrink_axis_mask", c.shrink}};
  std::vector<Ints> sel(2);
  Dims out_dims;
  for (int k = 0; k < 2; ++k) {
    const int64_t n = x.dim(k);
    if (k >= static_cast<int>(c.begin.size())) {
      sel[k] = PySlice(n, {}, {}, 1);
    } else if ((c.shrink >> k) & 1) {
      sel[k] = {c.begin[k] < 0 ? c.begin[k] + n : c.begin[k]};
      continue;
    } else {
      sel[k] = PySlice(n, (c.begin_mask >> k) & 1 ? std::nullopt : std::optional(c.begin[k]),
                       (c.end_mask >> k) & 1 ? std::nullopt : std::optional(c.end[k]), c.strides[k]);
    }
    out_dims.push_back(static_cast<int64_t>(sel[k].size()));
  }
  std::vector<double> want;
  for (int64_t i : sel[0]) for (int64_t j : sel[1]) want.push_back(At(x, {i, j}));
  INFO("begin " << c.begin.size() << " masks " << c.begin_mask << "/" << c.end_mask << "/" << c.shrink);
  ExpectEqual(Run1("StridedSlice", {x}, attrs), T<double>(want, out_dims));
  if (Count(out_dims) > 0) CheckGradient("StridedSlice", {x}, attrs);
}

TEST_CASE("StridedSlice") {
  const Tensor x = Rand({5, 6});
  CheckStridedSlice2D(x, {{1, 0}, {4, 6}, {1, 2}});
  CheckStridedSlice2D(x, {{-1, 5}, {0, 1}, {-1, -2}});             // negative strides and index
  CheckStridedSlice2D(x, {{0, 0}, {0, 0}, {-2, 1}, 1, 2});         // masks: x[::-2, 0:]
  CheckStridedSlice2D(x, {{0, 0}, {0, 0}, {1, -1}, 0, 3});         // x[0:, ::-1]
  CheckStridedSlice2D(x, {{-2, 1}, {0, 5}, {1, 3}, 0, 0, 1});      // shrink dim 0 at -2
  CheckStridedSlice2D(x, {{1, -1}, {2, 0}, {1, 1}, 0, 0, 3});      // shrink both: a scalar
  CheckStridedSlice2D(x, {{-100}, {100}, {1}});                    // clamped; dim 1 whole
  CheckStridedSlice2D(x, {{100, 2}, {-100, 3}, {-3, 1}});          // clamped backwards
  CheckStridedSlice2D(x, {{3, 0}, {1, 6}, {1, 1}});                // empty
  CheckStridedSlice2D(x, {{}, {}, {}});
  ExpectEqual(Run1("StridedSlice", {Iota<int32_t>({6})}, {{"begin", Ints{4}}, {"end", Ints{0}}, {"strides", Ints{-3}}}),
              T<int32_t>({4, 1}));
  ExpectEqual(Run1("StridedSlice", {Iota<bool>({0, 2})}, {{"begin", Ints{0}}, {"end", Ints{5}}, {"strides", Ints{1}}}),
              Iota<bool>({0, 2}));
  const AttrMap bad = {{"begin", Ints{5}}, {"end", Ints{6}}, {"strides", Ints{1}}, {"shrink_axis_mask", int64_t{1}}};
  ExpectOpError("StridedSlice", {x}, bad, kInvalid, "index 5 out of range [-5, 5) for dim 0");
  ExpectOpError("StridedSlice", {x}, {{"begin", Ints{0}}, {"end", Ints{1}}, {"strides", Ints{0}}}, kInvalid,
                "stride 0");
  ExpectOpError("StridedSlice", {x}, {{"begin", Ints{0, 0, 0}}, {"end", Ints{1, 1, 1}}, {"strides", Ints{1, 1, 1}}},
                kInvalid, "rank 2");
}

TEST_CASE("Gather") {
  const Tensor p = Rand({4, 3});
  const Tensor idx = T<int32_t>({3, 0, 3, 1}, {2, 2});
  ExpectEqual(Run1("Gather", {p, idx}),
              Make({2, 2, 3}, [&](const Dims& i) {
                return At(p, {static_cast<int64_t>(At(idx, {i[0], i[1]})), i[2]});
              }));
  ExpectEqual(Run1("Gather", {p, T<int64_t>({2, 0})}, {{"axis", int64_t{-1}}}),
              Make({4, 2}, [&](const Dims& i) { return At(p, {i[0], i[1] == 0 ? 2 : 0}); }));
  ExpectEqual(Run1("Gather", {Iota<uint8_t>({5}), T<int64_t>({4}, {})}), T<uint8_t>({4}, {}));
  ExpectEqual(Run1("Gather", {p, T<int32_t>({}, {0})}), Make({0, 3}, nullptr));
  ExpectEqual(Run1("Gather", {Iota<bool>({0, 2}), T<int32_t>({1, 0}, {1, 2})}, {{"axis", int64_t{1}}}),
              Iota<bool>({0, 1, 2}));
  CheckGradient("Gather", {Rand({4, 3}), T<int32_t>({3, 0, 3, 1}, {2, 2})});            // repeated rows add up
  CheckGradient("Gather", {Rand({2, 4, 2}), T<int64_t>({1, 1, 3})}, {{"axis", int64_t{1}}});
  CheckGradient("GatherGrad", {Rand({2, 3}), T<int32_t>({1, 1}), T<int32_t>({4, 3})}, {}, {0});

  ExpectOpError("Gather", {p, T<int32_t>({0, 7})}, {}, kInvalid, "indices[1] = 7 is out of range [0, 4)");
  ExpectOpError("Gather", {p, T<int64_t>({-1})}, {}, kInvalid, "indices[0] = -1 is out of range");
  ExpectOpError("Gather", {p, T<int32_t>({0})}, {{"axis", int64_t{2}}}, kInvalid, "axis 2 out of range");
  ExpectOpError("Gather", {T<float>({1}, {}), T<int32_t>({0})}, {}, kInvalid, "out of range");
}

TEST_CASE("UnsortedSegmentSum") {
  // tf.math.unsorted_segment_sum's documented example: rows 0 and 2 go to segment 0.
  const Tensor c = T<int32_t>({1, 2, 3, 4, 5, 6, 7, 8, 4, 3, 2, 1}, {3, 4});
  ExpectEqual(Run1("UnsortedSegmentSum", {c, T<int32_t>({0, 1, 0}), T<int32_t>({2}, {})}),
              T<int32_t>({5, 5, 5, 5, 5, 6, 7, 8}, {2, 4}));
  // Negative ids are dropped, empty segments stay 0, ids of rank 2 over data [2, 2, 2].
  ExpectEqual(Run1("UnsortedSegmentSum", {T<double>({1, 2, 3, 4}), T<int64_t>({2, -1, 2, 0}), T<int64_t>({4}, {})}),
              T<double>({4, 0, 4, 0}));
  const Tensor d = Rand({2, 2, 2});
  const Tensor ids = T<int32_t>({1, 0, 1, 1}, {2, 2});
  ExpectNear(Run1("UnsortedSegmentSum", {d, ids, T<int32_t>({3}, {})}),
             Make({3, 2}, [&](const Dims& i) {
               double sum = 0;
               for (int64_t a = 0; a < 2; ++a) {
                 for (int64_t b = 0; b < 2; ++b) {
                   if (At(ids, {a, b}) == static_cast<double>(i[0])) sum += At(d, {a, b, i[1]});
                 }
               }
               return sum;
             }));
  ExpectEqual(Run1("UnsortedSegmentSum", {Rand({0, 3}), T<int32_t>({}, {0}), T<int32_t>({2}, {})}),
              T<double>({0, 0, 0, 0, 0, 0}, {2, 3}));
  CheckGradient("UnsortedSegmentSum", {d, T<int32_t>({1, -1, 1, 2}, {2, 2}), T<int32_t>({3}, {})}, {}, {0});
  ExpectOpError("UnsortedSegmentSum", {d, T<int32_t>({0, 3, 1, 1}, {2, 2}), T<int32_t>({3}, {})}, {}, kInvalid,
                "segment_ids[1] = 3 is out of range [0, 3)");
  ExpectOpError("UnsortedSegmentSum", {d, T<int32_t>({0, 1, 1}), T<int32_t>({3}, {})}, {}, kInvalid,
                "segment_ids of shape [3] must be a prefix of data's shape [2,2,2]");
  ExpectOpError("UnsortedSegmentSum", {d, ids, T<int32_t>({-1}, {})}, {}, kInvalid, "non-negative");
}

TEST_CASE("Pad") {
  const Tensor x = Rand({2, 3});
  const Ints pad = {1, 0, 2, 1};
  ExpectEqual(Run1("Pad", {x}, {{"paddings", pad}, {"constant_value", 5.0}}),
              Make({3, 6}, [&](const Dims& i) {
                return (i[0] >= 1 && i[1] >= 2 && i[1] < 5) ? At(x, {i[0] - 1, i[1] - 2}) : 5.0;
              }));
  ExpectEqual(Run1("Pad", {Iota<int32_t>({0})}, {{"paddings", Ints{1, 1}}}), T<int32_t>({0, 0}));
  ExpectEqual(Run1("Pad", {T<bool>({1}, {})}, {{"paddings", Ints{}}}), T<bool>({1}, {}));
  ExpectEqual(Run1("Pad", {T<uint8_t>({7})}, {{"paddings", Ints{0, 2}}, {"constant_value", 1.0}}),
              T<uint8_t>({7, 1, 1}));
  CheckGradient("Pad", {Rand({2, 3})}, {{"paddings", pad}});
  CheckGradient("Pad", {Rand({2, 2})}, {{"paddings", Ints{0, 0, 3, 0}}});
  ExpectOpError("Pad", {x}, {{"paddings", Ints{1, 1}}}, kInvalid, "rank 1");
  ExpectOpError("Pad", {x}, {{"paddings", Ints{0, -1, 0, 0}}}, kInvalid, "non-negative");
  ExpectOpError("Pad", {x}, {{"paddings", Ints{0, 1LL << 62, 0, 0}}}, kInvalid, "not huge");
  ExpectOpError("Pad", {x}, {{"paddings", Ints{0, 1LL << 30, 0, 1LL << 30}}}, kInvalid, "too many elements");
}

// ---- Tile, BroadcastTo, fills

TEST_CASE("Tile") {
  const Tensor x = Rand({2, 3});
  ExpectEqual(Run1("Tile", {x}, {{"multiples", Ints{2, 3}}}),
              Make({4, 9}, [&](const Dims& i) { return At(x, {i[0] % 2, i[1] % 3}); }));
  ExpectEqual(Run1("Tile", {x}, {{"multiples", Ints{1, 0}}}), Make({2, 0}, nullptr));
  ExpectEqual(Run1("Tile", {T<int32_t>({4}, {})}, {{"multiples", Ints{}}}), T<int32_t>({4}, {}));
  ExpectEqual(Run1("Tile", {T<bool>({1, 0})}, {{"multiples", Ints{2}}}), T<bool>({1, 0, 1, 0}));
  ExpectOpError("Tile", {x}, {{"multiples", Ints{2}}}, kInvalid, "rank 1");
  ExpectOpError("Tile", {x}, {{"multiples", Ints{1, -1}}}, kInvalid, "negative multiple");
  ExpectOpError("Tile", {x}, {{"multiples", Ints{1LL << 40, 1LL << 40}}}, kInvalid, "too many elements");
  ExpectOpError("Tile", {x}, {{"multiples", Ints{1LL << 60, 1}}}, kInvalid, "too large");
  CheckGradient("Tile", {Rand({2, 3})}, {{"multiples", Ints{2, 3}}});
  CheckGradient("Tile", {Rand({3, 1, 2})}, {{"multiples", Ints{1, 4, 2}}});
}

TEST_CASE("BroadcastTo") {
  const Tensor x = Rand({3, 1});
  ExpectEqual(Run1("BroadcastTo", {x, T<int32_t>({2, 3, 4})}),
              Make({2, 3, 4}, [&](const Dims& i) { return At(x, {i[1], 0}); }));
  ExpectEqual(Run1("BroadcastTo", {T<int64_t>({9}, {}), T<int64_t>({2})}), T<int64_t>({9, 9}));
  ExpectEqual(Run1("BroadcastTo", {T<bool>({1}), T<int32_t>({0})}), T<bool>({}, {0}));
  CheckGradient("BroadcastTo", {Rand({3, 1}), T<int32_t>({2, 3, 4})});
  ExpectOpError("BroadcastTo", {x, T<int32_t>({3, 4, 2})}, {}, kInvalid, "cannot broadcast shape [3,1] to [3,4,2]");
  ExpectOpError("BroadcastTo", {x, T<int32_t>({2})}, {}, kInvalid, "cannot broadcast");
}

TEST_CASE("Fill, ZerosLike, OnesLike") {
  ExpectEqual(Run1("Fill", {T<int32_t>({2, 3}), T<float>({7}, {})}), T<float>(std::vector<double>(6, 7), {2, 3}));
  ExpectEqual(Run1("Fill", {T<int64_t>({0, 3}), T<bool>({1}, {})}), T<bool>({}, {0, 3}));
  ExpectEqual(Run1("Fill", {T<int32_t>({}, {0}), T<uint8_t>({4}, {})}), T<uint8_t>({4}, {}));
  ExpectOpError("Fill", {T<int32_t>({2, -3}), T<float>({1}, {})}, {}, kInvalid, "negative dimension -3");
  ExpectOpError("Fill", {T<int64_t>({1LL << 40, 1LL << 40}), T<float>({1}, {})}, {}, kInvalid, "too many elements");
  ExpectOpError("Fill", {T<int32_t>({2}), T<float>({1, 2})}, {}, kInvalid, "value");

  ExpectEqual(Run1("ZerosLike", {Rand({2, 3})}), Make({2, 3}, [](const Dims&) { return 0.0; }));
  ExpectEqual(Run1("OnesLike", {Rand({2, 0})}), Make({2, 0}, nullptr));
  ExpectEqual(Run1("OnesLike", {T<bool>({0, 0})}), T<bool>({1, 1}));
  ExpectEqual(Run1("ZerosLike", {T<int64_t>({5}, {})}), T<int64_t>({0}, {}));
  ExpectEqual(Run1("OnesLike", {T<uint8_t>({5, 6})}), T<uint8_t>({1, 1}));
  CheckGradient("Fill", {T<int32_t>({2, 2}), Rand({})});
}

TEST_CASE("OneHot") {
  const Tensor idx = T<int32_t>({0, 2, -1, 3});
  ExpectEqual(Run1("OneHot", {idx}, {{"depth", int64_t{3}}}),
              T<float>({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, {4, 3}));
  ExpectEqual(Run1("OneHot", {idx}, {{"depth", int64_t{3}}, {"axis", int64_t{0}}, {"on_value", 5.0},
                                     {"off_value", -1.0}, {"dtype", DType::kInt32}}),
              T<int32_t>({5, -1, -1, -1, -1, -1, -1, -1, -1, 5, -1, -1}, {3, 4}));
  const Tensor idx2 = T<int64_t>({1, 0, 2, 1}, {2, 2});
  ExpectEqual(Run1("OneHot", {idx2}, {{"depth", int64_t{3}}, {"axis", int64_t{1}}, {"dtype", DType::kFloat64}}),
              Make({2, 3, 2}, [&](const Dims& i) { return At(idx2, {i[0], i[2]}) == i[1] ? 1.0 : 0.0; }));
  ExpectEqual(Run1("OneHot", {T<uint8_t>({}, {0})}, {{"depth", int64_t{2}}, {"dtype", DType::kBool}}),
              T<bool>({}, {0, 2}));
  ExpectOpError("OneHot", {idx}, {{"depth", int64_t{3}}, {"axis", int64_t{2}}}, kInvalid, "axis 2 out of range");
}

// ---- gradients built over unknown dims must agree with the ones built over known shapes

std::vector<Tensor> GradientsOf(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs,
                                const std::vector<int>& wrt, bool unknown_dims) {
  Graph g;
  Scope s = Scope::Root(&g);
  std::vector<Output> in;
  for (const Tensor& t : inputs) {
    const bool hide = unknown_dims && IsFloating(t.dtype());
    in.push_back(ops::Placeholder(s, t.dtype(), hide ? TensorShape::UnknownOfRank(t.rank()) : t.shape()));
  }
  Node* n = s.AddNode(op, in, attrs);
  std::vector<std::pair<Output, Tensor>> feeds;
  for (size_t i = 0; i < in.size(); ++i) feeds.emplace_back(in[i], inputs[i]);
  Session sess(&g);
  std::vector<Output> ys, xs, grad_ys;
  for (int k = 0; k < n->num_outputs(); ++k) ys.emplace_back(n, k);
  const std::vector<Tensor> y = sess.Run(feeds, ys);
  for (size_t k = 0; k < ys.size(); ++k) grad_ys.push_back(ops::Const(s, Rand(y[k].shape().dims(), 0.5, 1.5, 7 + k)));
  for (int i : wrt) xs.push_back(in[i]);
  return sess.Run(feeds, Gradients(s, ys, xs, grad_ys));
}

TEST_CASE("gradients with dims unknown at build time") {
  struct Case {
    std::string op;
    std::vector<Tensor> inputs;
    AttrMap attrs;
    std::vector<int> wrt;
  };
  const std::vector<Case> cases = {
      {"Reshape", {Rand({2, 3}), T<int32_t>({-1})}, {}, {0}},
      {"ExpandDims", {Rand({2, 3})}, {{"axis", int64_t{1}}}, {0}},
      {"Squeeze", {Rand({2, 1})}, {{"axis", Ints{1}}}, {0}},
      {"Concat", {Rand({2, 3}, -1, 1, 1), Rand({2, 2}, -1, 1, 2)}, {{"axis", int64_t{1}}}, {0, 1}},
      {"Concat", {Rand({3, 2}, -1, 1, 1), Rand({1, 2}, -1, 1, 2)}, {{"axis", int64_t{0}}}, {0, 1}},
      {"Slice", {Rand({3, 4})}, {{"begin", Ints{1, 0}}, {"size", Ints{-1, 2}}}, {0}},
      {"StridedSlice", {Rand({4, 3})}, {{"begin", Ints{-1}}, {"end", Ints{0}}, {"strides", Ints{-2}}}, {0}},
      {"Gather", {Rand({4, 2}), T<int32_t>({3, 3, 0})}, {}, {0}},
      {"Pad", {Rand({2, 3})}, {{"paddings", Ints{1, 0, 0, 2}}}, {0}},
      {"BroadcastTo", {Rand({3, 1}), T<int32_t>({2, 3, 4})}, {}, {0}},
      {"Tile", {Rand({2, 3})}, {{"multiples", Ints{2, 2}}}, {0}},
  };
  for (const Case& c : cases) {
    INFO("op " << c.op);
    const std::vector<Tensor> known = GradientsOf(c.op, c.inputs, c.attrs, c.wrt, false);
    const std::vector<Tensor> unknown = GradientsOf(c.op, c.inputs, c.attrs, c.wrt, true);
    REQUIRE(known.size() == unknown.size());
    for (size_t i = 0; i < known.size(); ++i) ExpectNear(unknown[i], known[i], 1e-12, 1e-12);
  }
}

TEST_CASE("second-order helpers") {
  CheckGradient("StridedSliceGrad", {T<int32_t>({4, 3}), Rand({2, 3})},
                {{"begin", Ints{3}}, {"end", Ints{0}}, {"strides", Ints{-2}}}, {1});
  CheckGradient("ConcatGrad", {Rand({2, 5}), T<int64_t>({2, 2}), T<int64_t>({2, 3})}, {{"axis", int64_t{1}}});
  ExpectOpError("ConcatGrad", {Rand({2, 5}), T<int64_t>({2, 2}), T<int64_t>({2, 2})}, {{"axis", int64_t{1}}}, kInvalid,
                "shapes add up to 4 on axis 1 but dy has shape [2,5]");
  ExpectOpError("ConcatGrad", {Rand({2, 5}), T<int64_t>({3, 2}), T<int64_t>({2, 3})}, {{"axis", int64_t{1}}}, kInvalid,
                "shapes[0] = [3,2] does not fit dy of shape [2,5]");
  ExpectOpError("StridedSliceGrad", {T<int32_t>({4, 3}), Rand({3, 3})},
                {{"begin", Ints{3}}, {"end", Ints{0}}, {"strides", Ints{-2}}}, kInvalid, "dy has shape [3,3]");
  ExpectOpError("GatherGrad", {Rand({2, 3}), T<int32_t>({1, 4}), T<int32_t>({4, 3})}, {}, kInvalid,
                "indices[1] = 4 is out of range [0, 4)");
  // Forward against hand-computed values: each helper is the adjoint of its forward op.
  ExpectEqual(RunOp("StridedSliceGrad", {T<int32_t>({4, 3}), T<double>({1, 2, 3, 4, 5, 6}, {2, 3})},
                    {{"begin", Ints{3}}, {"end", Ints{0}}, {"strides", Ints{-2}}})[0],
              T<double>({0, 0, 0, 4, 5, 6, 0, 0, 0, 1, 2, 3}, {4, 3}));  // rows 3 and 1 of x
  const auto parts = RunOp("ConcatGrad", {T<double>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 5}), T<int64_t>({2, 2}),
                                          T<int64_t>({2, 3})}, {{"axis", int64_t{1}}});
  ExpectEqual(parts[0], T<double>({1, 2, 6, 7}, {2, 2}));
  ExpectEqual(parts[1], T<double>({3, 4, 5, 8, 9, 10}, {2, 3}));
  // Repeated indices accumulate: row 1 gets dy rows 0 and 2.
  ExpectEqual(RunOp("GatherGrad", {T<double>({1, 2, 3, 4, 5, 6}, {3, 2}), T<int32_t>({1, 0, 1}), T<int32_t>({3, 2})})[0],
              T<double>({3, 4, 6, 8, 0, 0}, {3, 2}));
}

TEST_CASE("array ops reject bad dtypes and arities") {
  ExpectOpError("Shape", {Rand({2})}, {{"out_type", DType::kFloat32}}, kInvalid, "float32");
  ExpectOpError("Size", {Rand({2})}, {{"out_type", DType::kFloat64}}, kInvalid, "float64");
  ExpectOpError("Rank", {Rand({2}), Rand({2})}, {}, kInvalid, "expects 1 inputs, got 2");
  ExpectOpError("ZerosLike", {}, {}, kInvalid, "expects 1 inputs, got 0");
  ExpectOpError("OnesLike", {Rand({2}), Rand({2})}, {}, kInvalid, "expects 1 inputs, got 2");
  ExpectOpError("ReducedShape", {Rand({2})}, {}, kInvalid, "float64");
  ExpectEqual(RunOp("ReducedShape", {T<int32_t>({2, 3, 4})}, {{"axis", Ints{0, -1}}})[0], T<int32_t>({1, 3, 1}));
  ExpectEqual(RunOp("ReducedShape", {T<int64_t>({2, 3})})[0], T<int64_t>({1, 1}));
}

// Sizes above the kernels' 64 KiB threshold take the tiled and parallel copy paths.
TEST_CASE("large tensors match the reference") {
  const Tensor x = Rand({67, 130, 3});
  ExpectEqual(Run1("Transpose", {x}, {{"perm", Ints{1, 2, 0}}}),
              Make({130, 3, 67}, [&](const Dims& i) { return At(x, {i[2], i[0], i[1]}); }));
  ExpectEqual(Run1("Transpose", {Cast<float>(x)}, {{"perm", Ints{2, 1, 0}}}),
              Cast<float>(Make({3, 130, 67}, [&](const Dims& i) { return At(x, {i[2], i[1], i[0]}); })));
  ExpectEqual(Run1("Concat", {x, x}, {{"axis", int64_t{1}}}),
              Make({67, 260, 3}, [&](const Dims& i) { return At(x, {i[0], i[1] % 130, i[2]}); }));
  ExpectEqual(Run1("Tile", {x}, {{"multiples", Ints{1, 2, 2}}}),
              Make({67, 260, 6}, [&](const Dims& i) { return At(x, {i[0], i[1] % 130, i[2] % 3}); }));
  ExpectEqual(Run1("StridedSlice", {x}, {{"begin", Ints{-1, 0}}, {"end", Ints{0, 130}}, {"strides", Ints{-1, 1}},
                                         {"end_mask", int64_t{1}}}),
              Make({67, 130, 3}, [&](const Dims& i) { return At(x, {66 - i[0], i[1], i[2]}); }));
  std::vector<double> idx;
  for (int i = 0; i < 500; ++i) idx.push_back((i * 37) % 67);
  ExpectEqual(Run1("Gather", {x, T<int32_t>(idx)}),
              Make({500, 130, 3}, [&](const Dims& i) { return At(x, {static_cast<int64_t>(idx[i[0]]), i[1], i[2]}); }));
}

// Reshape, ExpandDims and Squeeze return views of their input, not copies.
TEST_CASE("reshapes share the input buffer") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat32, TensorShape({2, 3}));
  Output r = ops::Reshape(s, x, {3, 2});
  Output e = ops::ExpandDims(s, r, 0);
  Output q = ops::Squeeze(s, e);
  Session sess(&g);
  const Tensor value = Iota<float>({2, 3});
  const std::vector<Tensor> out = sess.Run({{x, value}}, {r, e, q});
  CHECK(out[0].shape() == TensorShape({3, 2}));
  CHECK(out[1].shape() == TensorShape({1, 3, 2}));
  CHECK(out[2].shape() == TensorShape({3, 2}));
  for (const Tensor& t : out) CHECK(t.SharesBufferWith(value));
}

}  // namespace
}  // namespace weft::test
