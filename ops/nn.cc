// The neural-network ops (NHWC): activations, BiasAdd, softmax and its losses, convolutions,
// pooling and batch norm, each with its shape function and gradient (LayerNorm: ops/layernorm.cc).
// Kernels: ops/kernels/cpu/nn.cc (activations, softmax, losses), conv.cc, pool.cc, batchnorm.cc.
//
// Activation gradients go through fused gradient ops (ReluGrad(dy, y), SigmoidGrad(y, dy), ...,
// TensorFlow's names and argument orders): one pass over memory instead of a chain of
// elementwise ops. Those gradient ops are themselves differentiable (except where noted), so
// second derivatives work.
#include "ops/nn.h"

#include "ops/all_ops.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/kernels/cpu/nn_kernels.h"
#include "ops/math.h"

namespace weft {
namespace {

const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat64};
using IntList = std::vector<int64_t>;

Output Out(const Node& op, int i) { return Output(const_cast<Node*>(&op), i); }

// True when `dy` is the zeros the gradient builder fills in for an unused output, so the terms
// it would feed can be left out of the graph.
bool IsZeros(const Output& dy) { return dy.node != nullptr && dy.node->op() == "ZerosLike"; }

// ---- Shape functions

// Output 0 = input 0 merged with input 1 (the elementwise gradient ops take two same-shape args).
void SameShapeBinary(InferenceContext& c) { c.set_output(0, c.input(0).Merge(c.input(1))); }

void BiasAddShape(InferenceContext& c) {
  const TensorShape x = c.WithRankAtLeast(c.input(0), 1, "x");
  const TensorShape b = c.WithRank(c.input(1), 1, "bias");
  if (x.unknown_rank()) return c.set_output(0, x);
  TensorShape y = x;
  const int last = x.rank() - 1;
  WEFT_REQUIRE(x.dim(last) < 0 || b.dim(0) < 0 || x.dim(last) == b.dim(0),
               "bias must be a vector of the last dim of x: x {} vs bias {}", x.ToString(), b.ToString());
  y.set_dim(last, c.MergeDim(x.dim(last), b.dim(0), "bias vs last dim of x"));
  c.set_output(0, y);
}

void BiasAddGradShape(InferenceContext& c) {
  const TensorShape dy = c.WithRankAtLeast(c.input(0), 1, "out_backprop");
  c.set_output(0, TensorShape({dy.unknown_rank() ? -1 : dy.dim(dy.rank() - 1)}));
}

void SoftmaxShape(InferenceContext& c) { c.set_output(0, c.WithRankAtLeast(c.input(0), 1, "logits")); }

void XentShape(InferenceContext& c) {
  const TensorShape logits = c.WithRank(c.input(0), 2, "logits [batch, classes]");
  const TensorShape labels = c.WithRank(c.input(1), 2, "labels [batch, classes]");
  WEFT_REQUIRE(logits.IsCompatibleWith(labels), "labels must have the shape of logits: logits {} vs labels {}",
               logits.ToString(), labels.ToString());
  const TensorShape both = logits.Merge(labels);
  c.set_output(0, TensorShape({both.dim(0)}));
  c.set_output(1, both);
}

void SparseXentShape(InferenceContext& c) {
  const TensorShape logits = c.WithRank(c.input(0), 2, "logits [batch, classes]");
  const TensorShape labels = c.WithRank(c.input(1), 1, "labels [batch]");
  WEFT_REQUIRE(logits.dim(0) < 0 || labels.dim(0) < 0 || logits.dim(0) == labels.dim(0),
               "labels must be a vector of the batch size: logits {} vs labels {}", logits.ToString(),
               labels.ToString());
  const int64_t n = c.MergeDim(logits.dim(0), labels.dim(0), "batch");
  c.set_output(0, TensorShape({n}));
  c.set_output(1, TensorShape({n, logits.dim(1)}));
}

// [N, OH, OW, out_channels] for a window of kh x kw (-1: unknown) over NHWC `in`.
TensorShape WindowedShape(const InferenceContext& c, const TensorShape& in, int64_t kh, int64_t kw,
                          int64_t out_channels, bool with_dilations) {
  const bool same = ParsePadding(c.attr<std::string>("padding"));
  const IntList strides = CheckPair(c.attr<IntList>("strides"), "strides");
  const IntList dil = with_dilations ? CheckPair(c.attr<IntList>("dilations"), "dilations") : IntList{1, 1};
  const int64_t oh = kh < 0 ? -1 : ComputeWindow(in.dim(1), kh, strides[0], dil[0], same).out;
  const int64_t ow = kw < 0 ? -1 : ComputeWindow(in.dim(2), kw, strides[1], dil[1], same).out;
  return TensorShape({in.dim(0), oh, ow, out_channels});
}

// Checks input (NHWC) against filter ([KH, KW, C, X]) and returns {input, filter} with rank 4.
std::pair<TensorShape, TensorShape> ConvShapes(const InferenceContext& c, const TensorShape& input,
                                               const TensorShape& filter) {
  const TensorShape in = c.WithRank(input, 4, "input (NHWC)");
  const TensorShape f = c.WithRank(filter, 4, "filter");
  WEFT_REQUIRE(in.dim(3) < 0 || f.dim(2) < 0 || in.dim(3) == f.dim(2),
               "input channels {} differ from filter in-channels {}: input {} vs filter {}", in.dim(3), f.dim(2),
               in.ToString(), f.ToString());
  WEFT_REQUIRE(f.dim(0) != 0 && f.dim(1) != 0, "filter window must be non-empty, got filter {}", f.ToString());
  return {in, f};
}

int64_t DepthwiseChannels(const TensorShape& in, const TensorShape& f) {
  const int64_t ch = in.dim(3) >= 0 ? in.dim(3) : f.dim(2);
  return ch < 0 || f.dim(3) < 0 ? -1 : ch * f.dim(3);
}

void Conv2DShape(InferenceContext& c) {
  const auto [in, f] = ConvShapes(c, c.input(0), c.input(1));
  c.set_output(0, WindowedShape(c, in, f.dim(0), f.dim(1), f.dim(3), true));
}

// _FusedConv2D: (input, filter, bias [O]) -> Conv2D's output.
void FusedConv2DShape(InferenceContext& c) {
  const auto [in, f] = ConvShapes(c, c.input(0), c.input(1));
  const TensorShape b = c.WithRank(c.input(2), 1, "bias");
  TensorShape out = WindowedShape(c, in, f.dim(0), f.dim(1), f.dim(3), true);
  out.set_dim(3, c.MergeDim(out.dim(3), b.dim(0), "filter out-channels and bias size"));
  c.set_output(0, out);
}

// _FusedConv2DMaxPool: (input, filter, bias) -> {pooled, argmax}, the VALID pool of the conv output.
void FusedConv2DMaxPoolShape(InferenceContext& c) {
  FusedConv2DShape(c);
  const TensorShape conv = c.outputs()[0];
  const IntList k = CheckPair(c.attr<IntList>("ksize"), "ksize");
  const IntList st = CheckPair(c.attr<IntList>("pool_strides"), "pool_strides");
  WEFT_REQUIRE(c.attr<std::string>("pool_padding") == "VALID", "pool_padding must be VALID, got {}",
               c.attr<std::string>("pool_padding"));
  const int64_t ph = conv.dim(1) < 0 ? -1 : ComputeWindow(conv.dim(1), k[0], st[0], 1, false).out;
  const int64_t pw = conv.dim(2) < 0 ? -1 : ComputeWindow(conv.dim(2), k[1], st[1], 1, false).out;
  const TensorShape pooled({conv.dim(0), ph, pw, conv.dim(3)});
  c.set_output(0, pooled);
  c.set_output(1, pooled);
}

// _MaxPoolGradWithArgmax: (argmax, pooled, grad) -> [N, input_hw[0], input_hw[1], C].
void MaxPoolGradWithArgmaxShape(InferenceContext& c) {
  const TensorShape g = c.WithRank(c.input(2), 4, "grad");
  const IntList hw = CheckPair(c.attr<IntList>("input_hw"), "input_hw");
  c.set_output(0, TensorShape({g.dim(0), hw[0], hw[1], g.dim(3)}));
}

// _ConvPoolBackpropFilterBias: (input, filter_sizes, argmax, pooled, grad) -> {filter_sizes, [O]}.
void ConvPoolBackpropFilterBiasShape(InferenceContext& c) {
  c.WithRank(c.input(1), 1, "filter_sizes");
  c.WithRank(c.input(4), 4, "grad");
  auto [in, f] = ConvShapes(c, c.input(0), c.InputAsShape(1));
  f.set_dim(2, c.MergeDim(in.dim(3), f.dim(2), "input channels"));
  c.set_output(0, f);
  c.set_output(1, TensorShape({c.MergeDim(f.dim(3), c.input(4).dim(3), "filter out-channels and grad channels")}));
}

void DepthwiseConv2DShape(InferenceContext& c) {
  const auto [in, f] = ConvShapes(c, c.input(0), c.input(1));
  c.set_output(0, WindowedShape(c, in, f.dim(0), f.dim(1), DepthwiseChannels(in, f), true));
}

// Backprop-input ops: (input_sizes, filter, out_backprop) -> a tensor of shape input_sizes.
void ConvBackpropInputShape(InferenceContext& c) {
  c.WithRank(c.input(0), 1, "input_sizes");
  c.WithRank(c.input(2), 4, "out_backprop");
  auto [in, f] = ConvShapes(c, c.InputAsShape(0), c.input(1));
  in.set_dim(3, c.MergeDim(in.dim(3), f.dim(2), "input channels"));
  c.set_output(0, in);
}

// Backprop-filter ops: (input, filter_sizes, out_backprop) -> a tensor of shape filter_sizes.
void ConvBackpropFilterShape(InferenceContext& c) {
  c.WithRank(c.input(1), 1, "filter_sizes");
  c.WithRank(c.input(2), 4, "out_backprop");
  auto [in, f] = ConvShapes(c, c.input(0), c.InputAsShape(1));
  f.set_dim(2, c.MergeDim(in.dim(3), f.dim(2), "input channels"));
  c.set_output(0, f);
}

// _Conv2DBackpropFilterBias: Conv2DBackpropFilter's output, then the bias gradient [O].
void ConvBackpropFilterBiasShape(InferenceContext& c) {
  ConvBackpropFilterShape(c);
  const TensorShape dy = c.WithRank(c.input(2), 4, "out_backprop");
  c.set_output(1, TensorShape({c.MergeDim(c.outputs()[0].dim(3), dy.dim(3), "filter out-channels and out_backprop "
                                                                            "channels")}));
}

void PoolShape(InferenceContext& c) {
  const TensorShape in = c.WithRank(c.input(0), 4, "input (NHWC)");
  const IntList k = CheckPair(c.attr<IntList>("ksize"), "ksize");
  c.set_output(0, WindowedShape(c, in, k[0], k[1], in.dim(3), false));
}

// MaxPoolGrad: (orig_input, orig_output, grad) -> orig_input's shape.
void MaxPoolGradShape(InferenceContext& c) {
  PoolShape(c);  // validates the attrs and orig_input
  const TensorShape pooled = c.outputs()[0];
  WEFT_REQUIRE(pooled.IsCompatibleWith(c.WithRank(c.input(2), 4, "grad")),
               "grad has shape {}, expected the pooled shape {}", c.input(2).ToString(), pooled.ToString());
  c.set_output(0, c.WithRank(c.input(0), 4, "orig_input"));
}

// AvgPoolGrad: (orig_input_shape, grad) -> a tensor of shape orig_input_shape.
void AvgPoolGradShape(InferenceContext& c) {
  c.WithRank(c.input(0), 1, "orig_input_shape");
  c.WithRank(c.input(1), 4, "grad");
  CheckPair(c.attr<IntList>("ksize"), "ksize");
  CheckPair(c.attr<IntList>("strides"), "strides");
  ParsePadding(c.attr<std::string>("padding"));
  c.set_output(0, c.WithRank(c.InputAsShape(0), 4, "orig_input_shape"));
}

// x [..., C] and per-channel vectors at inputs [first, first + count); returns C (or -1).
int64_t BatchNormChannels(const InferenceContext& c, const TensorShape& x, int first, int count) {
  int64_t ch = x.unknown_rank() ? -1 : x.dim(x.rank() - 1);
  for (int i = first; i < first + count; ++i) {
    const TensorShape v = c.WithRank(c.input(i), 1, c.node().def().inputs[i].name);
    WEFT_REQUIRE(ch < 0 || v.dim(0) < 0 || ch == v.dim(0), "{} must have shape [{}] (the channels of x {}), got {}",
                 c.node().def().inputs[i].name, ch, x.ToString(), v.ToString());
    ch = c.MergeDim(ch, v.dim(0), "channels");
  }
  return ch;
}

void FusedBatchNormShape(InferenceContext& c) {
  const TensorShape x = c.WithRankAtLeast(c.input(0), 2, "x (channels last)");
  const int64_t ch = BatchNormChannels(c, x, 1, 4);
  TensorShape y = x;
  if (!y.unknown_rank()) y.set_dim(y.rank() - 1, ch);
  c.set_output(0, y);
  c.set_output(1, TensorShape({ch}));
  c.set_output(2, TensorShape({ch}));
}

void FusedBatchNormGradShape(InferenceContext& c) {
  const TensorShape x = c.WithRankAtLeast(c.input(1), 2, "x (channels last)");
  WEFT_REQUIRE(x.IsCompatibleWith(c.input(0)), "y_backprop has shape {}, x has shape {}", c.input(0).ToString(),
               x.ToString());
  const int64_t ch = BatchNormChannels(c, x, 2, 5);
  c.set_output(0, x.Merge(c.input(0)));
  for (int i = 1; i < 5; ++i) c.set_output(i, TensorShape({ch}));
}

// ---- Gradients

AttrMap ConvAttrs(const Node& op) {
  return {{"strides", op.attr<IntList>("strides")},
          {"padding", op.attr<std::string>("padding")},
          {"dilations", op.attr<IntList>("dilations")}};
}
AttrMap PoolAttrs(const Node& op) {
  return {{"ksize", op.attr<IntList>("ksize")},
          {"strides", op.attr<IntList>("strides")},
          {"padding", op.attr<std::string>("padding")}};
}

// y = x + bias:  dx = dy,  dbias = sum of dy over all axes but the last.
std::vector<Output> BiasAddGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {dy[0], s.Op("BiasAddGrad", {dy[0]})};
}
// db = sum(g over leading axes) is linear in g:  dg = dz broadcast over the leading axes.
std::vector<Output> BiasAddGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {ops::BiasAdd(s, ops::ZerosLike(s, op.input(0)), dy[0])};
}

