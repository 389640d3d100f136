// The sequence layers (train/layers_embedding.cc, layers_attention.cc): output shapes and parameter counts as Keras
// reports them, forward values (closed forms; TensorFlow 2.21 for attention, tests/train/golden/attention_tf.json
// made by make_attention_tf.py beside it), gradients by finite differences, and bad ids (run under ASan: this
// suite is in build.sh's ASAN_SUITES, so an out-of-range id must be refused before any read).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "tests/ops/op_test_util.h"
#include "tests/train/layer_test_util.h"
#include "train/layer.h"

using namespace weft;
using namespace weft::train;
using namespace weft::test::layers;
using weft::test::ExpectNear;
using weft::test::Rand;
using weft::test::T;

TEST_CASE("Embedding: Keras' shapes, rows of the table, its gradient and bad ids") {
  // Keras' Embedding docstring: Embedding(1000, 64) on (32, 10) ids gives (32, 10, 64).
  LayerPtr e = Embedding(1000, 64);
  CHECK(ShapeOf(e(Input({10}))) == "[?,10,64]");
  CHECK(e->CountParams(true) == 64000);
  CHECK(e->weights()[0].name == "embeddings");

  const Tensor table = T<float>({0, 1, 10, 11, 20, 21, 30, 31, 40, 41}, {5, 2});
  ExpectNear(Apply(Embedding(5, 2), {T<float>({4, 0, 2, 2}, {2, 2})}, {table}),
             T<float>({40, 41, 0, 1, 20, 21, 20, 21}, {2, 2, 2}));
  ExpectNear(Apply(Embedding(5, 2), {T<int64_t>({3}, {1, 1})}, {table}), T<float>({30, 31}, {1, 1, 2}));

  // d sum(r * E[ids]) / dE = r's rows added at their ids (repeated ids accumulate, unused rows 0).
  LayerPtr layer = Embedding(4, 2);
  layer(Input({3}));
  Graph g;
  Scope s = Scope::Root(&g);
  Output w = ops::Placeholder(s, DType::kFloat32, TensorShape({4, 2}));
  CallContext ctx{s.NewSubScope("e"), true, {w}, nullptr};
  Output y = layer->Call(ctx, {ops::Const(s, T<float>({1, 3, 1}, {1, 3}))});
  Output loss = ops::Sum(s, ops::Mul(s, y, ops::Const(s, T<float>({1, 2, 3, 4, 5, 6}, {1, 3, 2}))));
  Session sess(&g);
  const Tensor dw = sess.Run({{w, Rand({4, 2}, -1, 1, 3, DType::kFloat32)}}, Gradients(s, {loss}, {w}))[0];
  ExpectNear(dw, T<float>({0, 0, 6, 8, 0, 0, 3, 4}, {4, 2}));

  // Ids outside [0, input_dim) are InvalidArgument naming the position, the id and the range.
  CHECK(ErrorOf([&] { Apply(Embedding(5, 2), {T<float>({1, 5}, {1, 2})}, {table}); })
            .find("indices[1] = 5 is out of range [0, 5)") != std::string::npos);
  CHECK(ErrorOf([&] { Apply(Embedding(5, 2), {T<float>({-1}, {1, 1})}, {table}); })
            .find("indices[0] = -1 is out of range [0, 5)") != std::string::npos);
  CHECK(ErrorOf([&] { Apply(Embedding(5, 2), {T<float>({1e9}, {1, 1})}, {table}); })
            .find("is out of range [0, 5)") != std::string::npos);
  CHECK(ErrorOf([] { Embedding(0, 4); }).find("input_dim and output_dim must be positive") != std::string::npos);
}

