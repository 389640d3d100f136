// Segment reductions beside UnsortedSegmentSum (ops/array.cc): UnsortedSegmentMax / Min / Prod,
// TF's ops of those names. output[s] = reduce of data[i] over the i with segment_ids[i] == s;
// segment_ids' shape is a prefix of data's, negative ids are dropped, output shape
// [num_segments] + data.shape[rank(ids):]. An empty segment holds the reduction's identity as TF
// defines it: the lowest value of the dtype for Max, the highest for Min, 1 for Prod.
// The sorted forms (tf.math.segment_max, ...) and the means are composed in python/weft/math.py.
#include "ops/all_ops.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/kernels/cpu/array_kernels.h"
#include "ops/math.h"

namespace weft {

namespace {

const std::vector<DType> kSegmentTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};
const std::vector<DType> kIndexTypes = {DType::kInt32, DType::kInt64};

void SegmentShape(InferenceContext& c) {
  const std::string& op = c.node().op();
  const TensorShape &data = c.input(0), &ids = c.input(1);
  c.WithRank(c.input(2), 0, "num_segments");
  int64_t num = -1;
  if (const Tensor* t = c.input_tensor(2)) num = ReadNumSegments(*t, op);
  if (data.unknown_rank() || ids.unknown_rank()) return c.set_output(0, TensorShape::Unknown());
  c.set_output(0, TensorShape(SegmentSumDims(data, ids, num, op)));
}

// x gathered at max(ids, 0), and a 0/1 mask (x's dtype is `dtype`) of ids >= 0 with data's rank.
struct Gathered {
  Output values, kept;
};
Gathered GatherKept(const Scope& s, Output x, Output ids, const Output& data) {
  const Output zero = ops::ScalarLike(s, ids.dtype(), 0);
  Output kept = ops::Cast(s, ops::GreaterEqual(s, ids, zero), data.dtype());
  for (int k = ids.shape().rank(); k < data.shape().rank(); ++k) kept = ops::ExpandDims(s, kept, -1);
  return {ops::Gather(s, x, ops::Maximum(s, ids, zero)), kept};
}

void RequireKnownRanks(const Node& op, const Output& data, const Output& ids) {
  WEFT_REQUIRE(!data.shape().unknown_rank() && !ids.shape().unknown_rank(),
               "{} '{}': its gradient needs data and segment_ids of known rank, got {} and {}", op.op(), op.name(),
               data.shape().ToString(), ids.shape().ToString());
}

// y[s] = max (min) of its segment: the gradient goes to the elements equal to y[s], shared
// equally among ties (as TF):  dx[i] = selected[i] * dy[ids[i]] / count_selected[ids[i]]
std::vector<Output> SegmentMinMaxGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output data = op.input(0), ids = op.input(1), num = op.input(2);
  RequireKnownRanks(op, data, ids);
  Gathered y = GatherKept(s, Output(const_cast<Node*>(&op), 0), ids, data);
  Output selected = ops::Mul(s, ops::Cast(s, ops::Equal(s, data, y.values), data.dtype()), y.kept);
  Output count = ops::UnsortedSegmentSum(s, selected, ids, num);
  Output share = ops::Div(s, dy[0], ops::Maximum(s, count, ops::OnesLike(s, count)));
  return {ops::Mul(s, GatherKept(s, share, ids, data).values, selected), Output{}, Output{}};
}

// y[s] = prod of its segment:  dx[i] = dy[ids[i]] * (product of the others in i's segment):
// y / x[i] where x[i] != 0; the product of the non-zeros where x[i] is the segment's only zero;
// 0 where the segment holds two or more zeros (as TF).
std::vector<Output> SegmentProdGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output data = op.input(0), ids = op.input(1), num = op.input(2);
  RequireKnownRanks(op, data, ids);
  const Output zeros = ops::ZerosLike(s, data), ones = ops::OnesLike(s, data);
  Output is_zero = ops::Equal(s, data, zeros);
  Output zero_count = ops::UnsortedSegmentSum(s, ops::Cast(s, is_zero, data.dtype()), ids, num);
  Output nonzero = ops::Select(s, is_zero, ones, data);
  Output nonzero_prod = s.Op("UnsortedSegmentProd", {nonzero, ids, num});
  Gathered y = GatherKept(s, Output(const_cast<Node*>(&op), 0), ids, data);
  Output others =
      ops::Select(s, is_zero, GatherKept(s, nonzero_prod, ids, data).values, ops::Div(s, y.values, nonzero));
  Output one = ops::OnesLike(s, zero_count);
  Output g = ops::Mul(s, dy[0], ops::Cast(s, ops::LessEqual(s, zero_count, one), data.dtype()));
  return {ops::Mul(s, ops::Mul(s, GatherKept(s, g, ids, data).values, others), y.kept), Output{}, Output{}};
}

}  // namespace

void RegisterSegmentOps(OpRegistry& r) {
  auto segment = [&r](const char* name) -> OpDefBuilder {
    return r.Register(name).Input("data", "T").Input("segment_ids", "Tindices").Input("num_segments", "Tnumsegments")
        .Output("output", "T").TypeAttr("T", kSegmentTypes).TypeAttr("Tindices", kIndexTypes)
        .TypeAttr("Tnumsegments", kIndexTypes, DType::kInt32).Shape(SegmentShape);
  };
  segment("UnsortedSegmentMax").Grad(SegmentMinMaxGrad)
      .Doc("output[s] = max of data[i] over segment_ids[i] == s (the dtype's lowest value for an empty segment).");
  segment("UnsortedSegmentMin").Grad(SegmentMinMaxGrad)
      .Doc("output[s] = min of data[i] over segment_ids[i] == s (the dtype's highest value for an empty segment).");
  segment("UnsortedSegmentProd").Grad(SegmentProdGrad)
      .Doc("output[s] = product of data[i] over segment_ids[i] == s (1 for an empty segment).");
}

}  // namespace weft