// y = relu(x):  dx = dy * (y > 0).  (y > 0 exactly when x > 0; using y frees x sooner.)
std::vector<Output> ReluGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("ReluGrad", {dy[0], Out(op, 0)})};
}
// y = relu6(x):  dx = dy * (0 < y < 6)  (same as 0 < x < 6).
std::vector<Output> Relu6Grad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("Relu6Grad", {dy[0], Out(op, 0)})};
}
// y = x > 0 ? x : alpha * x:  dx = x > 0 ? dy : alpha * dy.
std::vector<Output> LeakyReluGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("LeakyReluGrad", {dy[0], op.input(0)}, {{"alpha", op.attr<double>("alpha")}})};
}
// y = x > 0 ? x : e^x - 1:  dx = y > 0 ? dy : dy * (y + 1).
std::vector<Output> EluGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("EluGrad", {dy[0], Out(op, 0)})};
}
// y = 1 / (1 + e^-x):  dx = dy * y * (1 - y).
std::vector<Output> SigmoidGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("SigmoidGrad", {Out(op, 0), dy[0]})};
}
// y = tanh(x):  dx = dy * (1 - y^2).
std::vector<Output> TanhGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("TanhGrad", {Out(op, 0), dy[0]})};
}
// y = log(1 + e^x):  dx = dy * sigmoid(x).
std::vector<Output> SoftplusGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("SoftplusGrad", {dy[0], op.input(0)})};
}

