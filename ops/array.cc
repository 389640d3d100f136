// Array ops: shape queries, reshapes, Transpose, Concat/Split, slicing, Gather, Pad, Tile,
// fills and OneHot, with their shape functions and gradients. Kernels:
// ops/kernels/cpu/array.cc and ops/kernels/cpu/array_index.cc.
//
// Gradients never assume static shapes: where they must rebuild an input's shape they use the
// run-time Shape (or a Const when the shape is fully known at build time), so unknown batch
// dims work. Slicing gradients scatter dy into zeros with helper ops (StridedSliceGrad,
// GatherGrad, ConcatGrad) that take the forward input's run-time shape.
#include "ops/array.h"

#include <fmt/format.h>

#include "ops/all_ops.h"
#include "ops/framework.h"
#include "ops/kernels/cpu/array_kernels.h"
#include "ops/math.h"

namespace weft {

namespace {

const std::vector<DType> kAllTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                      DType::kInt64,   DType::kUInt8,   DType::kBool};
const std::vector<DType> kNumberTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                                         DType::kUInt8};
const std::vector<DType> kIndexTypes = {DType::kInt32, DType::kInt64};
const std::vector<DType> kAnyType = {};  // pure data movement: any dtype, the kernels copy bytes

std::string Ints(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ",")); }

// ---- shape functions

void ShapeShape(InferenceContext& c) {
  c.set_output(0, TensorShape({c.input(0).unknown_rank() ? -1 : int64_t{c.input(0).rank()}}));
}

void ReshapeShape(InferenceContext& c) {
  c.WithRank(c.input(1), 1, "Reshape: shape");
  if (const Tensor* t = c.input_tensor(1)) {
    c.set_output(0, ResolveReshape(c.input(0), ReadIntVector(*t, "Reshape: shape")));
  } else {
    c.set_output(0, c.InputAsShape(1));
  }
}

// Checks that perm is a permutation of 0..n-1.
void CheckPerm(const std::vector<int64_t>& perm) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    WEFT_REQUIRE(p >= 0 && p < static_cast<int64_t>(perm.size()) && !seen[p],
                 "Transpose: perm {} is not a permutation of 0..{}", Ints(perm), static_cast<int64_t>(perm.size()) - 1);
    seen[p] = true;
  }
}

void TransposeShape(InferenceContext& c) {
  const auto perm = c.attr<std::vector<int64_t>>("perm");
  CheckPerm(perm);
  const TensorShape in = c.WithRank(c.input(0), static_cast<int>(perm.size()), "Transpose: x (one dim per perm entry)");
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(in.dim(static_cast<int>(p)));
  c.set_output(0, TensorShape(dims));
}

void ExpandDimsShape(InferenceContext& c) {
  const TensorShape& in = c.input(0);
  const int64_t axis = c.attr<int64_t>("axis");
  if (in.unknown_rank()) return c.set_output(0, TensorShape::Unknown());
  const int r = in.rank();
  WEFT_REQUIRE(axis >= -r - 1 && axis <= r, "ExpandDims: axis {} out of range [{}, {}] for shape {}", axis, -r - 1, r,
               in.ToString());
  std::vector<int64_t> dims = in.dims();
  dims.insert(dims.begin() + (axis < 0 ? axis + r + 1 : axis), 1);
  c.set_output(0, TensorShape(dims));
}

void SqueezeShape(InferenceContext& c) {
  const TensorShape& in = c.input(0);
  const auto axis = c.attr<std::vector<int64_t>>("axis");
  if (in.unknown_rank()) return c.set_output(0, TensorShape::Unknown());
  std::vector<bool> drop(in.rank(), false);
  for (int64_t a : axis) {
    const int k = in.CanonicalAxis(a, "Squeeze");
    WEFT_REQUIRE(in.dim(k) == 1 || in.dim(k) < 0, "Squeeze: cannot squeeze axis {} of shape {}: its size is {}, not 1",
                 a, in.ToString(), in.dim(k));
    drop[k] = true;
  }
  std::vector<int64_t> dims;
  for (int k = 0; k < in.rank(); ++k) {
    if (axis.empty() && in.dim(k) < 0) return c.set_output(0, TensorShape::Unknown());  // may or may not be 1
    if (!(drop[k] || (axis.empty() && in.dim(k) == 1))) dims.push_back(in.dim(k));
  }
  c.set_output(0, TensorShape(dims));
}