namespace {

// The golden list `key` of attention_tf.json as a float32 tensor of shape dims.
Tensor Golden(const std::string& json, const std::string& key, std::vector<int64_t> dims) {
  const auto lists = Lists(json, key);
  REQUIRE(lists.size() == 1);
  std::vector<float> v(lists[0].begin(), lists[0].end());
  return Tensor::FromVector<float>(v, TensorShape(dims));
}

std::vector<Tensor> GoldenWeights(const std::string& json, const std::string& prefix, const LayerPtr& layer) {
  std::vector<Tensor> w;
  for (size_t i = 0; i < layer->weights().size(); ++i) {
    w.push_back(Golden(json, prefix + "_w" + std::to_string(i), layer->weights()[i].shape.dims()));
  }
  return w;
}

// Every float of `t` as float64 (for the finite-difference checks).
Tensor F64(const Tensor& t) {
  Tensor out(DType::kFloat64, t.shape());
  for (int64_t i = 0; i < t.num_elements(); ++i) out.data<double>()[i] = t.data<float>()[i];
  return out;
}

}  // namespace

TEST_CASE("MultiHeadAttention matches TensorFlow's Keras, masks and all") {
  const std::string json = ReadGolden("attention_tf.json");
  // Cross-attention with value_dim, output_shape and an attention_mask (one query row sees nothing).
  LayerPtr cross = MultiHeadAttention(2, 3, {.value_dim = 2, .output_dim = 4});
  const Tensor q = Golden(json, "cross_query", {2, 4, 5}), v = Golden(json, "cross_value", {2, 3, 5});
  const Tensor mask = Golden(json, "cross_attention_mask", {2, 4, 3});
  CHECK(ShapeOf(cross({Input({4, 5}), Input({3, 5}), Input({3, 5}), Input({4, 3})})) == "[?,4,4]");
  CHECK(cross->weights()[0].name == "query/kernel");
  CHECK(cross->weights()[0].shape == TensorShape({5, 2, 3}));
  CHECK(cross->weights()[6].shape == TensorShape({2, 2, 4}));
  CHECK(cross->CountParams(true) == 5 * 6 + 6 + 5 * 6 + 6 + 5 * 4 + 4 + 2 * 2 * 4 + 4);  // Keras' count: 116
  ExpectNear(Apply(cross, {q, v, v, mask}, GoldenWeights(json, "cross", cross)), Golden(json, "cross_output", {2, 4, 4}),
             1e-5, 1e-4);

  // Causal self-attention.
  LayerPtr causal = MultiHeadAttention(2, 4, {.use_causal_mask = true});
  const Tensor x = Golden(json, "causal_query", {2, 5, 6});
  causal({Input({5, 6}), Input({5, 6})});
  ExpectNear(Apply(causal, {x, x}, GoldenWeights(json, "causal", causal)), Golden(json, "causal_output", {2, 5, 6}),
             1e-5, 1e-4);

  // Gradients through the projections, the masked softmax and the output kernel (float64).
  std::vector<Tensor> w64;
  for (const Tensor& w : GoldenWeights(json, "causal", causal)) w64.push_back(F64(w));
  CheckLayerGradientN(causal, {F64(x), F64(x)}, w64);

  // Dropout on the attention weights: identity outside training, a different output in training.
  LayerPtr dropped = MultiHeadAttention(2, 4, {.dropout = 0.5, .use_causal_mask = true, .seed = 3});
  dropped({Input({5, 6}), Input({5, 6})});
  const std::vector<Tensor> cw = GoldenWeights(json, "causal", dropped);
  ExpectNear(Apply(dropped, {x, x}, cw), Golden(json, "causal_output", {2, 5, 6}), 1e-5, 1e-4);
  const Tensor trained = Apply(dropped, {x, x}, cw, /*training=*/true);
  double diff = 0;
  for (int64_t i = 0; i < trained.num_elements(); ++i) {
    diff += std::abs(trained.data<float>()[i] - Golden(json, "causal_output", {2, 5, 6}).data<float>()[i]);
  }
  CHECK(diff > 1e-3);

  CHECK(ErrorOf([] { MultiHeadAttention(0, 4); }).find("num_heads and key_dim must be positive") != std::string::npos);
  CHECK(ErrorOf([] { MultiHeadAttention(2, 4)({Input({5, 6})}); }).find("two or more") != std::string::npos);
  CHECK(ErrorOf([] { MultiHeadAttention(2, 4)({Input({6}), Input({6})}); }).find("(batch, steps, features)") !=
        std::string::npos);
  CHECK(ErrorOf([] { MultiHeadAttention(2, 4)({Input({5, 6}), Input({3, 6}), Input({3, 6}), Input({5, 4})}); })
            .find("attention_mask must be (batch, 5, 3)") != std::string::npos);
  CHECK(ErrorOf([] { MultiHeadAttention(2, 4)({Input({5, 6}), Input({3, 6}), Input({4, 6})}); })
            .find("key has 4 steps and value 3") != std::string::npos);
  LayerPtr fixed = MultiHeadAttention(2, 4);
  fixed({Input({5, 6}), Input({5, 6})});
  CHECK(ErrorOf([&] { SetUseCausalMask(*fixed, true); }).find("differs from its first call's") != std::string::npos);
  CHECK(ErrorOf([] { SetUseCausalMask(*Dense(3), true); }).find("is not a MultiHeadAttention layer") !=
        std::string::npos);
}