// y = gelu(x):  dx = GeluGrad(dy, x) = dy * gelu'(x) (same `approximate`).
std::vector<Output> GeluGradFn(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("GeluGrad", {dy[0], op.input(0)}, {{"approximate", op.attr<bool>("approximate")}})};
}

// Second derivatives. z = G(g, a) is linear in g, so dg = G(dz, a); the other input's gradient:
//   ReluGrad / Relu6Grad / LeakyReluGrad: piecewise constant in x -> none.
std::vector<Output> ReluGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op(op.op(), {dy[0], op.input(1)}, {}), Output{}};
}
std::vector<Output> LeakyReluGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("LeakyReluGrad", {dy[0], op.input(1)}, {{"alpha", op.attr<double>("alpha")}}), Output{}};
}
//   z = g * y * (1 - y):  dg = SigmoidGrad(y, dz),  dy = dz * g * (1 - 2y).
std::vector<Output> SigmoidGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output y = op.input(0), g = op.input(1);
  const Output one = ops::ScalarLike(s, y.dtype(), 1.0), two = ops::ScalarLike(s, y.dtype(), 2.0);
  return {ops::Mul(s, ops::Mul(s, dy[0], g), ops::Sub(s, one, ops::Mul(s, two, y))),
          s.Op("SigmoidGrad", {y, dy[0]})};
}
//   z = g * (1 - y^2):  dg = TanhGrad(y, dz),  dy = -2 * dz * g * y.
std::vector<Output> TanhGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output y = op.input(0), g = op.input(1);
  const Output minus_two = ops::ScalarLike(s, y.dtype(), -2.0);
  return {ops::Mul(s, ops::Mul(s, dy[0], g), ops::Mul(s, minus_two, y)), s.Op("TanhGrad", {y, dy[0]})};
}
//   z = g * sigmoid(x):  dg = SoftplusGrad(dz, x),  dx = dz * g * sig(x) * (1 - sig(x)).
std::vector<Output> SoftplusGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output g = op.input(0), x = op.input(1);
  return {s.Op("SoftplusGrad", {dy[0], x}), s.Op("SigmoidGrad", {ops::Sigmoid(s, x), ops::Mul(s, dy[0], g)})};
}
//   z = y > 0 ? g : g * (y + 1):  dg = EluGrad(dz, y),  dy = y > 0 ? 0 : dz * g.
std::vector<Output> EluGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output g = op.input(0), y = op.input(1);
  const Output zero = ops::ZerosLike(s, y);
  return {s.Op("EluGrad", {dy[0], y}),
          ops::Select(s, ops::Greater(s, y, zero), zero, ops::Mul(s, dy[0], g))};
}

//   z = g * gelu'(x):  dg = GeluGrad(dz, x),  dx = dz * g * gelu''(x), where
//   exact:       gelu''(x) = phi(x) * (2 - x^2), phi the standard normal density;
//   approximate: with u = k (1 + 3 c x^2), t = tanh(k (x + c x^3)) (k = sqrt(2 / pi), c = 0.044715),
//                gelu''(x) = (1 - t^2) * (u - x t u^2 + 3 c k x^2).
std::vector<Output> GeluGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output g = op.input(0), x = op.input(1);
  const bool approximate = op.attr<bool>("approximate");
  auto c = [&](double v) { return ops::ScalarLike(s, x.dtype(), v); };
  const Output x2 = ops::Mul(s, x, x);
  Output second;
  if (!approximate) {
    const Output phi = ops::Mul(s, c(0.39894228040143267794), ops::Exp(s, ops::Mul(s, c(-0.5), x2)));
    second = ops::Mul(s, phi, ops::Sub(s, c(2.0), x2));
  } else {
    const double k = 0.79788456080286535588, cc = 0.044715;
    const Output u = ops::Mul(s, c(k), ops::Add(s, c(1.0), ops::Mul(s, c(3 * cc), x2)));
    const Output t = ops::Tanh(s, ops::Mul(s, c(k), ops::Add(s, x, ops::Mul(s, c(cc), ops::Mul(s, x2, x)))));
    const Output sech2 = ops::Sub(s, c(1.0), ops::Mul(s, t, t));
    const Output inner = ops::Add(s, ops::Sub(s, u, ops::Mul(s, ops::Mul(s, x, t), ops::Mul(s, u, u))),
                                  ops::Mul(s, c(3 * cc * k), x2));
    second = ops::Mul(s, sech2, inner);
  }
  return {s.Op("GeluGrad", {dy[0], x}, {{"approximate", approximate}}), ops::Mul(s, ops::Mul(s, dy[0], g), second)};
}

