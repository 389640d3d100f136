// Launch shapes and index helpers of the CUDA kernels, plain C++ on both sides: nvcc compiles them
// into the kernels (.cu) and the host tests check them without a GPU (tests/cuda/ops/launch_test.cc).
//
//   LaunchShape ls = LaunchShapeFor(n);                 // 1-D grid-stride: <<<ls.blocks, ls.threads>>>
//   BroadcastIndexer bi = MakeBroadcastIndexer({4, 1, 3}, {5, 1});   // out [4,5,3]
//   int64_t ia, ib; bi.Map(i, &ia, &ib);                // element i of out reads a[ia], b[ib]
//   ReduceIndexer ri = MakeReduceIndexer({2, 3, 4}, {1});  // out [2,4]: 2*4 outputs of 3 terms
//   ri.Offset(o, r);                                    // offset of term r of output o in the input
//   CopyIndexer ci = MakeTransposeIndexer({2, 3, 4}, {2, 0, 1});   // out [4,2,3]
//   ci.Offset(i);                                       // element i of out reads x[ci.Offset(i)]
//
// Shapes are row-major; at most kMaxDims dims (more is InvalidArgument when the indexer is made).
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#if defined(__CUDACC__)
#define WEFT_HD __host__ __device__
#else
#define WEFT_HD
#endif

namespace weft {

inline constexpr int kMaxDims = 8;
inline constexpr int kThreadsPerBlock = 256;
// Grid-stride loops cover the rest: more blocks than this only adds scheduling work.
inline constexpr int64_t kMaxBlocks = 4096;

struct LaunchShape {
  int blocks = 0;
  int threads = 0;
};

// A 1-D grid for `n` elements (a grid-stride loop in the kernel covers n > blocks * threads).
// n == 0 gives zero blocks: the caller skips the launch.
inline LaunchShape LaunchShapeFor(int64_t n, int threads = kThreadsPerBlock, int64_t max_blocks = kMaxBlocks) {
  if (n <= 0) return {0, threads};
  const int64_t blocks = (n + threads - 1) / threads;
  return {static_cast<int>(blocks < max_blocks ? blocks : max_blocks), threads};
}

// Element i of a broadcast binary op's output, as offsets into its two inputs (numpy rules: dims
// aligned from the right, a dim of 1 repeats). Dims of size 1 in the output are folded away.
struct BroadcastIndexer {
  int rank = 0;
  int64_t out_dims[kMaxDims] = {};
  int64_t a_strides[kMaxDims] = {};  // 0 where a repeats along the dim
  int64_t b_strides[kMaxDims] = {};

  WEFT_HD void Map(int64_t i, int64_t* ia, int64_t* ib) const {
    int64_t a = 0, b = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t k = i % out_dims[d];
      i /= out_dims[d];
      a += k * a_strides[d];
      b += k * b_strides[d];
    }
    *ia = a;
    *ib = b;
  }
};

// How many blocks share each output of a reduction (reduce.cu). One block per output fills the GPU
// when there are many outputs; a few outputs with many terms each (a global Sum: one output)
// would run on a few SMs, so their terms are cut into `splits` fixed, contiguous ranges, each
// reduced by its own block into a partial, and the partials combined by a second pass. The cut
// depends only on the shape, so the result has the same bits every run. 1: no split.
inline constexpr int64_t kReduceTermsPerSplit = 4096;  // fewer terms per block than this: not worth it
inline constexpr int64_t kReduceMaxSplits = 1024;
inline constexpr int64_t kReduceBlocksWanted = 1024;   // enough blocks to fill an H100 (132 SMs) several times
inline int64_t ReduceSplits(int64_t num_outputs, int64_t reduce_count) {
  if (num_outputs <= 0 || num_outputs >= kReduceBlocksWanted || reduce_count < 2 * kReduceTermsPerSplit) return 1;
  int64_t splits = (kReduceBlocksWanted + num_outputs - 1) / num_outputs;
  splits = splits < kReduceMaxSplits ? splits : kReduceMaxSplits;
  const int64_t by_terms = reduce_count / kReduceTermsPerSplit;
  return splits < by_terms ? splits : by_terms;
}

