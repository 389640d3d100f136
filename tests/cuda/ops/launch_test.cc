// Host tests of the CUDA kernels' launch shapes and index helpers (ops/kernels/cuda/launch.h)
// and of the cuDNN algorithm cache keys (ops/kernels/cuda/algo_cache.h): no GPU needed.
#include <doctest/doctest.h>

#include <set>

#include "core/status.h"
#include "ops/kernels/cuda/algo_cache.h"
#include "ops/kernels/cuda/launch.h"

using namespace weft;

TEST_CASE("launch shapes: enough threads for n, capped blocks, nothing for n == 0") {
  CHECK(LaunchShapeFor(0).blocks == 0);
  CHECK(LaunchShapeFor(1).blocks == 1);
  CHECK(LaunchShapeFor(256).blocks == 1);
  CHECK(LaunchShapeFor(257).blocks == 2);
  CHECK(LaunchShapeFor(257).threads == 256);
  CHECK(LaunchShapeFor(int64_t{1} << 40).blocks == kMaxBlocks);
  CHECK(LaunchShapeFor(1000, 128).blocks == 8);
}

// Every element of the broadcast output, mapped by the indexer and by the numpy rule directly.
static void CheckBroadcast(std::vector<int64_t> a, std::vector<int64_t> b, std::vector<int64_t> want) {
  CAPTURE(a.size());
  CHECK(BroadcastShape(a, b) == want);
  const BroadcastIndexer bi = MakeBroadcastIndexer(a, b);
  const int rank = static_cast<int>(want.size());
  int64_t n = 1;
  for (int64_t d : want) n *= d;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> idx(static_cast<size_t>(rank));
    for (int64_t d = rank - 1, r = i; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = r % want[static_cast<size_t>(d)];
      r /= want[static_cast<size_t>(d)];
    }
    auto offset = [&](const std::vector<int64_t>& s) {
      int64_t off = 0;
      for (size_t k = 0; k < s.size(); ++k) off = off * s[k] + (s[k] == 1 ? 0 : idx[k + want.size() - s.size()]);
      return off;
    };
    int64_t ia = -1, ib = -1;
    bi.Map(i, &ia, &ib);
    REQUIRE(ia == offset(a));
    REQUIRE(ib == offset(b));
  }
}

TEST_CASE("broadcast indexing matches numpy's rule") {
  CheckBroadcast({4, 1, 3}, {5, 1}, {4, 5, 3});
  CheckBroadcast({2, 3}, {3}, {2, 3});
  CheckBroadcast({2, 3}, {2, 3}, {2, 3});
  CheckBroadcast({}, {2, 2}, {2, 2});
  CheckBroadcast({1, 7}, {6, 1}, {6, 7});
  CheckBroadcast({2, 1, 4, 1}, {3, 1, 5}, {2, 3, 4, 5});
  CHECK(MakeBroadcastIndexer({1, 1}, {1}).rank == 0);  // a scalar in all but name
}

TEST_CASE("broadcast of incompatible shapes names both") {
  try {
    MakeBroadcastIndexer({2, 3}, {4});
    FAIL("expected InvalidArgument");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kInvalidArgument);
    CHECK(std::string(e.what()).find("[2,3] and [4]") != std::string::npos);
  }
  CHECK_THROWS_AS(MakeBroadcastIndexer(std::vector<int64_t>(9, 2), {2}), Error);
}

TEST_CASE("reduce indexing visits each input element exactly once") {
  const std::vector<int64_t> dims{2, 3, 4, 5};
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{1}, {0, 2}, {-1}, {0, 1, 2, 3}, {}, {3, 3}}) {
    const ReduceIndexer ri = MakeReduceIndexer(dims, axes);
    CHECK(ri.num_outputs * ri.reduce_count == 120);
    std::set<int64_t> seen;
    for (int64_t o = 0; o < ri.num_outputs; ++o) {
      for (int64_t r = 0; r < ri.reduce_count; ++r) seen.insert(ri.Offset(o, r));
    }
    CHECK(seen.size() == 120);
  }
  // Output o = (i, k) of a reduction over axis 1 of [2,3,4] sums x[i, 0..2, k].
  const ReduceIndexer ri = MakeReduceIndexer({2, 3, 4}, {1});
  CHECK(ri.num_outputs == 8);
  CHECK(ri.reduce_count == 3);
  CHECK(ri.Offset(5, 2) == 1 * 12 + 2 * 4 + 1);
  CHECK_THROWS_AS(MakeReduceIndexer({2, 3}, {2}), Error);
}