// The softmax Jacobian-vector product: y = softmax(x) gives dx = (dy - sum(dy * y, -1)) * y, one
// SoftmaxGrad op (four elementwise and reduction passes otherwise).
Output SoftmaxBackward(const Scope& s, Output y, Output dy) { return s.Op("SoftmaxGrad", {y, dy}); }
//   z = (g - sum(g * y)) * y:  dg = SoftmaxGrad(y, dz),  dy = dz * (g - sum(g * y)) - g * sum(dz * y).
std::vector<Output> SoftmaxGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output y = op.input(0), g = op.input(1), dz = dy[0];
  const Output gy = ops::Sum(s, ops::Mul(s, g, y), {-1}, true), zy = ops::Sum(s, ops::Mul(s, dz, y), {-1}, true);
  return {ops::Sub(s, ops::Mul(s, dz, ops::Sub(s, g, gy)), ops::Mul(s, g, zy)), s.Op("SoftmaxGrad", {y, dz})};
}
std::vector<Output> SoftmaxGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {SoftmaxBackward(s, Out(op, 0), dy[0])};
}
// y = x - logsumexp(x):  dx = dy - exp(y) * sum(dy, -1).
std::vector<Output> LogSoftmaxGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {ops::Sub(s, dy[0], ops::Mul(s, ops::Exp(s, Out(op, 0)), ops::Sum(s, dy[0], {-1}, true)))};
}

// loss = -sum(labels * log_softmax(z), -1),  backprop = softmax(z) - labels:
//   dz = dloss[:, None] * backprop + softmax_backward(dbackprop)
//   dlabels = -dloss[:, None] * log_softmax(z) - dbackprop
// (the backprop terms are left out when nothing flows into backprop, the usual case).
std::vector<Output> SoftmaxXentGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output dloss = ops::ExpandDims(s, dy[0], -1);
  Output dz = ops::Mul(s, dloss, Out(op, 1));
  Output dlabels = ops::Neg(s, ops::Mul(s, dloss, ops::LogSoftmax(s, op.input(0))));
  if (!IsZeros(dy[1])) {
    dz = ops::Add(s, dz, SoftmaxBackward(s, ops::Softmax(s, op.input(0)), dy[1]));
    dlabels = ops::Sub(s, dlabels, dy[1]);
  }
  return {dz, dlabels};
}
// loss = -log_softmax(z)[label],  backprop = softmax(z) - one_hot(label): as above; the integer
// labels get no gradient.
std::vector<Output> SparseSoftmaxXentGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  Output dz = ops::Mul(s, ops::ExpandDims(s, dy[0], -1), Out(op, 1));
  if (!IsZeros(dy[1])) dz = ops::Add(s, dz, SoftmaxBackward(s, ops::Softmax(s, op.input(0)), dy[1]));
  return {dz, Output{}};
}

// y = conv(x, f):  dx = Conv2DBackpropInput(shape(x), f, dy),  df = Conv2DBackpropFilter(x, shape(f), dy).
// The depthwise op has the same structure with its own backprop ops.
template <bool kDepthwise>
std::vector<Output> ConvGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const std::string base = kDepthwise ? "DepthwiseConv2D" : "Conv2D";
  const Output x = op.input(0), f = op.input(1);
  return {s.Op(base + "BackpropInput", {ops::Shape(s, x), f, dy[0]}, ConvAttrs(op)),
          s.Op(base + "BackpropFilter", {x, ops::Shape(s, f), dy[0]}, ConvAttrs(op))};
}
// z = BackpropInput(sizes, f, g) is bilinear in (f, g):  df = BackpropFilter(dz, shape(f), g),
// dg = conv(dz, f).
template <bool kDepthwise>
std::vector<Output> ConvBackpropInputGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const std::string base = kDepthwise ? "DepthwiseConv2D" : "Conv2D";
  const Output f = op.input(1), g = op.input(2);
  return {Output{}, s.Op(base + "BackpropFilter", {dy[0], ops::Shape(s, f), g}, ConvAttrs(op)),
          s.Op(base, {dy[0], f}, ConvAttrs(op))};
}
// z = BackpropFilter(x, sizes, g):  dx = BackpropInput(shape(x), dz, g),  dg = conv(x, dz).
template <bool kDepthwise>
std::vector<Output> ConvBackpropFilterGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const std::string base = kDepthwise ? "DepthwiseConv2D" : "Conv2D";
  const Output x = op.input(0), g = op.input(2);
  return {s.Op(base + "BackpropInput", {ops::Shape(s, x), dy[0], g}, ConvAttrs(op)), Output{},
          s.Op(base, {x, dy[0]}, ConvAttrs(op))};
}

// y = act(conv(x, f) + b), act = relu or identity:  dz = ReluGrad(dy, y) (or dy), then Conv2D's
// gradients of dz and db = BiasAddGrad(dz).
std::vector<Output> FusedConv2DGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output x = op.input(0), f = op.input(1);
  const Output dz = op.attr<std::string>("activation") == "Relu" ? s.Op("ReluGrad", {dy[0], Out(op, 0)}) : dy[0];
  return {s.Op("Conv2DBackpropInput", {ops::Shape(s, x), f, dz}, ConvAttrs(op)),
          s.Op("Conv2DBackpropFilter", {x, ops::Shape(s, f), dz}, ConvAttrs(op)), s.Op("BiasAddGrad", {dz})};
}

// {p, argmax} = maxpool(act(conv(x, f) + b)):  dz = _MaxPoolGradWithArgmax(argmax, p, dp) (its relu
// mask is act's derivative), then _FusedConv2D's gradients of dz. Needs the conv output's static
// height and width (the pass only fuses when they are known).
std::vector<Output> FusedConv2DMaxPoolGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output x = op.input(0), f = op.input(1);
  const TensorShape in = x.shape(), fs = f.shape();
  WEFT_REQUIRE(in.rank() == 4 && fs.rank() == 4 && in.dim(1) >= 0 && in.dim(2) >= 0 && fs.dim(0) >= 0 && fs.dim(1) >= 0,
               "{}: the gradient needs the static height and width of input {} and filter {}", op.Describe(),
               in.ToString(), fs.ToString());
  const bool same = op.attr<std::string>("padding") == "SAME";
  const IntList st = op.attr<IntList>("strides"), dil = op.attr<IntList>("dilations");
  const IntList hw = {ComputeWindow(in.dim(1), fs.dim(0), st[0], dil[0], same).out,
                      ComputeWindow(in.dim(2), fs.dim(1), st[1], dil[1], same).out};
  const Output dz = s.Op("_MaxPoolGradWithArgmax", {Out(op, 1), Out(op, 0), dy[0]},
                         {{"ksize", op.attr<IntList>("ksize")}, {"strides", op.attr<IntList>("pool_strides")},
                          {"input_hw", hw}, {"relu", op.attr<std::string>("activation") == "Relu"}});
  return {s.Op("Conv2DBackpropInput", {ops::Shape(s, x), f, dz}, ConvAttrs(op)),
          s.Op("Conv2DBackpropFilter", {x, ops::Shape(s, f), dz}, ConvAttrs(op)), s.Op("BiasAddGrad", {dz})};
}