// Concat of inputs [first, end): all dims but `axis` must agree; the axis dims add up.
void ConcatShape(InferenceContext& c) {
  const int64_t axis_attr = c.attr<int64_t>("axis");
  int first = -1;
  for (int i = 0; i < c.num_inputs() && first < 0; ++i) {
    if (!c.input(i).unknown_rank()) first = i;
  }
  if (first < 0) return c.set_output(0, TensorShape::Unknown());
  const TensorShape& s0 = c.input(first);
  const int axis = s0.CanonicalAxis(axis_attr, "Concat");
  std::vector<int64_t> dims = s0.dims();
  dims[axis] = 0;
  for (int i = 0; i < c.num_inputs(); ++i) {
    const TensorShape& si = c.input(i);
    if (si.unknown_rank()) {
      dims[axis] = -1;
      continue;
    }
    bool ok = si.rank() == s0.rank();
    for (int k = 0; ok && k < s0.rank(); ++k) {
      if (k == axis) continue;
      ok = si.dim(k) < 0 || dims[k] < 0 || si.dim(k) == dims[k];
      if (dims[k] < 0) dims[k] = si.dim(k);
    }
    WEFT_REQUIRE(ok, "Concat: input {} has shape {} but input {} has shape {} (they must match except on axis {})", i,
                 si.ToString(), first, s0.ToString(), axis_attr);
    dims[axis] = (dims[axis] < 0 || si.dim(axis) < 0) ? -1 : dims[axis] + si.dim(axis);
  }
  c.set_output(0, TensorShape(dims));
}

void SplitShape(InferenceContext& c) {
  const int64_t n = c.attr<int64_t>("num_split");
  WEFT_REQUIRE(n >= 1, "Split: num_split must be at least 1, got {}", n);
  const TensorShape& in = c.input(0);
  if (in.unknown_rank()) {
    for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, TensorShape::Unknown());
    return;
  }
  const int64_t axis_attr = c.attr<int64_t>("axis");
  const int axis = in.CanonicalAxis(axis_attr, "Split");
  TensorShape out = in;
  if (in.dim(axis) >= 0) {
    WEFT_REQUIRE(in.dim(axis) % n == 0, "Split: axis {} of shape {} (size {}) does not divide into {} equal parts",
                 axis_attr, in.ToString(), in.dim(axis), n);
    out.set_dim(axis, in.dim(axis) / n);
  }
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, out);
}

void SliceShape(InferenceContext& c) {
  const auto begin = c.attr<std::vector<int64_t>>("begin");
  const auto size = c.attr<std::vector<int64_t>>("size");
  WEFT_REQUIRE(begin.size() == size.size(), "Slice: begin {} and size {} differ in length", Ints(begin), Ints(size));
  const TensorShape in = c.WithRank(c.input(0), static_cast<int>(begin.size()), "Slice: x (one dim per begin entry)");
  std::vector<int64_t> dims;
  for (size_t k = 0; k < begin.size(); ++k) {
    const int64_t b = begin[k], n = size[k], d = in.dim(static_cast<int>(k));
    WEFT_REQUIRE(b >= 0 && n >= -1 && (d < 0 || (b <= d && (n == -1 || n <= d - b))),
                 "Slice: begin {} size {} out of bounds for dim {} of shape {}", b, n, k, in.ToString());
    dims.push_back(n != -1 ? n : (d < 0 ? -1 : d - b));
  }
  c.set_output(0, TensorShape(dims));
}

void StridedSliceShape(InferenceContext& c) {
  if (c.input(0).unknown_rank()) return c.set_output(0, TensorShape::Unknown());
  c.set_output(0, TensorShape(ComputeStridedSlice(c.input(0).dims(), StridedSliceAttrs::FromNode(c.node())).out_dims));
}

// Output 0 has the shape given by the (int vector) input i.
void ShapeFromInput(InferenceContext& c, int i, std::string_view what) {
  c.WithRank(c.input(i), 1, what);
  c.set_output(0, c.input_tensor(i) ? ReadShape(*c.input_tensor(i), what) : c.InputAsShape(i));
}