TEST_CASE("cuDNN algorithm cache: one entry per distinct convolution") {
  const TensorShape in{8, 28, 28, 1}, filter{3, 3, 1, 32};
  const ConvGeometry same{.stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1};
  const ConvKey k = ConvKey::Make(ConvPass::kForward, DType::kFloat32, in, filter, same);
  CHECK(k == ConvKey::Make(ConvPass::kForward, DType::kFloat32, in, filter, same));
  CHECK(k.ToString() == "fwd float32 in[8,28,28,1] filter[3,3,1,32] stride 1x1 pad 1x1 dilation 1x1");
  // Any change that changes cuDNN's choice changes the key.
  ConvGeometry strided = same;
  strided.stride_w = 2;
  const std::vector<ConvKey> others{
      ConvKey::Make(ConvPass::kBackwardData, DType::kFloat32, in, filter, same),
      ConvKey::Make(ConvPass::kBackwardFilter, DType::kFloat32, in, filter, same),
      ConvKey::Make(ConvPass::kForward, DType::kFloat64, in, filter, same),
      ConvKey::Make(ConvPass::kForward, DType::kFloat32, TensorShape{16, 28, 28, 1}, filter, same),
      ConvKey::Make(ConvPass::kForward, DType::kFloat32, in, TensorShape{5, 5, 1, 32}, same),
      ConvKey::Make(ConvPass::kForward, DType::kFloat32, in, filter, strided),
      k.WithMath(/*allow_tf32=*/true, /*only_deterministic=*/false),
      k.WithMath(/*allow_tf32=*/false, /*only_deterministic=*/true),
  };
  AlgoCache<int> cache;
  cache.Insert(k, 7);
  for (size_t i = 0; i < others.size(); ++i) {
    CHECK(!(others[i] == k));
    CHECK(!cache.Find(others[i]).has_value());
    cache.Insert(others[i], static_cast<int>(i));
  }
  CHECK(cache.size() == 9);
  CHECK(cache.Find(k) == 7);
  CHECK(k.WithMath(true, true).ToString() ==
        "fwd float32 in[8,28,28,1] filter[3,3,1,32] stride 1x1 pad 1x1 dilation 1x1 tf32 deterministic");
  CHECK(cache.Find(others[5]) == 5);
  CHECK_THROWS_AS(ConvKey::Make(ConvPass::kForward, DType::kFloat32, TensorShape{28, 28}, filter, same), Error);
}

TEST_CASE("cuDNN algorithm choice: no TF32 unless allowed, only deterministic algorithms when asked") {
  // cuDNN's ranking, best first: a failed one, one over the workspace limit, a tensor-core one, a
  // nondeterministic FMA one, a deterministic FMA one.
  const std::vector<AlgoCandidate> ranked{
      {.algo = 0, .ok = false, .workspace = 0, .tensor_math = false, .deterministic = true},
      {.algo = 1, .ok = true, .workspace = 1 << 20, .tensor_math = false, .deterministic = true},
      {.algo = 2, .ok = true, .workspace = 0, .tensor_math = true, .deterministic = true},
      {.algo = 3, .ok = true, .workspace = 0, .tensor_math = false, .deterministic = false},
      {.algo = 4, .ok = true, .workspace = 0, .tensor_math = false, .deterministic = true},
  };
  const size_t limit = 1 << 10;
  CHECK(PickConvAlgo(ranked, limit, /*allow_tensor_math=*/true, /*require_deterministic=*/false) == 2);
  CHECK(PickConvAlgo(ranked, limit, false, false) == 3);
  CHECK(PickConvAlgo(ranked, limit, false, true) == 4);
  CHECK(PickConvAlgo(ranked, size_t{1} << 20, false, true) == 1);
  CHECK_FALSE(PickConvAlgo({ranked[0], ranked[2], ranked[3]}, limit, false, true).has_value());
}

