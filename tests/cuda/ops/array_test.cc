// The GPU kernels of the array ops (ops/kernels/cuda/{array,array_index}.cc) against the CPU kernels
// on random inputs.
// These need a GPU: without one every case says so (MESSAGE "SKIPPED ...") and returns.
#include <doctest/doctest.h>

#include <cstring>

#include "tests/cuda/gpu_test_util.h"

using namespace weft;
using namespace weft::test;

TEST_CASE("GPU BroadcastTo, ExpandDims, Squeeze and the fills match the CPU") {
  if (!HaveGpu()) return;
  ExpectGpuMatchesCpu("BroadcastTo", {R({3, 1}, 25), Ints({2, 3, 4})}, {{"Tidx", DType::kInt32}});
  ExpectGpuMatchesCpu("ExpandDims", {R({3, 4}, 26)}, {{"axis", int64_t{1}}});
  ExpectGpuMatchesCpu("Squeeze", {R({3, 1, 4}, 27)}, {{"axis", std::vector<int64_t>{1}}});
  ExpectGpuMatchesCpu("ZerosLike", {R({2, 3}, 19)});
  ExpectGpuMatchesCpu("OnesLike", {R({2, 3}, 20)});
  ExpectGpuMatchesCpu("Fill", {Ints({2, 3}), Tensor::Scalar<float>(2.5f)});
}

TEST_CASE("GPU Gather and GatherGrad match the CPU") {
  if (!HaveGpu()) return;
  ExpectGpuMatchesCpu("Gather", {R({4, 5, 3}, 21), Ints({4, 0, 0, 2})}, {{"axis", int64_t{1}}, {"Tindices", DType::kInt32}});
  // Repeated indices accumulate (atomic adds on the GPU, in any order: a float tolerance).
  ExpectGpuMatchesCpu("GatherGrad", {R({4, 5, 3}, 15), Ints({3, 0, 3, 3, 1}), Ints({4, 6, 3})},
          {{"axis", int64_t{1}}, {"Tindices", DType::kInt32}});
  ExpectGpuMatchesCpu("GatherGrad", {R({7, 2}, 16), Ints({0, 6, 6, 2, 0, 1, 5}), Ints({9, 2})},
          {{"axis", int64_t{0}}, {"Tindices", DType::kInt32}});
}

// SessionOptions::gpu.deterministic: repeated indices add in index order, the same bits every run
// (and the CPU's values within float rounding).
TEST_CASE("GPU GatherGrad with the deterministic option gives the same bits every run") {
  if (!HaveGpu()) return;
  const GpuOptions det{.deterministic = true};
  std::vector<int64_t> ids;
  for (int i = 0; i < 4096; ++i) ids.push_back((i * 7) % 13);  // every row repeated ~300 times
  const Tensor dy = R({4096, 64}, 17), idx = Ints(ids), shape = Ints({13, 64});
  const AttrMap attrs{{"axis", int64_t{0}}, {"Tindices", DType::kInt32}};
  const Tensor a = RunOp("GatherGrad", {dy, idx, shape}, attrs, kGpu, det)[0];
  const Tensor b = RunOp("GatherGrad", {dy, idx, shape}, attrs, kGpu, det)[0];
  CHECK(std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0);
  ExpectGpuMatchesCpu("GatherGrad", {dy, idx, shape}, attrs, 1e-3, det);
}

TEST_CASE("GPU Concat, Split, Tile, Transpose, Size and Rank match the CPU") {
  if (!HaveGpu()) return;
  for (int64_t axis : {0, 1, 2, -1}) {
    ExpectGpuMatchesCpu("Concat", {R({2, 3, 4}, 1), R({2, 3, 4}, 2), R({2, 3, 4}, 3)}, {{"axis", axis}}, 0);
    ExpectGpuMatchesCpu("Split", {R({2, 6, 4}, 4)}, {{"axis", axis}, {"num_split", int64_t{2}}}, 0);
  }
  ExpectGpuMatchesCpu("Concat", {R({2, 1, 4}, 5), R({2, 3, 4}, 6)}, {{"axis", int64_t{1}}}, 0);  // uneven widths
  ExpectGpuMatchesCpu("Tile", {R({2, 1, 3}, 7)}, {{"multiples", std::vector<int64_t>{2, 4, 1}}}, 0);
  ExpectGpuMatchesCpu("Tile", {Ints({1, 2, 3})}, {{"multiples", std::vector<int64_t>{3}}}, 0);
  ExpectGpuMatchesCpu("Transpose", {R({2, 3, 4}, 8)}, {{"perm", std::vector<int64_t>{2, 0, 1}}}, 0);
  ExpectGpuMatchesCpu("Transpose", {R({2, 3, 4, 5, 2}, 9)}, {{"perm", std::vector<int64_t>{4, 1, 3, 0, 2}}}, 0);
  ExpectGpuMatchesCpu("Transpose", {Ints({1, 2, 3, 4, 5, 6})}, {{"perm", std::vector<int64_t>{0}}}, 0);
  ExpectGpuMatchesCpu("Size", {R({2, 3, 4}, 10)}, {{"out_type", DType::kInt64}}, 0);
  ExpectGpuMatchesCpu("Rank", {R({2, 3, 4}, 11)}, {}, 0);
}