// y = maxpool(x):  dx = dy routed to the (first) max of each window.
std::vector<Output> MaxPoolGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("MaxPoolGrad", {op.input(0), Out(op, 0), dy[0]}, PoolAttrs(op))};
}
// y = avgpool(x):  dx = dy spread evenly over each window's in-bounds elements.
std::vector<Output> AvgPoolGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("AvgPoolGrad", {ops::Shape(s, op.input(0)), dy[0]}, PoolAttrs(op))};
}
// AvgPoolGrad is linear in its grad input and is the transpose of AvgPool:  dgrad = avgpool(dz).
std::vector<Output> AvgPoolGradGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {Output{}, s.Op("AvgPool", {dy[0]}, PoolAttrs(op))};
}

// {y, mean, variance} = batchnorm(x, scale, offset, mean_in, variance_in): FusedBatchNormGrad
// takes the statistics the forward pass used (outputs 1 and 2) and the gradients of all three
// outputs; see ops/kernels/cpu/batchnorm.cc for the formulas. In training mode the mean and
// variance inputs are unused and get no gradient.
std::vector<Output> FusedBatchNormGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const bool training = op.attr<bool>("is_training");
  Node* g = s.AddNode("FusedBatchNormGrad",
                      {dy[0], op.input(0), op.input(1), Out(op, 1), Out(op, 2), dy[1], dy[2]},
                      {{"epsilon", op.attr<double>("epsilon")}, {"is_training", training}});
  return {Output(g, 0), Output(g, 1), Output(g, 2), training ? Output{} : Output(g, 3),
          training ? Output{} : Output(g, 4)};
}

// {r, mean, variance} = relu(batchnorm(...)) (_FusedBatchNormRelu): FusedBatchNormGrad of
// dr * (r > 0), in one op that masks as it reads (_FusedBatchNormGradRelu).
std::vector<Output> FusedBatchNormReluGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const bool training = op.attr<bool>("is_training");
  Node* g = s.AddNode("_FusedBatchNormGradRelu",
                      {dy[0], Out(op, 0), op.input(0), op.input(1), Out(op, 1), Out(op, 2), dy[1], dy[2]},
                      {{"epsilon", op.attr<double>("epsilon")}, {"is_training", training}});
  return {Output(g, 0), Output(g, 1), Output(g, 2), training ? Output{} : Output(g, 3),
          training ? Output{} : Output(g, 4)};
}

// As FusedBatchNormGradShape, with y (the Relu's output, y_backprop's shape) at input 1.
void FusedBatchNormGradReluShape(InferenceContext& c) {
  const TensorShape x = c.WithRankAtLeast(c.input(2), 2, "x (channels last)");
  for (int i : {0, 1}) {
    WEFT_REQUIRE(x.IsCompatibleWith(c.input(i)), "{} has shape {}, x has shape {}", c.node().def().inputs[i].name,
                 c.input(i).ToString(), x.ToString());
  }
  const int64_t ch = BatchNormChannels(c, x, 3, 5);
  c.set_output(0, x.Merge(c.input(0)).Merge(c.input(1)));
  for (int i = 1; i < 5; ++i) c.set_output(i, TensorShape({ch}));
}

}  // namespace