void GatherShape(InferenceContext& c) {
  const TensorShape& params = c.input(0);
  const TensorShape& indices = c.input(1);
  if (params.unknown_rank() || indices.unknown_rank()) return c.set_output(0, TensorShape::Unknown());
  const int axis = params.CanonicalAxis(c.attr<int64_t>("axis"), "Gather: params");
  std::vector<int64_t> dims(params.dims().begin(), params.dims().begin() + axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), params.dims().begin() + axis + 1, params.dims().end());
  c.set_output(0, TensorShape(dims));
}

void UnsortedSegmentSumShape(InferenceContext& c) {
  const TensorShape &data = c.input(0), &ids = c.input(1);
  c.WithRank(c.input(2), 0, "UnsortedSegmentSum: num_segments");
  int64_t num = -1;
  if (const Tensor* t = c.input_tensor(2)) num = ReadNumSegments(*t);
  if (data.unknown_rank() || ids.unknown_rank()) return c.set_output(0, TensorShape::Unknown());
  c.set_output(0, TensorShape(SegmentSumDims(data, ids, num)));
}

void PadShape(InferenceContext& c) {
  const auto pad = c.attr<std::vector<int64_t>>("paddings");
  WEFT_REQUIRE(pad.size() % 2 == 0, "Pad: paddings {} must hold (before, after) pairs", Ints(pad));
  const TensorShape in =
      c.WithRank(c.input(0), static_cast<int>(pad.size() / 2), "Pad: x (one pair of paddings per dim)");
  std::vector<int64_t> dims;
  for (int k = 0; k < in.rank(); ++k) {
    WEFT_REQUIRE(pad[2 * k] >= 0 && pad[2 * k + 1] >= 0 && pad[2 * k] <= TensorShape::kMaxElements &&
                     pad[2 * k + 1] <= TensorShape::kMaxElements,
                 "Pad: paddings {} must be non-negative (and not huge)", Ints(pad));
    dims.push_back(in.dim(k) < 0 ? -1 : in.dim(k) + pad[2 * k] + pad[2 * k + 1]);
  }
  if (TensorShape(dims).IsFullyDefined()) TensorShape(dims).num_elements();  // rejects overflowing results now
  c.set_output(0, TensorShape(dims));
}

void TileShape(InferenceContext& c) {
  const auto m = c.attr<std::vector<int64_t>>("multiples");
  const TensorShape in = c.WithRank(c.input(0), static_cast<int>(m.size()), "Tile: x (one multiple per dim)");
  std::vector<int64_t> dims;
  for (int k = 0; k < in.rank(); ++k) {
    WEFT_REQUIRE(m[k] >= 0, "Tile: negative multiple in {}", Ints(m));
    WEFT_REQUIRE(in.dim(k) <= 0 || m[k] <= TensorShape::kMaxElements / in.dim(k),
                 "Tile: shape {} tiled by {} is too large", in.ToString(), Ints(m));
    dims.push_back(m[k] == 0 ? 0 : (in.dim(k) < 0 ? -1 : in.dim(k) * m[k]));
  }
  if (TensorShape(dims).IsFullyDefined()) TensorShape(dims).num_elements();  // rejects overflowing results now
  c.set_output(0, TensorShape(dims));
}

void FillShape(InferenceContext& c) {
  c.WithRank(c.input(1), 0, "Fill: value");
  ShapeFromInput(c, 0, "Fill: dims");
  if (c.outputs()[0].IsFullyDefined()) c.outputs()[0].num_elements();  // rejects overflowing dims now
}

void BroadcastToShape(InferenceContext& c) {
  ShapeFromInput(c, 1, "BroadcastTo: shape");
  const TensorShape& x = c.input(0);
  TensorShape out = c.outputs()[0];
  if (x.unknown_rank() || out.unknown_rank()) return;
  const int off = out.rank() - x.rank();
  bool ok = off >= 0;
  for (int k = 0; ok && k < x.rank(); ++k) {
    const int64_t xd = x.dim(k), td = out.dim(k + off);
    ok = xd < 0 || td < 0 || xd == 1 || xd == td;
    if (td < 0 && xd > 1) out.set_dim(k + off, xd);  // a known non-1 dim fixes the target
  }
  WEFT_REQUIRE(ok, "BroadcastTo: cannot broadcast shape {} to {}", x.ToString(), out.ToString());
  c.set_output(0, out);
}