// Transpose and Tile through CopyIndexer against the index rules computed directly.
TEST_CASE("copy indexer: transpose and tile read the right input element") {
  auto coords = [](int64_t i, const std::vector<int64_t>& dims) {
    std::vector<int64_t> c(dims.size());
    for (size_t d = dims.size(); d-- > 0;) {
      c[d] = i % dims[d];
      i /= dims[d];
    }
    return c;
  };
  auto offset = [](const std::vector<int64_t>& c, const std::vector<int64_t>& dims) {
    int64_t off = 0;
    for (size_t d = 0; d < dims.size(); ++d) off = off * dims[d] + c[d];
    return off;
  };
  {
    const std::vector<int64_t> x = {2, 3, 4, 5}, perm = {3, 0, 2, 1};
    const CopyIndexer ci = MakeTransposeIndexer(x, perm);
    std::vector<int64_t> y(4);
    for (size_t k = 0; k < 4; ++k) y[k] = x[static_cast<size_t>(perm[k])];
    std::set<int64_t> seen;
    for (int64_t i = 0; i < 120; ++i) {
      const std::vector<int64_t> cy = coords(i, y);
      std::vector<int64_t> cx(4);
      for (size_t k = 0; k < 4; ++k) cx[static_cast<size_t>(perm[k])] = cy[k];  // y[.., k, ..] = x[.., perm[k], ..]
      REQUIRE(ci.Offset(i) == offset(cx, x));
      seen.insert(ci.Offset(i));
    }
    CHECK(seen.size() == 120);  // a permutation of the input
  }
  {
    const std::vector<int64_t> x = {2, 1, 3}, multiples = {2, 4, 1};
    const CopyIndexer ci = MakeTileIndexer(x, multiples);
    const std::vector<int64_t> y = {4, 4, 3};
    for (int64_t i = 0; i < 48; ++i) {
      std::vector<int64_t> c = coords(i, y);
      for (size_t k = 0; k < 3; ++k) c[k] %= x[k];
      REQUIRE(ci.Offset(i) == offset(c, x));
    }
  }
  CHECK_THROWS_AS(MakeTransposeIndexer({2, 3}, {0}), Error);
  CHECK_THROWS_AS(MakeTileIndexer(std::vector<int64_t>(kMaxDims + 1, 1), std::vector<int64_t>(kMaxDims + 1, 1)), Error);
}

TEST_CASE("ArgExtreme: strided rows, ties to the first index") {
  // [p=1, r=4, s=2]: column 0 is {3, 7, 7, 1}, column 1 is {5, 5, 2, 2}.
  const int v[] = {3, 5, 7, 5, 7, 2, 1, 2};
  CHECK(ArgExtreme(v, 4, 2, true) == 1);
  CHECK(ArgExtreme(v, 4, 2, false) == 3);
  CHECK(ArgExtreme(v + 1, 4, 2, true) == 0);
  CHECK(ArgExtreme(v + 1, 4, 2, false) == 2);
  CHECK(ArgExtreme(v, 1, 2, true) == 0);
}

TEST_CASE("reduction splits: a few outputs of many terms share blocks, fixed by the shape") {
  CHECK(ReduceSplits(1, 100) == 1);                     // too few terms to split
  CHECK(ReduceSplits(5000, 1 << 20) == 1);              // enough outputs to fill the GPU
  CHECK(ReduceSplits(1, int64_t{3} << 20) == 768);              // a global Sum of 3M elements: 4096 terms each
  CHECK(ReduceSplits(1, int64_t{1} << 31) == kReduceMaxSplits);  // capped
  CHECK(ReduceSplits(1, 5 * kReduceTermsPerSplit) == 5);         // every block keeps >= 4096 terms
  CHECK(ReduceSplits(4, int64_t{1} << 30) == kReduceBlocksWanted / 4);
  for (int64_t outputs : {1, 3, 100, 1023}) {
    for (int64_t terms : {int64_t{8192}, int64_t{1} << 20, int64_t{3} << 31}) {
      const int64_t s = ReduceSplits(outputs, terms);
      CHECK(s >= 1);
      CHECK(s <= kReduceMaxSplits);
      CHECK((s == 1 || terms / s >= kReduceTermsPerSplit));
    }
  }
}