void RegisterNnOps(OpRegistry& r) {
  // ---- Activations and their gradient ops
  struct Activation {
    const char* name;
    GradFn grad;
    const char* doc;
  };
  const Activation activations[] = {
      {"Relu", ReluGrad, "max(x, 0), elementwise."},
      {"Relu6", Relu6Grad, "min(max(x, 0), 6), elementwise."},
      {"Elu", EluGrad, "x if x > 0 else exp(x) - 1, elementwise."},
      {"Sigmoid", SigmoidGrad, "1 / (1 + exp(-x)), elementwise."},
      {"Tanh", TanhGrad, "tanh(x), elementwise."},
      {"Softplus", SoftplusGrad, "log(1 + exp(x)), elementwise (computed without overflow)."},
  };
  for (const Activation& a : activations) {
    r.Register(a.name).Input("x", "T").Output("y", "T").TypeAttr("T", kFloats)
        .Shape(UnchangedShape).Grad(a.grad).Doc(a.doc);
  }
  r.Register("Gelu").Input("x", "T").Output("y", "T").TypeAttr("T", kFloats).Attr("approximate", false)
      .Shape(UnchangedShape).Grad(GeluGradFn)
      .Doc("x * Phi(x), elementwise (Keras' gelu): exact 0.5 x (1 + erf(x / sqrt 2)), or with approximate the "
           "tanh form 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). One op in place of the five elementwise "
           "ops (and their gradients) the formula takes.");
  r.Register("GeluGrad").Input("gradients", "T").Input("features", "T").Output("backprops", "T")
      .TypeAttr("T", kFloats).Attr("approximate", false)
      .Shape(SameShapeBinary).Grad(GeluGradGrad)
      .Doc("Gradient of Gelu from its input: gradients * gelu'(features) (exact: Phi(x) + x phi(x)).");
  r.Register("LeakyRelu").Input("x", "T").Output("y", "T").TypeAttr("T", kFloats)
      .Attr("alpha", AttrValue(0.2))
      .Shape(UnchangedShape).Grad(LeakyReluGrad)
      .Doc("x if x > 0 else alpha * x, elementwise.");

  struct ActivationGrad {
    const char* name;
    const char* a;
    const char* b;
    GradFn grad;
    const char* doc;
  };
  const ActivationGrad grads[] = {
      {"ReluGrad", "gradients", "features", ReluGradGrad,
       "Gradient of Relu: gradients * (features > 0); features may be Relu's input or output."},
      {"Relu6Grad", "gradients", "features", ReluGradGrad,
       "Gradient of Relu6: gradients * (0 < features < 6); features may be Relu6's input or output."},
      {"EluGrad", "gradients", "outputs", EluGradGrad,
       "Gradient of Elu from its outputs: gradients if outputs > 0 else gradients * (outputs + 1)."},
      {"SigmoidGrad", "y", "dy", SigmoidGradGrad, "Gradient of Sigmoid from its output y: dy * y * (1 - y)."},
      {"TanhGrad", "y", "dy", TanhGradGrad, "Gradient of Tanh from its output y: dy * (1 - y^2)."},
      {"SoftplusGrad", "gradients", "features", SoftplusGradGrad,
       "Gradient of Softplus: gradients * sigmoid(features)."},
  };
  for (const ActivationGrad& g : grads) {
    r.Register(g.name).Input(g.a, "T").Input(g.b, "T").Output("backprops", "T").TypeAttr("T", kFloats)
        .Shape(SameShapeBinary).Grad(g.grad).Doc(g.doc);
  }
  r.Register("LeakyReluGrad").Input("gradients", "T").Input("features", "T").Output("backprops", "T")
      .TypeAttr("T", kFloats).Attr("alpha", AttrValue(0.2))
      .Shape(SameShapeBinary).Grad(LeakyReluGradGrad)
      .Doc("Gradient of LeakyRelu: gradients if features > 0 else alpha * gradients.");

  // ---- BiasAdd
  r.Register("BiasAdd").Input("x", "T").Input("bias", "T").Output("y", "T").TypeAttr("T", kFloats)
      .Shape(BiasAddShape).Grad(BiasAddGrad)
      .Doc("Adds the vector bias [C] to x [..., C] along its last axis.");
  r.Register("BiasAddGrad").Input("out_backprop", "T").Output("output", "T").TypeAttr("T", kFloats)
      .Shape(BiasAddGradShape).Grad(BiasAddGradGrad)
      .Doc("Gradient of BiasAdd for the bias: out_backprop [..., C] summed over all axes but the last.");

  // ---- Softmax and losses
  r.Register("Softmax").Input("logits", "T").Output("softmax", "T").TypeAttr("T", kFloats)
      .Shape(SoftmaxShape).Grad(SoftmaxGrad)
      .Doc("exp(x) / sum(exp(x)) over the last axis (shifted by the row max for stability).");
  r.Register("SoftmaxGrad").Input("softmax", "T").Input("grad_softmax", "T").Output("backprops", "T")
      .TypeAttr("T", kFloats).Shape(SameShapeBinary).Grad(SoftmaxGradGrad)
      .Doc("Gradient of Softmax from its output: (grad_softmax - sum(grad_softmax * softmax, -1)) * softmax over "
           "the last axis.");
  r.Register("LogSoftmax").Input("logits", "T").Output("logsoftmax", "T").TypeAttr("T", kFloats)
      .Shape(SoftmaxShape).Grad(LogSoftmaxGrad)
      .Doc("x - log(sum(exp(x))) over the last axis (shifted by the row max for stability).");
  r.Register("SoftmaxCrossEntropyWithLogits")
      .Input("logits", "T").Input("labels", "T").Output("loss", "T").Output("backprop", "T")
      .TypeAttr("T", kFloats)
      .Shape(XentShape).Grad(SoftmaxXentGrad)
      .Doc("Per-row cross-entropy -sum(labels * log_softmax(logits)) of logits and label distributions "
           "[batch, classes]; backprop = softmax(logits) - labels.");
  r.Register("SparseSoftmaxCrossEntropyWithLogits")
      .Input("logits", "T").Input("labels", "Tlabels").Output("loss", "T").Output("backprop", "T")
      .TypeAttr("T", kFloats).TypeAttr("Tlabels", {DType::kInt32, DType::kInt64}, DType::kInt64)
      .Shape(SparseXentShape).Grad(SparseSoftmaxXentGrad)
      .Doc("Per-row cross-entropy -log_softmax(logits)[label] of logits [batch, classes] and class ids "
           "[batch] in [0, classes); backprop = softmax(logits) - one_hot(labels).");

  // ---- Convolutions
  const IntList ones = {1, 1};
  auto conv = [&](const char* name, const char* in0, const char* t0, const char* in1, const char* t1,
                  const char* out) {
    return r.Register(name).Input(in0, t0).Input(in1, t1).Output(out, "T").TypeAttr("T", kFloats)
        .Attr("strides", AttrValue(ones)).Attr("padding", "VALID").Attr("dilations", AttrValue(ones));
  };
  conv("Conv2D", "input", "T", "filter", "T", "output")
      .Shape(Conv2DShape).Grad(ConvGrad<false>)
      .Doc("2-D convolution (cross-correlation) of input [N, H, W, C] with filter [KH, KW, C, O]; "
           "strides and dilations are [h, w]; padding SAME or VALID as in TensorFlow.");
  r.Register("Conv2DBackpropInput").Input("input_sizes", "int32").Input("filter", "T").Input("out_backprop", "T")
      .Output("output", "T").TypeAttr("T", kFloats)
      .Attr("strides", AttrValue(ones)).Attr("padding", "VALID").Attr("dilations", AttrValue(ones))
      .Shape(ConvBackpropInputShape).Grad(ConvBackpropInputGrad<false>)
      .Doc("Gradient of Conv2D for its input, of shape input_sizes (a run-time int32 [4] vector).");
  r.Register("Conv2DBackpropFilter").Input("input", "T").Input("filter_sizes", "int32").Input("out_backprop", "T")
      .Output("output", "T").TypeAttr("T", kFloats)
      .Attr("strides", AttrValue(ones)).Attr("padding", "VALID").Attr("dilations", AttrValue(ones))
      .Shape(ConvBackpropFilterShape).Grad(ConvBackpropFilterGrad<false>)
      .Doc("Gradient of Conv2D for its filter, of shape filter_sizes (a run-time int32 [4] vector).");
  r.Register("_Conv2DBackpropFilterBias").Input("input", "T").Input("filter_sizes", "int32")
      .Input("out_backprop", "T").Output("filter_backprop", "T").Output("bias_backprop", "T").TypeAttr("T", kFloats)
      .Attr("strides", AttrValue(ones)).Attr("padding", "VALID").Attr("dilations", AttrValue(ones))
      .Shape(ConvBackpropFilterBiasShape)
      .Doc("Conv2DBackpropFilter(input, filter_sizes, out_backprop) and BiasAddGrad(out_backprop) in one "
           "kernel (oneDNN's filter gradient sums the bias from its own reads of out_backprop). The "
           "FuseNnOps graph pass makes it.");
  r.Register("_FusedConv2D").Input("input", "T").Input("filter", "T").Input("bias", "T").Output("output", "T")
      .TypeAttr("T", kFloats)
      .Attr("strides", AttrValue(ones)).Attr("padding", "VALID").Attr("dilations", AttrValue(ones))
      .Attr("activation", "None")
      .Shape(FusedConv2DShape).Grad(FusedConv2DGrad)
      .Doc("Conv2D, BiasAdd and (activation \"Relu\") Relu in one pass over the output: "
           "act(conv(input, filter) + bias), activation \"None\" or \"Relu\". The FuseNnOps graph pass "
           "(graph/passes.h) makes it from those three nodes.");
  r.Register("_FusedConv2DMaxPool").Input("input", "T").Input("filter", "T").Input("bias", "T")
      .Output("output", "T").Output("argmax", "int32").TypeAttr("T", kFloats)
      .Attr("strides", AttrValue(ones)).Attr("padding", "VALID").Attr("dilations", AttrValue(ones))
      .Attr("activation", "None").Attr("ksize", AttrType::kIntList).Attr("pool_strides", AttrType::kIntList)
      .Attr("pool_padding", "VALID")
      .Shape(FusedConv2DMaxPoolShape).Grad(FusedConv2DMaxPoolGrad)
      .Doc("MaxPool(_FusedConv2D(input, filter, bias)) without the conv output in memory: output is the "
           "pooled value, argmax the window tap (row-major) it came from. CPU kernel: at most 4 input "
           "channels, VALID non-overlapping pools. The FuseNnOps graph pass makes it.");
  r.Register("_MaxPoolGradWithArgmax").Input("argmax", "int32").Input("pooled", "T").Input("grad", "T")
      .Output("output", "T").TypeAttr("T", kFloats)
      .Attr("ksize", AttrType::kIntList).Attr("strides", AttrType::kIntList).Attr("input_hw", AttrType::kIntList)
      .Attr("relu", AttrValue(false))
      .Shape(MaxPoolGradWithArgmaxShape)
      .Doc("Gradient of a VALID non-overlapping max pool of an input [N, input_hw, C] from the taps "
           "_FusedConv2DMaxPool recorded: grad at each window's winning tap (zero where pooled <= 0 when "
           "relu), zero elsewhere.");
  r.Register("_ConvPoolBackpropFilterBias").Input("input", "T").Input("filter_sizes", "int32")
      .Input("argmax", "int32").Input("pooled", "T").Input("grad", "T")
      .Output("filter_backprop", "T").Output("bias_backprop", "T").TypeAttr("T", kFloats)
      .Attr("strides", AttrValue(ones)).Attr("padding", "VALID").Attr("dilations", AttrValue(ones))
      .Attr("ksize", AttrType::kIntList).Attr("pool_strides", AttrType::kIntList).Attr("relu", AttrValue(false))
      .Shape(ConvPoolBackpropFilterBiasShape)
      .Doc("Conv2DBackpropFilter and BiasAddGrad of dz = _MaxPoolGradWithArgmax(argmax, pooled, grad) "
           "(from a _FusedConv2DMaxPool of input) without storing dz. The FuseNnOps graph pass makes it.");
  conv("DepthwiseConv2D", "input", "T", "filter", "T", "output")
      .Shape(DepthwiseConv2DShape).Grad(ConvGrad<true>)
      .Doc("Depthwise 2-D convolution of input [N, H, W, C] with filter [KH, KW, C, M]: output channel "
           "c * M + m convolves input channel c only; output has C * M channels.");
  r.Register("DepthwiseConv2DBackpropInput")
      .Input("input_sizes", "int32").Input("filter", "T").Input("out_backprop", "T")
      .Output("output", "T").TypeAttr("T", kFloats)
      .Attr("strides", AttrValue(ones)).Attr("padding", "VALID").Attr("dilations", AttrValue(ones))
      .Shape(ConvBackpropInputShape).Grad(ConvBackpropInputGrad<true>)
      .Doc("Gradient of DepthwiseConv2D for its input, of shape input_sizes (a run-time int32 [4] vector).");
  r.Register("DepthwiseConv2DBackpropFilter")
      .Input("input", "T").Input("filter_sizes", "int32").Input("out_backprop", "T")
      .Output("output", "T").TypeAttr("T", kFloats)
      .Attr("strides", AttrValue(ones)).Attr("padding", "VALID").Attr("dilations", AttrValue(ones))
      .Shape(ConvBackpropFilterShape).Grad(ConvBackpropFilterGrad<true>)
      .Doc("Gradient of DepthwiseConv2D for its filter, of shape filter_sizes (a run-time int32 [4] vector).");

  // ---- Pooling
  r.Register("MaxPool").Input("input", "T").Output("output", "T").TypeAttr("T", kFloats)
      .Attr("ksize", AttrType::kIntList).Attr("strides", AttrType::kIntList).Attr("padding", "VALID")
      .Shape(PoolShape).Grad(MaxPoolGrad)
      .Doc("Max over ksize [h, w] windows of input [N, H, W, C]; SAME padding never wins a max.");
  r.Register("MaxPoolGrad").Input("orig_input", "T").Input("orig_output", "T").Input("grad", "T")
      .Output("output", "T").TypeAttr("T", kFloats)
      .Attr("ksize", AttrType::kIntList).Attr("strides", AttrType::kIntList).Attr("padding", "VALID")
      .Shape(MaxPoolGradShape)
      .Doc("Gradient of MaxPool: each window's grad goes to its first maximum (row-major order).");
  r.Register("_MaxPoolGradRelu").Input("orig_input", "T").Input("orig_output", "T").Input("grad", "T")
      .Output("output", "T").TypeAttr("T", kFloats)
      .Attr("ksize", AttrType::kIntList).Attr("strides", AttrType::kIntList).Attr("padding", "VALID")
      .Shape(MaxPoolGradShape)
      .Doc("ReluGrad(MaxPoolGrad(orig_input, orig_output, grad), orig_input) in one pass: the gradient of "
           "MaxPool(Relu(z)) for z, given the Relu's output as orig_input. The FuseNnOps graph pass "
           "(graph/passes.h) makes it from those two nodes.");
  r.Register("AvgPool").Input("input", "T").Output("output", "T").TypeAttr("T", kFloats)
      .Attr("ksize", AttrType::kIntList).Attr("strides", AttrType::kIntList).Attr("padding", "VALID")
      .Shape(PoolShape).Grad(AvgPoolGrad)
      .Doc("Mean over ksize [h, w] windows of input [N, H, W, C]; SAME windows average their in-bounds "
           "elements only.");
  r.Register("AvgPoolGrad").Input("orig_input_shape", "int32").Input("grad", "T")
      .Output("output", "T").TypeAttr("T", kFloats)
      .Attr("ksize", AttrType::kIntList).Attr("strides", AttrType::kIntList).Attr("padding", "VALID")
      .Shape(AvgPoolGradShape).Grad(AvgPoolGradGrad)
      .Doc("Gradient of AvgPool: each window's grad spread evenly over its in-bounds elements.");

  // ---- Batch norm
  r.Register("FusedBatchNorm")
      .Input("x", "T").Input("scale", "T").Input("offset", "T").Input("mean", "T").Input("variance", "T")
      .Output("y", "T").Output("batch_mean", "T").Output("batch_variance", "T")
      .TypeAttr("T", kFloats).Attr("epsilon", AttrValue(1e-3)).Attr("is_training", AttrValue(true))
      .Shape(FusedBatchNormShape).Grad(FusedBatchNormGrad)
      .Doc("Batch norm over the last axis of x: y = (x - mean) / sqrt(variance + epsilon) * scale + offset. "
           "Training mode normalizes with (and returns) the batch mean and biased variance; inference "
           "mode uses (and returns) the given mean and variance.");
  r.Register("FusedBatchNormGrad")
      .Input("y_backprop", "T").Input("x", "T").Input("scale", "T").Input("mean", "T").Input("variance", "T")
      .Input("mean_backprop", "T").Input("variance_backprop", "T")
      .Output("x_backprop", "T").Output("scale_backprop", "T").Output("offset_backprop", "T")
      .Output("mean_input_backprop", "T").Output("variance_input_backprop", "T")
      .TypeAttr("T", kFloats).Attr("epsilon", AttrValue(1e-3)).Attr("is_training", AttrValue(true))
      .Shape(FusedBatchNormGradShape)
      .Doc("Gradient of FusedBatchNorm given the statistics it normalized with (its outputs 1 and 2) and "
           "the gradients of all its outputs; the last two outputs are zero in training mode.");
  r.Register("_FusedBatchNormRelu")
      .Input("x", "T").Input("scale", "T").Input("offset", "T").Input("mean", "T").Input("variance", "T")
      .Output("y", "T").Output("batch_mean", "T").Output("batch_variance", "T")
      .TypeAttr("T", kFloats).Attr("epsilon", AttrValue(1e-3)).Attr("is_training", AttrValue(true))
      .Shape(FusedBatchNormShape).Grad(FusedBatchNormReluGrad)
      .Doc("Relu(FusedBatchNorm(...)) in one pass over the output (TF's _FusedBatchNormEx with activation "
           "Relu): y = max(batchnorm(x), 0), the statistics as FusedBatchNorm's. The FuseNnOps graph pass "
           "(graph/passes.h) makes it from the two nodes.");
  r.Register("_FusedBatchNormGradRelu")
      .Input("y_backprop", "T").Input("y", "T").Input("x", "T").Input("scale", "T").Input("mean", "T")
      .Input("variance", "T").Input("mean_backprop", "T").Input("variance_backprop", "T")
      .Output("x_backprop", "T").Output("scale_backprop", "T").Output("offset_backprop", "T")
      .Output("mean_input_backprop", "T").Output("variance_input_backprop", "T")
      .TypeAttr("T", kFloats).Attr("epsilon", AttrValue(1e-3)).Attr("is_training", AttrValue(true))
      .Shape(FusedBatchNormGradReluShape)
      .Doc("FusedBatchNormGrad(ReluGrad(y_backprop, y), x, ...) without storing the ReluGrad: y is "
           "_FusedBatchNormRelu's (or Relu's) output, y_backprop its gradient. The FuseNnOps graph pass "
           "makes it from the two nodes.");
}

