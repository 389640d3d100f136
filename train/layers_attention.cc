// Keras' MultiHeadAttention over rank-3 inputs (batch, steps, features): attention along axis 1.
//
// Shape key: B = batch, T = query steps, S = key/value steps, D = features, H = num_heads,
// K = key_dim, V = value_dim, O = output features.
//   q = query @ Wq + bq  (B,T,H,K)      k = key @ Wk + bk  (B,S,H,K)      v = value @ Wv + bv  (B,S,H,V)
//   p = masked_softmax(q k^T / sqrt(K))  (B,H,T,S), then dropout in training
//   out = (p v) @ Wo + bo  (B,T,O)
// The weights have Keras' shapes (query/kernel (D,H,K), ..., attention_output/kernel (H,V,O)), so
// Keras' get_weights / set_weights order and shapes carry over; each projection is one MatMul
// over the (rows, D) view. The mask keeps positions where attention_mask > 0.5 and (causal) the
// key step <= the query step; masked scores become -1e9 before the softmax, as Keras' (so a fully
// masked query row attends uniformly, as Keras' default fused path; with dropout its weights are 0).
// Causal self-attention without a mask input, dropout or returned weights runs as one
// FusedCausalAttention op (ops/attention.h) instead of the composed ops.
#include <cmath>

#include "ops/array.h"
#include "ops/attention.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "ops/random.h"
#include "train/layer.h"

namespace weft::train {
namespace {

class MultiHeadAttentionLayer : public Layer {
 public:
  MultiHeadAttentionLayer(int64_t num_heads, int64_t key_dim, MultiHeadAttentionOptions o)
      : Layer("MultiHeadAttention"), heads_(num_heads), key_dim_(key_dim), o_(std::move(o)) {
    WEFT_REQUIRE(num_heads > 0 && key_dim > 0, "MultiHeadAttention: num_heads and key_dim must be positive, got {} and {}",
                 num_heads, key_dim);
    WEFT_REQUIRE(o_.value_dim >= 0 && o_.output_dim >= 0,
                 "MultiHeadAttention: value_dim and output_shape must be positive (or 0: the default), got {} and {}",
                 o_.value_dim, o_.output_dim);
    WEFT_REQUIRE(o_.dropout >= 0 && o_.dropout < 1, "MultiHeadAttention: dropout must be in [0, 1), got {}", o_.dropout);
    if (o_.value_dim == 0) o_.value_dim = key_dim;
  }
  void set_use_causal_mask(bool causal) {
    WEFT_REQUIRE(!built() || causal == o_.use_causal_mask,
                 "{}: use_causal_mask={} differs from its first call's; weft fixes it per layer", Describe(), causal);
    o_.use_causal_mask = causal;
  }

  void set_return_attention_scores(bool scores) {
    WEFT_REQUIRE(!built() || scores == o_.return_attention_scores,
                 "{}: return_attention_scores={} differs from its first call's; weft fixes it per layer", Describe(),
                 scores);
    o_.return_attention_scores = scores;
  }

  void Build(const std::vector<TensorShape>& in) override {
    WEFT_REQUIRE(in.size() <= 4, "{}: takes query, value, key and attention_mask (at most 4 inputs), got {}",
                 Describe(), in.size());
    const TensorShape& key = in.size() >= 3 ? in[2] : in[1];
    for (const TensorShape* x : {&in[0], &in[1], &key}) {
      WEFT_REQUIRE(x->rank() == 3 && x->dim(1) > 0 && x->dim(2) > 0,
                   "{}: query, value and key must be (batch, steps, features) with known steps and features, got {}",
                   Describe(), x->ToString());
    }
    const int64_t d = in[0].dim(2), out = o_.output_dim > 0 ? o_.output_dim : d;
    auto dense = [&](const std::string& name, TensorShape kernel, TensorShape bias) {
      AddWeight(name + "/kernel", std::move(kernel), o_.kernel_initializer, true, o_.kernel_l2, o_.kernel_l1);
      if (o_.use_bias) AddWeight(name + "/bias", std::move(bias), o_.bias_initializer);
    };
    dense("query", {d, heads_, key_dim_}, {heads_, key_dim_});
    dense("key", {key.dim(2), heads_, key_dim_}, {heads_, key_dim_});
    dense("value", {in[1].dim(2), heads_, o_.value_dim}, {heads_, o_.value_dim});
    dense("attention_output", {heads_, o_.value_dim, out}, {out});
  }