void OneHotShape(InferenceContext& c) {
  const int64_t depth = c.attr<int64_t>("depth"), axis = c.attr<int64_t>("axis");
  WEFT_REQUIRE(depth >= 0, "OneHot: depth must be non-negative, got {}", depth);
  const TensorShape& in = c.input(0);
  if (in.unknown_rank()) return c.set_output(0, TensorShape::Unknown());
  WEFT_REQUIRE(axis >= -1 && axis <= in.rank(), "OneHot: axis {} out of range [-1, {}] for indices of shape {}", axis,
               in.rank(), in.ToString());
  std::vector<int64_t> dims = in.dims();
  dims.insert(dims.begin() + (axis < 0 ? in.rank() : axis), depth);
  c.set_output(0, TensorShape(dims));
}

// ---- gradients

Output Forward(const Node& op, int i = 0) { return op.input(i); }

// The run-time shape of x as an int64 vector: a Const when known at build time, else Shape(x).
Output ShapeOf(const Scope& s, Output x) {
  const TensorShape& sh = x.shape();
  if (sh.IsFullyDefined()) return ops::Const(s, sh.dims(), TensorShape({int64_t{sh.rank()}}));
  return ops::Shape(s, x, DType::kInt64);
}

// y = reshape(x) (also ExpandDims, Squeeze):  dx = reshape(dy, shape(x))
std::vector<Output> ReshapeGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  std::vector<Output> dx(op.num_inputs());
  dx[0] = ops::Reshape(s, dy[0], ShapeOf(s, Forward(op)));
  return dx;
}

// y = transpose(x, p):  dx = transpose(dy, p^-1)
std::vector<Output> TransposeGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const auto perm = op.attr<std::vector<int64_t>>("perm");
  std::vector<int64_t> inv(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) inv[perm[k]] = static_cast<int64_t>(k);
  return {ops::Transpose(s, dy[0], inv)};
}

// y = concat(x_0..x_n-1, axis):  dx_i = the slice of dy where x_i went (found from the run-time
// shapes, so the forward inputs themselves need not stay alive)
std::vector<Output> ConcatGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  std::vector<Output> inputs = {dy[0]};
  for (const Output& x : op.inputs()) inputs.push_back(ShapeOf(s, x));
  Node* n = s.AddNode("ConcatGrad", inputs, {{"axis", op.attr<int64_t>("axis")}});
  std::vector<Output> dx;
  for (int i = 0; i < n->num_outputs(); ++i) dx.emplace_back(n, i);
  return dx;
}

// ConcatGrad(dy, shapes) splits dy:  d(dy) = concat(d outputs), shapes get none
std::vector<Output> ConcatGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  std::vector<Output> dx(op.num_inputs());
  dx[0] = ops::Concat(s, dy, op.attr<int64_t>("axis"));
  return dx;
}

// y_0..y_n-1 = split(x, axis):  dx = concat(dy_0..dy_n-1, axis)
std::vector<Output> SplitGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {ops::Concat(s, dy, op.attr<int64_t>("axis"))};
}

AttrMap StridedSliceAttrMap(const StridedSliceAttrs& a) {
  return {{"begin", a.begin},         {"end", a.end},           {"strides", a.strides},
          {"begin_mask", a.begin_mask}, {"end_mask", a.end_mask}, {"shrink_axis_mask", a.shrink_axis_mask}};
}

// dx = zeros(shape(x)) with dy written where the slice `a` read
Output SliceBack(const Scope& s, Output x, Output dy, const StridedSliceAttrs& a) {
  return s.Op("StridedSliceGrad", {ShapeOf(s, x), dy}, StridedSliceAttrMap(a));
}

// y = x[begin : begin + size]:  dx = pad dy back into zeros shaped like x
std::vector<Output> SliceGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  StridedSliceAttrs a;
  a.begin = op.attr<std::vector<int64_t>>("begin");
  const auto size = op.attr<std::vector<int64_t>>("size");
  for (size_t k = 0; k < size.size(); ++k) {
    a.end.push_back(size[k] == -1 ? 0 : a.begin[k] + size[k]);
    if (size[k] == -1) a.end_mask |= int64_t{1} << k;
    a.strides.push_back(1);
  }
  return {SliceBack(s, Forward(op), dy[0], a)};
}

// y = x[begin:end:strides]:  dx = dy scattered back into zeros shaped like x
std::vector<Output> StridedSliceGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {SliceBack(s, Forward(op), dy[0], StridedSliceAttrs::FromNode(op))};
}

