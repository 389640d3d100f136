// FusedCausalAttention and its gradient op (ops/attention.h). The gradient op takes the forward
// op's inputs and outputs and recomputes the attention probabilities from the saved row
// log-sum-exp (ops/kernels/cpu/attention.cc has the formulas).
//
// Shape key: B = batch, T = query steps, S = key steps, H = heads, K = key dim, V = value dim.
#include "ops/attention.h"

#include <algorithm>
#include <cmath>

#include "ops/all_ops.h"
#include "ops/framework.h"
#include "ops/op_def.h"

namespace weft {
namespace {

const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat64};

int64_t Dim(const TensorShape& s, int i) { return s.unknown_rank() ? -1 : s.dim(i); }

void AttentionShape(InferenceContext& c) {
  const AttentionDims d = CheckAttentionShapes(c.input(0), c.input(1), c.input(2));
  c.set_output(0, TensorShape({d.batch, d.queries, d.heads, d.value_dim}));
  c.set_output(1, TensorShape({d.batch, d.heads, d.queries}));
}

// Inputs: dout, q, k, v, out, lse, dlse; outputs dq, dk, dv (q's, k's and v's shapes).
void AttentionGradShape(InferenceContext& c) {
  const AttentionDims d = CheckAttentionShapes(c.input(1), c.input(2), c.input(3));
  const TensorShape out({d.batch, d.queries, d.heads, d.value_dim});
  WEFT_REQUIRE(c.input(0).IsCompatibleWith(out), "dout has shape {}; the attention's output is {}",
               c.input(0).ToString(), out.ToString());
  c.set_output(0, c.input(1));
  c.set_output(1, c.input(2));
  c.set_output(2, c.input(3));
}

// d(sum w . out + u . lse): FusedCausalAttentionGrad from the saved out and lse. An lse gradient
// nothing produced (the ZerosLike Gradients fills in) goes as the empty [0] tensor, read as zeros.
std::vector<Output> AttentionGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  Node& fwd = const_cast<Node&>(op);
  const bool no_dlse = dy[1].node != nullptr && dy[1].node->op() == "ZerosLike";
  const Output dlse = no_dlse ? ops::Const(s, Tensor::Zeros(dy[1].dtype(), TensorShape({0}))) : dy[1];
  Node* g = s.AddNode("FusedCausalAttentionGrad",
                      {dy[0], op.input(0), op.input(1), op.input(2), Output(&fwd, 0), Output(&fwd, 1), dlse},
                      {{"scale", op.attr<double>("scale")}});
  return {Output(g, 0), Output(g, 1), Output(g, 2)};
}

}  // namespace

AttentionDims CheckAttentionShapes(const TensorShape& q, const TensorShape& k, const TensorShape& v) {
  for (auto [x, name] : {std::pair{&q, "q"}, {&k, "k"}, {&v, "v"}}) {
    WEFT_REQUIRE(x->unknown_rank() || x->rank() == 4, "{} must have rank 4 ([batch, steps, heads, dim]), got shape {}",
                 name, x->ToString());
  }
  auto agree = [&](int64_t a, int64_t b, const char* what) {
    WEFT_REQUIRE(a < 0 || b < 0 || a == b, "{} differ: q {}, k {}, v {}", what, q.ToString(), k.ToString(),
                 v.ToString());
    return a >= 0 ? a : b;
  };
  AttentionDims d;
  d.batch = agree(agree(Dim(q, 0), Dim(k, 0), "batch sizes"), Dim(v, 0), "batch sizes");
  d.queries = Dim(q, 1);
  d.keys = agree(Dim(k, 1), Dim(v, 1), "key and value steps");
  d.heads = agree(agree(Dim(q, 2), Dim(k, 2), "head counts"), Dim(v, 2), "head counts");
  d.key_dim = agree(Dim(q, 3), Dim(k, 3), "q's and k's last dims (key_dim)");
  d.value_dim = Dim(v, 3);
  return d;
}

AttentionDims CheckAttentionInputs(const Tensor& q, const Tensor& k, const Tensor& v) {
  const AttentionDims d = CheckAttentionShapes(q.shape(), k.shape(), v.shape());
  WEFT_REQUIRE(d.keys > 0 || d.queries == 0 || d.batch * d.heads == 0,
               "causal attention needs at least one key step for its {} query steps: q {}, k {}", d.queries,
               q.shape().ToString(), k.shape().ToString());
  return d;
}

bool CheckAttentionGradInputs(const AttentionDims& d, const Tensor& dout, const Tensor& out, const Tensor& lse,
                              const Tensor& dlse) {
  const TensorShape out_shape({d.batch, d.queries, d.heads, d.value_dim}), lse_shape({d.batch, d.heads, d.queries});
  WEFT_REQUIRE(dout.shape() == out_shape && out.shape() == out_shape,
               "dout {} and out {} must have the attention output's shape {}", dout.shape().ToString(),
               out.shape().ToString(), out_shape.ToString());
  WEFT_REQUIRE(lse.shape() == lse_shape, "lse must have shape {} ([batch, heads, query steps]), got {}",
               lse_shape.ToString(), lse.shape().ToString());
  const bool has_dlse = !(dlse.rank() == 1 && dlse.dim(0) == 0);
  WEFT_REQUIRE(!has_dlse || dlse.shape() == lse_shape, "dlse must have lse's shape {} (or be empty: zeros), got {}",
               lse_shape.ToString(), dlse.shape().ToString());
  return has_dlse;
}

double AttentionScale(double scale, int64_t key_dim) {
  return scale != 0 ? scale : 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(key_dim, 1)));
}

void RegisterAttentionOps(OpRegistry& r) {
  r.Register("FusedCausalAttention")
      .Input("q", "T").Input("k", "T").Input("v", "T")
      .Output("out", "T").Output("lse", "T")
      .TypeAttr("T", kFloats).Attr("scale", AttrValue(0.0))
      .Shape(AttentionShape).Grad(AttentionGrad)
      .Doc("Causal multi-head attention in one op (weft's; Keras' MultiHeadAttention with use_causal_mask uses it "
           "when no attention dropout is active): q [B, T, H, K], k [B, S, H, K], v [B, S, H, V]; per batch and "
           "head, out_i = sum_{j <= i} softmax_j(scale * q_i . k_j) v_j ([B, T, H, V]) and lse_i = log sum_{j <= i} "
           "exp(scale * q_i . k_j) ([B, H, T]). scale 0 means 1 / sqrt(K). No [B, H, T, S] tensor is kept: the "
           "gradient recomputes the probabilities from lse.");
  r.Register("FusedCausalAttentionGrad")
      .Input("dout", "T").Input("q", "T").Input("k", "T").Input("v", "T").Input("out", "T").Input("lse", "T")
      .Input("dlse", "T")
      .Output("dq", "T").Output("dk", "T").Output("dv", "T")
      .TypeAttr("T", kFloats).Attr("scale", AttrValue(0.0))
      .Shape(AttentionGradShape)
      .Doc("Gradient of FusedCausalAttention from its inputs, its outputs (out, lse) and their gradients (dout, "
           "dlse; dlse may be an empty [0] tensor, read as zeros): dq, dk, dv. Not differentiable itself.");
}

namespace ops {

std::vector<Output> FusedCausalAttention(const Scope& s, Output q, Output k, Output v, double scale) {
  Node* n = s.AddNode("FusedCausalAttention", {q, k, v}, {{"scale", scale}});
  return {Output(n, 0), Output(n, 1)};
}

}  // namespace ops
}  // namespace weft