namespace ops {

Output BiasAdd(const Scope& s, Output x, Output bias) { return s.Op("BiasAdd", {x, bias}); }
Output Relu(const Scope& s, Output x) { return s.Op("Relu", {x}); }
Output Relu6(const Scope& s, Output x) { return s.Op("Relu6", {x}); }
Output LeakyRelu(const Scope& s, Output x, double alpha) { return s.Op("LeakyRelu", {x}, {{"alpha", alpha}}); }
Output Elu(const Scope& s, Output x) { return s.Op("Elu", {x}); }
Output Sigmoid(const Scope& s, Output x) { return s.Op("Sigmoid", {x}); }
Output Tanh(const Scope& s, Output x) { return s.Op("Tanh", {x}); }
Output Softplus(const Scope& s, Output x) { return s.Op("Softplus", {x}); }
Output Gelu(const Scope& s, Output x, bool approximate) { return s.Op("Gelu", {x}, {{"approximate", approximate}}); }
Output Softmax(const Scope& s, Output logits) { return s.Op("Softmax", {logits}); }
Output LogSoftmax(const Scope& s, Output logits) { return s.Op("LogSoftmax", {logits}); }
static std::vector<Output> AllOutputs(Node* n) {
  std::vector<Output> outs;
  for (int i = 0; i < n->num_outputs(); ++i) outs.emplace_back(n, i);
  return outs;
}
std::vector<Output> SoftmaxCrossEntropyWithLogits(const Scope& s, Output logits, Output labels) {
  return AllOutputs(s.AddNode("SoftmaxCrossEntropyWithLogits", {logits, labels}));
}
std::vector<Output> SparseSoftmaxCrossEntropyWithLogits(const Scope& s, Output logits, Output labels) {
  return AllOutputs(s.AddNode("SparseSoftmaxCrossEntropyWithLogits", {logits, labels}));
}
Output Conv2D(const Scope& s, Output input, Output filter, std::vector<int64_t> strides, std::string padding,
              std::vector<int64_t> dilations) {
  return s.Op("Conv2D", {input, filter}, {{"strides", strides}, {"padding", padding}, {"dilations", dilations}});
}
Output DepthwiseConv2D(const Scope& s, Output input, Output filter, std::vector<int64_t> strides, std::string padding,
                       std::vector<int64_t> dilations) {
  return s.Op("DepthwiseConv2D", {input, filter},
              {{"strides", strides}, {"padding", padding}, {"dilations", dilations}});
}
Output Conv2DBackpropInput(const Scope& s, Output input_sizes, Output filter, Output out_backprop,
                           std::vector<int64_t> strides, std::string padding, std::vector<int64_t> dilations) {
  return s.Op("Conv2DBackpropInput", {input_sizes, filter, out_backprop},
              {{"strides", strides}, {"padding", padding}, {"dilations", dilations}});
}
Output Conv2DBackpropFilter(const Scope& s, Output input, Output filter_sizes, Output out_backprop,
                            std::vector<int64_t> strides, std::string padding, std::vector<int64_t> dilations) {
  return s.Op("Conv2DBackpropFilter", {input, filter_sizes, out_backprop},
              {{"strides", strides}, {"padding", padding}, {"dilations", dilations}});
}
Output MaxPool(const Scope& s, Output input, std::vector<int64_t> ksize, std::vector<int64_t> strides, std::string padding) {
  return s.Op("MaxPool", {input}, {{"ksize", ksize}, {"strides", strides}, {"padding", padding}});
}
Output AvgPool(const Scope& s, Output input, std::vector<int64_t> ksize, std::vector<int64_t> strides, std::string padding) {
  return s.Op("AvgPool", {input}, {{"ksize", ksize}, {"strides", strides}, {"padding", padding}});
}

std::vector<Output> FusedBatchNorm(const Scope& s, Output x, Output scale, Output offset, Output mean, Output variance,
                                   double epsilon, bool is_training) {
  return AllOutputs(s.AddNode("FusedBatchNorm", {x, scale, offset, mean, variance},
                              {{"epsilon", epsilon}, {"is_training", is_training}}));
}

}  // namespace ops
}  // namespace weft