// StridedSliceGrad(shape, dy) is linear in dy:  d(dy) = strided_slice(d out)
std::vector<Output> StridedSliceGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {Output{}, s.Op("StridedSlice", {dy[0]}, StridedSliceAttrMap(StridedSliceAttrs::FromNode(op)))};
}

// y = gather(params, indices, axis):  dparams = zeros(shape(params)) + scatter_add(indices, dy)
std::vector<Output> GatherGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output params = Forward(op, 0), indices = Forward(op, 1);
  return {s.Op("GatherGrad", {dy[0], indices, ShapeOf(s, params)}, {{"axis", op.attr<int64_t>("axis")}}),
          Output{}};
}

// GatherGrad(dy, indices, shape) is linear in dy:  d(dy) = gather(d out, indices)
std::vector<Output> GatherGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {ops::Gather(s, dy[0], Forward(op, 1), op.attr<int64_t>("axis")), Output{}, Output{}};
}

// y[s] = sum of data[i] over segment_ids[i] == s:  ddata[i] = dy[segment_ids[i]], 0 where the id
// is negative (dropped in the forward pass)
std::vector<Output> UnsortedSegmentSumGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output data = Forward(op, 0), ids = Forward(op, 1);
  WEFT_REQUIRE(!data.shape().unknown_rank() && !ids.shape().unknown_rank(),
               "UnsortedSegmentSum '{}': its gradient needs data and segment_ids of known rank, got {} and {}",
               op.name(), data.shape().ToString(), ids.shape().ToString());
  const Output zero = ops::ScalarLike(s, ids.dtype(), 0);
  Output kept = ops::Cast(s, ops::GreaterEqual(s, ids, zero), data.dtype());
  for (int k = ids.shape().rank(); k < data.shape().rank(); ++k) kept = ops::ExpandDims(s, kept, -1);
  return {ops::Mul(s, ops::Gather(s, dy[0], ops::Maximum(s, ids, zero)), kept), Output{}, Output{}};
}

// y = pad(x, (before, after)):  dx = dy[before : dim - after]
std::vector<Output> PadGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const auto pad = op.attr<std::vector<int64_t>>("paddings");
  const size_t r = pad.size() / 2;
  std::vector<int64_t> begin(r), end(r), strides(r, 1);
  int64_t end_mask = 0;
  for (size_t k = 0; k < r; ++k) {
    begin[k] = pad[2 * k];
    end[k] = -pad[2 * k + 1];
    if (pad[2 * k + 1] == 0) end_mask |= int64_t{1} << k;
  }
  return {ops::StridedSlice(s, dy[0], begin, end, strides, 0, end_mask, 0)};
}

// y = tile(x, m):  view dy as [m_0, d_0, m_1, d_1, ...] and sum over the m axes
std::vector<Output> TileGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const auto m = op.attr<std::vector<int64_t>>("multiples");
  const Output x = Forward(op);
  const int64_t r = static_cast<int64_t>(m.size());
  if (r == 0) return {dy[0]};
  std::vector<int64_t> sum_axes;
  for (int64_t k = 0; k < r; ++k) sum_axes.push_back(2 * k);
  Output split_shape;
  if (x.shape().IsFullyDefined()) {
    std::vector<int64_t> dims;
    for (int64_t k = 0; k < r; ++k) dims.insert(dims.end(), {m[k], x.shape().dim(static_cast<int>(k))});
    split_shape = ops::Const(s, dims, TensorShape({2 * r}));
  } else {
    // interleave([m_k], shape(x)) = reshape(concat([m[:, None], shape(x)[:, None]], 1), [-1])
    const Output mult = ops::Const(s, m, TensorShape({r, 1}));
    const Output xs = ops::Reshape(s, ops::Shape(s, x, DType::kInt64), {r, 1});
    split_shape = ops::Reshape(s, ops::Concat(s, {mult, xs}, 1), {2 * r});
  }
  return {ops::Sum(s, ops::Reshape(s, dy[0], split_shape), sum_axes)};
}

// y = broadcast_to(x, shape):  dx = sum of dy over the broadcast axes
std::vector<Output> BroadcastToGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {ops::SumToShapeOf(s, dy[0], Forward(op)), Output{}};
}

// y = fill(dims, v):  dv = sum(dy)
std::vector<Output> FillGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {Output{}, ops::Sum(s, dy[0])};
}

}  // namespace