// Which path a causal MultiHeadAttention call takes: FusedCausalAttention unless the call has an
// attention_mask, active dropout or returns the scores; the composed path (here: the one that
// returns the scores) gives the fused path's output.
TEST_CASE("MultiHeadAttention: causal calls run FusedCausalAttention where nothing else touches the weights") {
  const Tensor x = Rand({2, 7, 6}, -1, 1, 9, DType::kFloat32);
  auto call = [&](LayerPtr layer, bool training, bool with_mask, std::vector<Output>* outs) {
    std::vector<Sym> syms = {Input({7, 6}), Input({7, 6})};
    if (with_mask) syms.push_back(Input({7, 6})), syms.push_back(Input({7, 7}));
    layer->Outputs(syms);  // builds the layer, as a model does
    auto g = std::make_unique<Graph>();
    Scope s = Scope::Root(g.get());
    CallContext ctx{s.NewSubScope("layer"), training, {}, nullptr};
    for (const Weight& w : layer->weights()) ctx.weights.push_back(ops::Const(s, Rand(w.shape.dims(), -0.5, 0.5, 4, DType::kFloat32)));
    std::vector<Output> in = {ops::Const(s, x), ops::Const(s, x)};
    if (with_mask) in.push_back(ops::Const(s, x)), in.push_back(ops::Const(s, Tensor::Zeros(DType::kFloat32, {2, 7, 7})));
    *outs = layer->CallOutputs(ctx, in);
    return g;
  };
  auto fused = [](const Graph& g) {
    for (Node* n : g.nodes()) {
      if (n->op() == "FusedCausalAttention") return true;
    }
    return false;
  };
  std::vector<Output> out_fused, out_composed, unused;
  auto g1 = call(MultiHeadAttention(2, 4, {.use_causal_mask = true}), true, false, &out_fused);
  CHECK(fused(*g1));
  LayerPtr scores = MultiHeadAttention(2, 4, {.use_causal_mask = true});
  SetReturnAttentionScores(*scores, true);
  auto g2 = call(scores, false, false, &out_composed);
  CHECK_FALSE(fused(*g2));
  CHECK_FALSE(fused(*call(MultiHeadAttention(2, 4, {.dropout = 0.1, .use_causal_mask = true}), true, false, &unused)));
  CHECK(fused(*call(MultiHeadAttention(2, 4, {.dropout = 0.1, .use_causal_mask = true}), false, false, &unused)));
  CHECK_FALSE(fused(*call(MultiHeadAttention(2, 4, {.use_causal_mask = true}), false, true, &unused)));
  CHECK_FALSE(fused(*call(MultiHeadAttention(2, 4), false, false, &unused)));
  Session s1(g1.get()), s2(g2.get());
  ExpectNear(s1.Run({}, {out_fused[0]})[0], s2.Run({}, {out_composed[0]})[0], 1e-5, 1e-4);
}
