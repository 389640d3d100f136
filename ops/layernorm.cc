// LayerNorm and LayerNormGrad (Keras' LayerNormalization over the last axis): shape functions,
// the gradient and the builder. Kernels: ops/kernels/cpu/layernorm.cc, ops/kernels/cuda/.
#include "ops/all_ops.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"

namespace weft {
namespace {

const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat64};

Output Out(const Node& op, int i) { return Output(const_cast<Node*>(&op), i); }

// LayerNorm: y as x; mean and rstd x's shape without its last dim; gamma / beta [C].
TensorShape LayerNormRows(InferenceContext& c, const TensorShape& x,
                          std::initializer_list<std::pair<int, const char*>> vecs) {
  if (x.unknown_rank()) return TensorShape::Unknown();
  WEFT_REQUIRE(x.rank() >= 1, "x must have rank at least 1 (normalized over the last axis), got a scalar");
  const int64_t ch = x.dim(x.rank() - 1);
  for (const auto& [i, name] : vecs) {
    const TensorShape& v = c.input(i);
    WEFT_REQUIRE(v.unknown_rank() || (v.rank() == 1 && (v.dim(0) < 0 || ch < 0 || v.dim(0) == ch)),
                 "{} must have shape [{}] (the last dim of x {}), got {}", name, ch, x.ToString(), v.ToString());
  }
  std::vector<int64_t> dims(x.dims().begin(), x.dims().end() - 1);
  return TensorShape(dims);
}

void LayerNormShape(InferenceContext& c) {
  const TensorShape rows = LayerNormRows(c, c.input(0), {{1, "gamma"}, {2, "beta"}});
  c.set_output(0, c.input(0));
  c.set_output(1, rows);
  c.set_output(2, rows);
}

void LayerNormGradShape(InferenceContext& c) {
  WEFT_REQUIRE(c.input(1).IsCompatibleWith(c.input(0)), "dy has shape {}, x has shape {}", c.input(0).ToString(),
               c.input(1).ToString());
  const TensorShape x = c.input(1).Merge(c.input(0));
  const TensorShape rows = LayerNormRows(c, x, {{2, "gamma"}});
  for (int i : {3, 4}) {
    WEFT_REQUIRE(rows.unknown_rank() || c.input(i).IsCompatibleWith(rows),
                 "mean {} and rstd {} must have x's shape without its last dim, {}", c.input(3).ToString(),
                 c.input(4).ToString(), rows.ToString());
  }
  const int64_t ch = x.unknown_rank() || x.rank() == 0 ? -1 : x.dim(x.rank() - 1);
  c.set_output(0, x);
  c.set_output(1, TensorShape({ch}));
  c.set_output(2, TensorShape({ch}));
}

// {y, mean, rstd} = layernorm(x, gamma, beta): LayerNormGrad from the statistics the forward pass
// computed (outputs 1 and 2). Gradients reaching those outputs (LayerNormalization never uses
// them, so rarely) add, per row of C values: dx += dmean / C + drstd * -rstd^3 * (x - mean) / C.
std::vector<Output> LayerNormGradFn(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const Output x = op.input(0), mean = Out(op, 1), rstd = Out(op, 2);
  Node* g = s.AddNode("LayerNormGrad", {dy[0].node ? dy[0] : ops::ZerosLike(s, Out(op, 0)), x, op.input(1), mean,
                                        rstd}, {});
  Output dx(g, 0);
  // Gradients() fills the outputs nothing reads with ZerosLike: those add nothing.
  auto reaches = [](const Output& d) { return d.node != nullptr && d.node->op() != "ZerosLike"; };
  if (reaches(dy[1]) || reaches(dy[2])) {
    const Output inv_c = ops::Div(s, ops::OnesLike(s, ops::ExpandDims(s, rstd, -1)),
                                  ops::Cast(s, ops::StridedSlice(s, ops::Shape(s, x), {-1}, {0}, {1}, 0, /*end_mask=*/1), x.dtype()));
    if (reaches(dy[1])) dx = ops::Add(s, dx, ops::Mul(s, ops::ExpandDims(s, dy[1], -1), inv_c));
    if (reaches(dy[2])) {
      const Output r = ops::ExpandDims(s, rstd, -1);
      const Output k = ops::Mul(s, ops::Neg(s, ops::Mul(s, ops::Mul(s, r, r), r)), ops::ExpandDims(s, dy[2], -1));
      dx = ops::Add(s, dx, ops::Mul(s, ops::Mul(s, k, ops::Sub(s, x, ops::ExpandDims(s, mean, -1))), inv_c));
    }
  }
  return {dx, Output(g, 1), Output(g, 2)};
}

}  // namespace

void RegisterLayerNormOps(OpRegistry& r) {
  r.Register("LayerNorm")
      .Input("x", "T").Input("gamma", "T").Input("beta", "T")
      .Output("y", "T").Output("mean", "T").Output("rstd", "T")
      .TypeAttr("T", kFloats).Attr("epsilon", AttrValue(1e-3))
      .Shape(LayerNormShape).Grad(LayerNormGradFn)
      .Doc("Layer normalization over the last axis of x (Keras' LayerNormalization, axis=-1): y = (x - mean) * "
           "rstd * gamma + beta, with the per-row mean and rstd = 1 / sqrt(biased variance + epsilon) as "
           "outputs 1 and 2 (x's shape without the last dim).");
  r.Register("LayerNormGrad")
      .Input("dy", "T").Input("x", "T").Input("gamma", "T").Input("mean", "T").Input("rstd", "T")
      .Output("dx", "T").Output("dgamma", "T").Output("dbeta", "T")
      .TypeAttr("T", kFloats).Shape(LayerNormGradShape)
      .Doc("Gradient of LayerNorm given the statistics it normalized with (its outputs 1 and 2): dx, dgamma, dbeta.");
}

namespace ops {

std::vector<Output> LayerNorm(const Scope& s, Output x, Output gamma, Output beta, double epsilon) {
  Node* n = s.AddNode("LayerNorm", {x, gamma, beta}, {{"epsilon", epsilon}});
  return {Output(n, 0), Output(n, 1), Output(n, 2)};
}

}  // namespace ops
}  // namespace weft