void RegisterArrayOps(OpRegistry& r) {
  r.Register("Shape").Input("input", "T").Output("output", "out_type").TypeAttr("T", kAnyType)
      .TypeAttr("out_type", kIndexTypes, DType::kInt32).Shape(ShapeShape).NoGradient().Cheap()
      .Doc("The shape of the input as a vector of dims.");
  r.Register("Size").Input("input", "T").Output("output", "out_type").TypeAttr("T", kAnyType)
      .TypeAttr("out_type", kIndexTypes, DType::kInt32).Shape(ScalarShape).NoGradient().Cheap()
      .Doc("The number of elements of the input, as a scalar.");
  r.Register("Rank").Input("input", "T").Output("output", "int32").TypeAttr("T", kAnyType)
      .Shape(ScalarShape).NoGradient().Cheap()
      .Doc("The rank of the input, as an int32 scalar.");
  r.Register("Reshape").Input("tensor", "T").Input("shape", "Tshape").Output("output", "T").TypeAttr("T", kAnyType)
      .TypeAttr("Tshape", kIndexTypes, DType::kInt32).Shape(ReshapeShape).Grad(ReshapeGrad).Cheap()
      .Doc("The input's elements with a new shape (one dim may be -1: inferred); shares the buffer.");
  r.Register("Transpose").Input("x", "T").Output("y", "T").TypeAttr("T", kAnyType).Attr("perm", AttrType::kIntList)
      .Shape(TransposeShape).Grad(TransposeGrad)
      .Doc("Permutes the dims: output dim k is input dim perm[k].");
  r.Register("ExpandDims").Input("input", "T").Output("output", "T").TypeAttr("T", kAnyType)
      .Attr("axis", AttrType::kInt)
      .Shape(ExpandDimsShape).Grad(ReshapeGrad).Cheap()
      .Doc("Inserts a dim of size 1 at `axis` (in [-rank-1, rank]); shares the buffer.");
  r.Register("Squeeze").Input("input", "T").Output("output", "T").TypeAttr("T", kAnyType)
      .Attr("axis", std::vector<int64_t>{}).Shape(SqueezeShape).Grad(ReshapeGrad).Cheap()
      .Doc("Removes the size-1 dims listed in `axis` (all size-1 dims when empty); shares the buffer.");
  r.Register("Concat").InputList("values", "T", "N").Output("output", "T").TypeAttr("T", kAnyType)
      .Attr("axis", AttrType::kInt).Shape(ConcatShape).Grad(ConcatGrad)
      .Doc("Joins the inputs along `axis`; all other dims must match.");
  r.Register("ConcatGrad").Input("dy", "T").InputList("shapes", "int64", "N").OutputList("output", "T", "N")
      .TypeAttr("T", kAnyType).Attr("axis", AttrType::kInt)
      .Shape([](InferenceContext& c) {
        for (int i = 0; i + 1 < c.num_inputs(); ++i) c.set_output(i, c.InputAsShape(i + 1));
      })
      .Grad(ConcatGradGrad)
      .Doc("Concat's gradient: splits dy along `axis` into pieces of the given shapes (the forward inputs').");
  r.Register("Split").Input("value", "T").OutputList("output", "T", "num_split").TypeAttr("T", kAnyType)
      .Attr("axis", AttrType::kInt).Shape(SplitShape).Grad(SplitGrad)
      .Doc("Splits the input along `axis` into `num_split` equal parts.");
  r.Register("Slice").Input("input", "T").Output("output", "T").TypeAttr("T", kAnyType)
      .Attr("begin", AttrType::kIntList).Attr("size", AttrType::kIntList).Shape(SliceShape).Grad(SliceGrad)
      .Doc("The block starting at `begin` with `size` (-1: to the end) per dim; bounds are checked.");
  r.Register("StridedSlice").Input("input", "T").Output("output", "T").TypeAttr("T", kAnyType)
      .Attr("begin", AttrType::kIntList).Attr("end", AttrType::kIntList).Attr("strides", AttrType::kIntList)
      .Attr("begin_mask", 0).Attr("end_mask", 0).Attr("shrink_axis_mask", 0)
      .Shape(StridedSliceShape).Grad(StridedSliceGrad)
      .Doc("x[begin:end:strides] per leading dim as in numpy/TF (negative indices and strides; masks ignore "
           "begin/end, shrink_axis_mask takes one index and drops the dim); dims without an entry are kept whole.");
  r.Register("StridedSliceGrad").Input("shape", "Tshape").Input("dy", "T").Output("output", "T")
      .TypeAttr("T", kAnyType).TypeAttr("Tshape", kIndexTypes, DType::kInt32)
      .Attr("begin", AttrType::kIntList).Attr("end", AttrType::kIntList).Attr("strides", AttrType::kIntList)
      .Attr("begin_mask", 0).Attr("end_mask", 0).Attr("shrink_axis_mask", 0)
      .Shape([](InferenceContext& c) { ShapeFromInput(c, 0, "StridedSliceGrad: shape"); })
      .Grad(StridedSliceGradGrad)
      .Doc("StridedSlice's (and Slice's) gradient: zeros of `shape` with dy written where the slice reads.");
  r.Register("Gather").Input("params", "T").Input("indices", "Tindices").Output("output", "T").TypeAttr("T", kAnyType)
      .TypeAttr("Tindices", kIndexTypes).Attr("axis", 0).Shape(GatherShape).Grad(GatherGrad)
      .Doc("Picks slices of params along `axis` at `indices` (each in [0, dim)): "
           "shape params[:axis] + indices + params[axis+1:].");
  r.Register("GatherGrad").Input("dy", "T").Input("indices", "Tindices").Input("params_shape", "Tshape")
      .Output("output", "T").TypeAttr("T", kNumberTypes).TypeAttr("Tindices", kIndexTypes)
      .TypeAttr("Tshape", kIndexTypes).Attr("axis", 0)
      .Shape([](InferenceContext& c) { ShapeFromInput(c, 2, "GatherGrad: params_shape"); })
      .Grad(GatherGradGrad)
      .Doc("Gather's gradient: zeros of `params_shape` with the slices of dy added at `indices` along `axis`.");
  r.Register("UnsortedSegmentSum").Input("data", "T").Input("segment_ids", "Tindices")
      .Input("num_segments", "Tnumsegments").Output("output", "T").TypeAttr("T", kNumberTypes)
      .TypeAttr("Tindices", kIndexTypes).TypeAttr("Tnumsegments", kIndexTypes).Shape(UnsortedSegmentSumShape)
      .Grad(UnsortedSegmentSumGrad)
      .Doc("output[s, ...] = sum of data[i..., ...] over the positions i where segment_ids[i...] == s; "
           "segment_ids' shape is a prefix of data's, negative ids are dropped, ids >= num_segments are an error; "
           "output shape [num_segments] + data.shape[rank(segment_ids):].");
  r.Register("Pad").Input("input", "T").Output("output", "T").TypeAttr("T", kAllTypes)
      .Attr("paddings", AttrType::kIntList).Attr("constant_value", AttrValue(0.0)).Shape(PadShape).Grad(PadGrad)
      .Doc("Pads each dim k with paddings[2k] values before and paddings[2k+1] after, all `constant_value`.");
  r.Register("Tile").Input("input", "T").Output("output", "T").TypeAttr("T", kAnyType)
      .Attr("multiples", AttrType::kIntList).Shape(TileShape).Grad(TileGrad)
      .Doc("Repeats the input multiples[k] times along each dim k.");
  r.Register("Fill").Input("dims", "index_type").Input("value", "T").Output("output", "T").TypeAttr("T", kAllTypes)
      .TypeAttr("index_type", kIndexTypes, DType::kInt32).Shape(FillShape).Grad(FillGrad)
      .Doc("A tensor of shape `dims` with every element equal to the scalar `value`.");
  r.Register("ZerosLike").Input("x", "T").Output("y", "T").TypeAttr("T", kAllTypes).Shape(UnchangedShape)
      .NoGradient().Doc("Zeros with the shape and dtype of x.");
  r.Register("OnesLike").Input("x", "T").Output("y", "T").TypeAttr("T", kAllTypes).Shape(UnchangedShape)
      .NoGradient().Doc("Ones with the shape and dtype of x.");
  r.Register("OneHot").Input("indices", "TI").Output("output", "dtype")
      .TypeAttr("TI", {DType::kUInt8, DType::kInt32, DType::kInt64})
      .TypeAttr("dtype", kAllTypes, DType::kFloat32).Attr("depth", AttrType::kInt).Attr("on_value", AttrValue(1.0))
      .Attr("off_value", AttrValue(0.0)).Attr("axis", -1).Shape(OneHotShape).NoGradient()
      .Doc("on_value where the new `axis` dim (of size depth) equals the index, off_value elsewhere "
           "(indices outside [0, depth) give all off values).");
  r.Register("BroadcastTo").Input("input", "T").Input("shape", "Tidx").Output("output", "T").TypeAttr("T", kAnyType)
      .TypeAttr("Tidx", kIndexTypes, DType::kInt32).Shape(BroadcastToShape).Grad(BroadcastToGrad)
      .Doc("Repeats the input along the dims where it has size 1 (or is missing) to reach `shape`.");
}