// Throws InvalidArgument naming both shapes when they do not broadcast.
BroadcastIndexer MakeBroadcastIndexer(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// The broadcast output shape of a and b (same rules).
std::vector<int64_t> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// A reduction over some axes of an input: output o (the kept dims, row-major) sums terms
// r = 0 .. reduce_count-1 (the reduced dims, row-major).
struct ReduceIndexer {
  int kept_rank = 0, reduced_rank = 0;
  int64_t kept_dims[kMaxDims] = {}, kept_strides[kMaxDims] = {};
  int64_t reduced_dims[kMaxDims] = {}, reduced_strides[kMaxDims] = {};
  int64_t num_outputs = 1, reduce_count = 1;

  WEFT_HD int64_t Offset(int64_t o, int64_t r) const {
    int64_t off = 0;
    for (int d = kept_rank - 1; d >= 0; --d) {
      off += (o % kept_dims[d]) * kept_strides[d];
      o /= kept_dims[d];
    }
    for (int d = reduced_rank - 1; d >= 0; --d) {
      off += (r % reduced_dims[d]) * reduced_strides[d];
      r /= reduced_dims[d];
    }
    return off;
  }
};

// `axes` may be negative (from the end) and repeat; throws InvalidArgument when out of range.
ReduceIndexer MakeReduceIndexer(const std::vector<int64_t>& dims, const std::vector<int64_t>& axes);

// A copy that reads element i of the output (row-major over out_dims) from the input at
// sum_d (k_d % src_dims[d]) * src_strides[d], k_d being i's coordinate along output dim d:
// Transpose (src_dims = out_dims, strides permuted) and Tile (src_dims = the input's dims).
struct CopyIndexer {
  int rank = 0;
  int64_t out_dims[kMaxDims] = {}, src_dims[kMaxDims] = {}, src_strides[kMaxDims] = {};

  WEFT_HD int64_t Offset(int64_t i) const {
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      off += (i % out_dims[d]) % src_dims[d] * src_strides[d];
      i /= out_dims[d];
    }
    return off;
  }
};

// NaN as TensorFlow and NumPy treat it in Max, Min, Maximum, Minimum, MaxPool, ArgMax, ArgMin
// and Relu: a NaN operand wins (np.maximum, np.max, np.argmax's first NaN). The one definition
// for the CPU kernels and the CUDA kernels; integer types have no NaN and compile to plain
// comparisons.
template <typename T>
WEFT_HD constexpr bool IsNaN(T v) {
  if constexpr (std::is_floating_point_v<T>) {  // NaN is the one value unequal to itself
    return v != v;
  } else {
    return false;
  }
}
// Whether candidate c takes the place of the running extreme `best` in a scan: strictly
// greater (is_max) or smaller, or the first NaN (a NaN best is never replaced).
template <typename T>
WEFT_HD constexpr bool ReplacesExtreme(T c, T best, bool is_max) {
  if (IsNaN(best)) return false;
  return IsNaN(c) || (is_max ? c > best : c < best);
}
template <typename T>
WEFT_HD constexpr T MaxPropagateNaN(T a, T b) { return ReplacesExtreme(b, a, true) ? b : a; }
template <typename T>
WEFT_HD constexpr T MinPropagateNaN(T a, T b) { return ReplacesExtreme(b, a, false) ? b : a; }

// ArgMax (is_max) / ArgMin of v[0], v[s], ..., v[(r - 1) * s] (r > 0): the first index of the
// extreme value (strictly better values replace it, so ties keep the smallest index); the first
// NaN's index when there is one (as np.argmax). The CPU kernel (ops/kernels/cpu/reduce.cc) and
// the GPU kernel (reduce.cu) both use it.
template <typename T>
WEFT_HD int64_t ArgExtreme(const T* v, int64_t r, int64_t s, bool is_max) {
  T best = v[0];
  int64_t at = 0;
  for (int64_t k = 1; k < r && !IsNaN(best); ++k) {
    const T c = v[k * s];
    if (ReplacesExtreme(c, best, is_max)) {
      best = c;
      at = k;
    }
  }
  return at;
}

// y = transpose(x): y's dim k is x's dim perm[k] (perm checked by the caller).
CopyIndexer MakeTransposeIndexer(const std::vector<int64_t>& x_dims, const std::vector<int64_t>& perm);
// y = tile(x, multiples): y's dim k is x_dims[k] * multiples[k].
CopyIndexer MakeTileIndexer(const std::vector<int64_t>& x_dims, const std::vector<int64_t>& multiples);

}  // namespace weft
