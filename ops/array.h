// Builder functions for the array ops (declared in ops/array.cc).
#pragma once

#include "graph/scope.h"

namespace weft::ops {

Output Shape(const Scope& s, Output x, DType out_type = DType::kInt32);
Output Size(const Scope& s, Output x, DType out_type = DType::kInt32);
Output Rank(const Scope& s, Output x);
// `shape` is an int32/int64 vector tensor; one entry may be -1 (inferred).
Output Reshape(const Scope& s, Output x, Output shape);
Output Reshape(const Scope& s, Output x, const std::vector<int64_t>& shape);
Output Transpose(const Scope& s, Output x, const std::vector<int64_t>& perm);
Output ExpandDims(const Scope& s, Output x, int64_t axis);
Output Squeeze(const Scope& s, Output x, const std::vector<int64_t>& axis = {});
Output Concat(const Scope& s, const std::vector<Output>& values, int64_t axis);
std::vector<Output> Split(const Scope& s, Output x, int64_t axis, int64_t num_split);
Output Slice(const Scope& s, Output x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size);
// Basic strided slice: per-dim begin/end/strides, with begin/end/shrink_axis masks as in TF.
Output StridedSlice(const Scope& s, Output x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                    const std::vector<int64_t>& strides, int64_t begin_mask = 0, int64_t end_mask = 0,
                    int64_t shrink_axis_mask = 0);
Output Gather(const Scope& s, Output params, Output indices, int64_t axis = 0);
// TF's tf.math.unsorted_segment_sum: sums data's slices into num_segments rows by segment_ids
// (a prefix of data's shape; negative ids dropped). Embedding gradients and pooling by id.
Output UnsortedSegmentSum(const Scope& s, Output data, Output segment_ids, Output num_segments);
// paddings: rank x 2 (before, after) per dim.
Output Pad(const Scope& s, Output x, const std::vector<int64_t>& paddings, double constant = 0.0);
Output Tile(const Scope& s, Output x, const std::vector<int64_t>& multiples);
// `dims` is an int32/int64 vector tensor; value is a scalar.
Output Fill(const Scope& s, Output dims, Output value);
Output ZerosLike(const Scope& s, Output x);
Output OnesLike(const Scope& s, Output x);
Output OneHot(const Scope& s, Output indices, int64_t depth, double on_value = 1.0, double off_value = 0.0,
              DType dtype = DType::kFloat32, int64_t axis = -1);
// Repeats x along the broadcast dims of `shape` (an int vector tensor).
Output BroadcastTo(const Scope& s, Output x, Output shape);

}  // namespace weft::ops