namespace ops {

Output Shape(const Scope& s, Output x, DType out_type) { return s.Op("Shape", {x}, {{"out_type", out_type}}); }
Output Size(const Scope& s, Output x, DType out_type) { return s.Op("Size", {x}, {{"out_type", out_type}}); }
Output Rank(const Scope& s, Output x) { return s.Op("Rank", {x}); }
Output Reshape(const Scope& s, Output x, Output shape) { return s.Op("Reshape", {x, shape}); }
Output Reshape(const Scope& s, Output x, const std::vector<int64_t>& shape) {
  return Reshape(s, x, Const(s.WithOpName("shape"), shape, TensorShape({static_cast<int64_t>(shape.size())})));
}
Output Transpose(const Scope& s, Output x, const std::vector<int64_t>& perm) { return s.Op("Transpose", {x}, {{"perm", perm}}); }
Output ExpandDims(const Scope& s, Output x, int64_t axis) { return s.Op("ExpandDims", {x}, {{"axis", axis}}); }
Output Squeeze(const Scope& s, Output x, const std::vector<int64_t>& axis) { return s.Op("Squeeze", {x}, {{"axis", axis}}); }
Output Concat(const Scope& s, const std::vector<Output>& values, int64_t axis) { return s.Op("Concat", values, {{"axis", axis}}); }
std::vector<Output> Split(const Scope& s, Output x, int64_t axis, int64_t num_split) {
  Node* n = s.AddNode("Split", {x}, {{"axis", axis}, {"num_split", num_split}});
  std::vector<Output> outs;
  for (int i = 0; i < n->num_outputs(); ++i) outs.emplace_back(n, i);
  return outs;
}
Output Slice(const Scope& s, Output x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size) {
  return s.Op("Slice", {x}, {{"begin", begin}, {"size", size}});
}
Output StridedSlice(const Scope& s, Output x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                    const std::vector<int64_t>& strides, int64_t begin_mask, int64_t end_mask, int64_t shrink_axis_mask) {
  return s.Op("StridedSlice", {x},
              {{"begin", begin}, {"end", end}, {"strides", strides}, {"begin_mask", begin_mask},
               {"end_mask", end_mask}, {"shrink_axis_mask", shrink_axis_mask}});
}
Output UnsortedSegmentSum(const Scope& s, Output data, Output segment_ids, Output num_segments) {
  return s.Op("UnsortedSegmentSum", {data, segment_ids, num_segments});
}
Output Gather(const Scope& s, Output params, Output indices, int64_t axis) {
  return s.Op("Gather", {params, indices}, {{"axis", axis}});
}
Output Pad(const Scope& s, Output x, const std::vector<int64_t>& paddings, double constant) {
  return s.Op("Pad", {x}, {{"paddings", paddings}, {"constant_value", constant}});
}
Output Tile(const Scope& s, Output x, const std::vector<int64_t>& multiples) {
  return s.Op("Tile", {x}, {{"multiples", multiples}});
}
Output Fill(const Scope& s, Output dims, Output value) { return s.Op("Fill", {dims, value}); }
Output ZerosLike(const Scope& s, Output x) { return s.Op("ZerosLike", {x}); }
Output OnesLike(const Scope& s, Output x) { return s.Op("OnesLike", {x}); }
Output OneHot(const Scope& s, Output indices, int64_t depth, double on_value, double off_value, DType dtype, int64_t axis) {
  return s.Op("OneHot", {indices},
              {{"depth", depth}, {"on_value", on_value}, {"off_value", off_value}, {"dtype", dtype}, {"axis", axis}});
}
Output BroadcastTo(const Scope& s, Output x, Output shape) { return s.Op("BroadcastTo", {x, shape}); }

}  // namespace ops
}  // namespace weft
