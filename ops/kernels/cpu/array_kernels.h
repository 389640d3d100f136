// Private to the array op family (ops/array.cc and ops/kernels/cpu/array*.cc): the strided copy
// every data-movement kernel is built on, and the index arithmetic that the shape functions and
// the kernels must agree on (Reshape's -1, StridedSlice's masks).
//
//   // Transpose of a [2,3] float matrix: read with strides {1,3}, write densely.
//   StridedCopy(in.raw_data(), {1, 3}, out.raw_data(), {2, 1}, {3, 2}, sizeof(float), pool);
#pragma once

#include <cstdint>
#include <vector>

#include <string_view>

#include "core/shape.h"
#include "core/tensor.h"

namespace weft {

class KernelRegistry;
class Node;
class OpKernelContext;
class ThreadPool;

// Slice, StridedSlice(+Grad), Gather(+Grad), Pad (ops/kernels/cpu/array_index.cc).
void RegisterArrayIndexKernels(KernelRegistry& r);

// For every index i in the box [0, dims):
//   dst[sum_k i_k * dst_strides[k]] = src[sum_k i_k * src_strides[k]]
// Strides are in elements of `elem_size` bytes and may be zero or negative (src). REQUIRES: all
// addressed elements lie inside their buffers. Splits the work over `pool` (may be null) when
// large. Never throws.
void StridedCopy(const void* src, const std::vector<int64_t>& src_strides, void* dst,
                 const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& dims, size_t elem_size,
                 ThreadPool* pool);

// A rank-1 int32/int64 tensor as int64 values; `what` names it in errors ("Fill: dims").
std::vector<int64_t> ReadIntVector(const Tensor& t, std::string_view what);
// A shape given as a tensor of dims (Fill, BroadcastTo, the gradient ops): throws
// InvalidArgument on negative dims or more elements than TensorShape::kMaxElements.
TensorShape ReadShape(const Tensor& t, std::string_view what);

// Row-major strides (in elements) of `dims`.
std::vector<int64_t> DenseStrides(const std::vector<int64_t>& dims);

// The shape Reshape produces from a tensor of `in` (dims may be unknown, -1) and the requested
// `target` (at most one -1 = inferred). Throws InvalidArgument naming both shapes when the
// element counts cannot match, on two -1s, on negative or overflowing dims. Unknown input
// dims leave the -1 unknown in the result.
TensorShape ResolveReshape(const TensorShape& in, const std::vector<int64_t>& target);

// Shape checks shared by the CPU and GPU kernels; each throws InvalidArgument naming the shapes.
// Transpose: the output dims for `perm` (identity: perm is 0, 1, ...).
std::vector<int64_t> TransposeDims(const TensorShape& x, const std::vector<int64_t>& perm, bool* identity);
// Split: the canonical axis, which must divide into num_split equal parts.
int SplitAxis(const TensorShape& x, int64_t axis_attr, int64_t num_split);
// Tile: x's dims times `multiples`.
std::vector<int64_t> TileDims(const TensorShape& x, const std::vector<int64_t>& multiples);
// Concat of ctx's inputs along attr `axis_attr`: the output dims, the canonical axis and the
// [outer, axis * inner] view of the output.
std::vector<int64_t> ConcatDims(const OpKernelContext* ctx, int64_t axis_attr, int* axis, int64_t* outer,
                                int64_t* inner);

// Gather (CPU and GPU kernels): params viewed as [outer, N, inner] around `axis`, the output as
// [outer, num_indices, inner] with shape out_dims. Throws InvalidArgument on a bad axis.
struct GatherDims {
  int axis;
  int64_t outer = 1, n, inner = 1;
  std::vector<int64_t> out_dims;
};
GatherDims MakeGatherDims(const TensorShape& params, const TensorShape& indices, int64_t axis_attr,
                          std::string_view op);
// Gather's indices (int32 or int64, host memory) as int64; throws InvalidArgument naming the first
// one outside [0, limit) ("Gather: indices[3] = 7 is out of range [0, 5) for params of shape [5,2]").
// The GPU kernels call it on the error path to report what the CPU kernels report.
std::vector<int64_t> ReadIndices(const Tensor& indices, int64_t limit, std::string_view op, const TensorShape& params);
// UnsortedSegmentSum's ids as int64: negative ones are kept (the kernel drops them); one >=
// num_segments is InvalidArgument naming its position, its value and num_segments.
std::vector<int64_t> ReadSegmentIds(const Tensor& segment_ids, int64_t num_segments, std::string_view op);
// UnsortedSegmentSum's num_segments (an int32 or int64 scalar); InvalidArgument unless in [0, 2^50].
int64_t ReadNumSegments(const Tensor& num_segments, std::string_view op = "UnsortedSegmentSum");
// UnsortedSegmentSum's output dims: [num_segments] + data.dims[rank(ids):]; InvalidArgument unless
// ids' shape is a prefix of data's (a dim of -1 matches anything; num_segments -1: unknown).
std::vector<int64_t> SegmentSumDims(const TensorShape& data, const TensorShape& ids, int64_t num_segments,
                                    std::string_view op = "UnsortedSegmentSum");

// StridedSlice's attrs, as the op declares them.
struct StridedSliceAttrs {
  std::vector<int64_t> begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, shrink_axis_mask = 0;
  static StridedSliceAttrs FromNode(const Node& node);
};

// Where a strided slice reads, per input dim k: elements begin[k] + j * step[k] for j < size[k].
// out_dims is the output shape (size without the shrunk axes). Unknown input dims (-1) give
// unknown sizes (and begin unknown); only the shape function passes them.
struct StridedSliceSpec {
  std::vector<int64_t> begin, size, step;
  std::vector<int64_t> out_dims;
};
StridedSliceSpec ComputeStridedSlice(const std::vector<int64_t>& in_dims, const StridedSliceAttrs& a);

}  // namespace weft