  Output Call(CallContext& ctx, const std::vector<Output>& in) const override { return CallOutputs(ctx, in)[0]; }

  // {output} or, with return_attention_scores, {output, the attention weights (B, H, T, S)}.
  std::vector<Output> CallOutputs(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    const Output query = in[0], value = in[1], key = in.size() >= 3 ? in[2] : in[1];
    const int64_t t = query.shape().dim(1), steps = value.shape().dim(1);
    WEFT_REQUIRE(key.shape().dim(1) == steps, "{}: key has {} steps and value {}; they must match", Describe(),
                 key.shape().dim(1), steps);
    const int per = o_.use_bias ? 2 : 1;  // weights per projection
    auto w = [&](int projection, int k) { return ctx.weights[projection * per + k]; };
    // x (B, n, D) -> (B, n, H, dim): one MatMul over the (B*n, D) rows, heads split after.
    auto project_rows = [&](Output x, int projection, int64_t dim, const char* name) {
      const Scope ps = s.NewSubScope(name);
      const int64_t features = x.shape().dim(2), n = x.shape().dim(1);
      Output y = ops::MatMul(ps, ops::Reshape(ps, x, std::vector<int64_t>{-1, features}),
                             ops::Reshape(ps, w(projection, 0), std::vector<int64_t>{features, heads_ * dim}));
      if (o_.use_bias) y = ops::BiasAdd(ps, y, ops::Reshape(ps, w(projection, 1), std::vector<int64_t>{heads_ * dim}));
      return ops::Reshape(ps, y, std::vector<int64_t>{-1, n, heads_, dim});
    };
    // The attention output (B, T, H, V) -> (B, T, O).
    auto output_projection = [&](Output context) {
      const Scope os = s.NewSubScope("attention_output");
      const int64_t out = w(3, 0).shape().dim(2);
      Output y = ops::MatMul(os, ops::Reshape(os, context, std::vector<int64_t>{-1, heads_ * o_.value_dim}),
                             ops::Reshape(os, w(3, 0), std::vector<int64_t>{heads_ * o_.value_dim, out}));
      if (o_.use_bias) y = ops::BiasAdd(os, y, w(3, 1));
      return ops::Reshape(os, y, std::vector<int64_t>{-1, t, out});
    };
    // Causal self-attention with nothing else to apply to the weights (no attention_mask, no
    // dropout in this call, the weights not returned): one FusedCausalAttention over the
    // projections' own (B, n, H, dim) layout, no transposes and no (B, H, T, S) tensor kept for
    // the gradient. Its result is the composed path's up to float rounding.
    if (o_.use_causal_mask && in.size() < 4 && !(ctx.training && o_.dropout > 0) && !o_.return_attention_scores) {
      const Output q = project_rows(query, 0, key_dim_, "query");
      const Output k = project_rows(key, 1, key_dim_, "key");
      const Output v = project_rows(value, 2, o_.value_dim, "value");
      const double scale = 1.0 / std::sqrt(static_cast<double>(key_dim_));
      return {output_projection(ops::FusedCausalAttention(s, q, k, v, scale)[0])};
    }
    // x (B, n, D) -> (B, H, n, dim).
    auto project = [&](Output x, int projection, int64_t dim, const char* name) {
      return ops::Transpose(s, project_rows(x, projection, dim, name), {0, 2, 1, 3});
    };
    Output q = project(query, 0, key_dim_, "query");
    q = ops::Mul(s, q, ops::ScalarLike(s, q.dtype(), 1.0 / std::sqrt(static_cast<double>(key_dim_))));
    const Output k = project(key, 1, key_dim_, "key");
    const Output v = project(value, 2, o_.value_dim, "value");
    Output scores = ops::BatchMatMul(s, q, k, false, true);  // (B, H, T, S)

    Output mask;  // 1 where attended, broadcast against (B, H, T, S)
    if (o_.use_causal_mask) {
      std::vector<double> causal(static_cast<size_t>(t * steps));
      for (int64_t i = 0; i < t; ++i) {
        for (int64_t j = 0; j < steps; ++j) causal[i * steps + j] = j <= i ? 1.0 : 0.0;
      }
      mask = ops::Cast(s, ops::Const(s, causal, TensorShape({t, steps})), scores.dtype());
    }
    if (in.size() == 4) {
      const Output m = in[3];
      WEFT_REQUIRE(m.shape().rank() == 3 && m.shape().dim(1) == t && m.shape().dim(2) == steps,
                   "{}: attention_mask must be (batch, {}, {}) for query steps {} and key steps {}, got {}", Describe(),
                   t, steps, t, steps, m.shape().ToString());
      Output keep = ops::Cast(s, ops::Greater(s, m, ops::ScalarLike(s, m.dtype(), 0.5)), scores.dtype());
      keep = ops::ExpandDims(s, keep, 1);  // (B, 1, T, S): the same mask for every head
      mask = !mask.valid() ? keep : ops::Mul(s, mask, keep);
    }
    Output p;
    if (!mask.valid()) {
      p = ops::Softmax(s, scores);
    } else {
      // scores where kept, -1e9 elsewhere (exactly: s * 1 + 0 or s * 0 - 1e9), then zeros there.
      const Output masked = ops::Add(s, ops::Mul(s, scores, mask),
                                     ops::Mul(s, ops::Sub(s, mask, ops::ScalarLike(s, mask.dtype(), 1.0)),
                                              ops::ScalarLike(s, mask.dtype(), 1e9)));
      p = ops::Softmax(s, masked);
      // Keras zeroes the masked weights only on its explicit-softmax path (dropout > 0); its fused
      // path (dropout 0) leaves a fully masked row uniform. Both differ only on such rows.
      if (o_.dropout > 0) p = ops::Mul(s, p, mask);
    }
    const Output weights = p;  // Keras returns them before the dropout
    if (ctx.training && o_.dropout > 0) p = ops::Dropout(s, p, o_.dropout, o_.seed);
    const Output y = output_projection(ops::Transpose(s, ops::BatchMatMul(s, p, v), {0, 2, 1, 3}));  // (B, T, H, V)
    if (o_.return_attention_scores) return {y, weights};
    return {y};
  }

 protected:
  int num_inputs() const override { return -1; }

 private:
  int64_t heads_, key_dim_;
  MultiHeadAttentionOptions o_;
};

}  // namespace

LayerPtr MultiHeadAttention(int64_t num_heads, int64_t key_dim, MultiHeadAttentionOptions options) {
  return std::make_shared<MultiHeadAttentionLayer>(num_heads, key_dim, std::move(options));
}

void SetUseCausalMask(Layer& layer, bool use_causal_mask) {
  auto* mha = dynamic_cast<MultiHeadAttentionLayer*>(&layer);
  WEFT_REQUIRE(mha != nullptr, "use_causal_mask: {} '{}' is not a MultiHeadAttention layer", layer.type(),
               layer.name());
  mha->set_use_causal_mask(use_causal_mask);
}

void SetReturnAttentionScores(Layer& layer, bool return_attention_scores) {
  auto* mha = dynamic_cast<MultiHeadAttentionLayer*>(&layer);
  WEFT_REQUIRE(mha != nullptr, "return_attention_scores: {} '{}' is not a MultiHeadAttention layer", layer.type(),
               layer.name());
  mha->set_return_attention_scores(return_attention_scores);
}

}  // namespace weft::train
