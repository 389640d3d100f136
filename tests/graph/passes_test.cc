#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "graph/gradients.h"
#include "graph/passes.h"
#include "graph/session.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "ops/random.h"
#include "tests/graph/test_ops.h"

using namespace weft;

namespace {
int CountOp(const Graph& g, std::string_view op) {
  int n = 0;
  for (Node* node : g.nodes()) n += node->op() == op;
  return n;
}
}  // namespace

TEST_CASE("prune keeps only what the fetches need and swaps feeds for _Arg") {
  test::RegisterTestOps();
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {});
  Output y = ops::Identity(s, x);
  s.Op("TestFail", {x});  // not needed: never runs
  auto step = PruneForStep(g, {x}, {y}, {});
  CHECK(CountOp(*step, "_Arg") == 1);
  CHECK(CountOp(*step, "_Retval") == 1);
  CHECK(CountOp(*step, "Placeholder") == 0);
  CHECK(CountOp(*step, "TestFail") == 0);
  Session sess(&g);
  CHECK(sess.Run({{x, Tensor::Scalar(2.0f)}}, {y})[0].scalar<float>()() == 2.0f);
}

TEST_CASE("constant folding evaluates constant subgraphs and static shapes") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output a = ops::Add(s, ops::Const(s, 2.0), ops::Const(s, 3.0));
  Output x = ops::Placeholder(s, DType::kFloat64, {4, 5});
  Output shape = ops::Shape(s, x);
  auto step = PruneForStep(g, {x}, {a, shape}, {});
  ThreadPool pool(1);
  CHECK(FoldConstants(step.get(), &pool) == 2);
  CHECK(CountOp(*step, "Add") == 0);
  CHECK(CountOp(*step, "Shape") == 0);
  Session sess(&g);
  auto out = sess.Run({{x, Tensor::Zeros(DType::kFloat64, {4, 5})}}, {a, shape});
  CHECK(out[0].scalar<double>()() == 5.0);
  CHECK(out[1].ToVector<int32_t>() == std::vector<int32_t>{4, 5});
}

TEST_CASE("constant folding of a node that uses one constant twice (x * x) removes that constant once") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output c = ops::Const(s, 3.0);
  Output sq = ops::Greater(s, ops::Mul(s, c, c), ops::Const(s, 1.0));
  auto step = PruneForStep(g, {}, {sq}, {});
  ThreadPool pool(1);
  CHECK(FoldConstants(step.get(), &pool) == 2);
  CHECK(CountOp(*step, "Mul") == 0);
  Session sess(&g);
  CHECK(sess.Run({}, {sq})[0].scalar<bool>()() == true);
}

TEST_CASE("folding leaves failing constant expressions for run time, where they name the node") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output d = ops::Div(s.WithOpName("div"), ops::Const(s, int32_t{1}), ops::Const(s, int32_t{0}));
  auto step = PruneForStep(g, {}, {d}, {});
  ThreadPool pool(1);
  CHECK(FoldConstants(step.get(), &pool) == 0);
  Session sess(&g);
  CHECK_THROWS_WITH_AS(sess.Run({}, {d}), doctest::Contains("'div'"), Error);
}

TEST_CASE("CSE merges identical pure nodes, never stateful ones") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat32, {3});
  Output a = ops::Mul(s, x, x);
  Output b = ops::Mul(s, x, x);
  Output r1 = ops::RandomUniform(s, {3}, DType::kFloat32, 0.0, 1.0, 7);
  Output r2 = ops::RandomUniform(s, {3}, DType::kFloat32, 0.0, 1.0, 7);
  auto step = PruneForStep(g, {x}, {ops::Add(s, a, b), r1, r2}, {});
  CHECK(CountOp(*step, "Mul") == 2);
  CHECK(EliminateCommonSubexpressions(step.get()) == 1);
  CHECK(CountOp(*step, "Mul") == 1);
  CHECK(CountOp(*step, "RandomUniform") == 2);
}

namespace {
// A conv layer (Conv2D + BiasAdd + Relu), a 2x2 max pool and a sum, with gradients for the
// filter and the bias; the session options decide whether FuseNnOps runs.
struct ConvNet {
  Graph g;
  Output x, f, b, conv, biased, relu, loss;
  std::vector<Output> grads;
  // pool_strides {2, 2}: the pool fuses with the conv too; {1, 1} (overlapping windows): it does not.
  explicit ConvNet(std::vector<int64_t> pool_strides = {2, 2}) {
    Scope s = Scope::Root(&g);
    x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 6, 6, 1});
    Tensor fv(DType::kFloat32, {3, 3, 1, 4});
    for (int64_t i = 0; i < fv.num_elements(); ++i) {
      fv.data<float>()[i] = 0.1f * static_cast<float>((i * 7) % 11) - 0.5f;
    }
    f = ops::Const(s, fv);
    b = ops::Const(s, Tensor::FromVector<float>({0.1f, -0.2f, 0.0f, 0.3f}, {4}));
    conv = ops::Conv2D(s, x, f, {1, 1}, "VALID");
    biased = ops::BiasAdd(s, conv, b);
    relu = ops::Relu(s, biased);
    loss = ops::Sum(s, ops::Mul(s, ops::MaxPool(s, relu, {2, 2}, pool_strides, "VALID"), ops::Const(s, 1.5f)));
    grads = Gradients(s, {loss}, {f, b});
  }
  Tensor Input() const {
    Tensor t(DType::kFloat32, {2, 6, 6, 1});
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      t.data<float>()[i] = 0.05f * static_cast<float>((i * 13) % 23) - 0.4f;
    }
    return t;
  }
};
}  // namespace

static void CheckFusedMatchesPlain(ConvNet& net) {
  SessionOptions off;
  off.fuse_ops = false;
  Session fused(&net.g), plain(&net.g, off);
  const std::vector<std::pair<Output, Tensor>> feeds = {{net.x, net.Input()}};
  auto a = fused.Run(feeds, {net.loss, net.grads[0], net.grads[1]});
  auto b = plain.Run(feeds, {net.loss, net.grads[0], net.grads[1]});
  for (int i = 0; i < 3; ++i) {
    REQUIRE(a[i].shape() == b[i].shape());
    for (int64_t j = 0; j < a[i].num_elements(); ++j) {
      CHECK(a[i].data<float>()[j] == doctest::Approx(b[i].data<float>()[j]));
    }
  }
  double norm = 0;
  for (int64_t j = 0; j < a[1].num_elements(); ++j) norm += std::abs(a[1].data<float>()[j]);
  CHECK(norm > 0);
}

TEST_CASE("FuseNnOps fuses conv + bias + relu and max-pool grad + relu grad, with the same results") {
  ConvNet net({1, 1});  // overlapping pool windows: the pool stays separate
  auto step = PruneForStep(net.g, {net.x}, {net.loss, net.grads[0], net.grads[1]}, {});
  CHECK(CountOp(*step, "Conv2D") == 1);
  CHECK(FuseNnOps(step.get()) == 2);
  CHECK(CountOp(*step, "_FusedConv2D") == 1);
  CHECK(CountOp(*step, "_MaxPoolGradRelu") == 1);
  // 4 output channels: the filter and bias gradients stay two nodes (fewer than 32 channels).
  CHECK(CountOp(*step, "_Conv2DBackpropFilterBias") == 0);
  for (const char* gone : {"Conv2D", "BiasAdd", "Relu", "MaxPoolGrad", "ReluGrad"}) CHECK(CountOp(*step, gone) == 0);
  for (Node* n : step->nodes()) {
    if (n->op() == "_FusedConv2D") CHECK(n->attr<std::string>("activation") == "Relu");
  }
  CheckFusedMatchesPlain(net);
}

TEST_CASE("FuseNnOps folds a non-overlapping max pool and its grad into the conv, with the same results") {
  ConvNet net;
  auto step = PruneForStep(net.g, {net.x}, {net.loss, net.grads[0], net.grads[1]}, {});
  CHECK(FuseNnOps(step.get()) == 4);
  CHECK(CountOp(*step, "_FusedConv2DMaxPool") == 1);
  CHECK(CountOp(*step, "_ConvPoolBackpropFilterBias") == 1);
  for (const char* gone : {"Conv2D", "_FusedConv2D", "MaxPool", "MaxPoolGrad", "_MaxPoolGradRelu", "ReluGrad",
                           "_MaxPoolGradWithArgmax", "Conv2DBackpropFilter", "BiasAddGrad"}) {
    CHECK(CountOp(*step, gone) == 0);
  }
  CheckFusedMatchesPlain(net);
  // The gradient of x is needed too: the pool's gradient stays, for Conv2DBackpropInput to read.
  Scope s = Scope::Root(&net.g);
  const std::vector<Output> all = Gradients(s, {net.loss}, {net.f, net.b, net.x});
  auto step3 = PruneForStep(net.g, {net.x}, all, {});
  FuseNnOps(step3.get());
  CHECK(CountOp(*step3, "_MaxPoolGradWithArgmax") == 1);
  CHECK(CountOp(*step3, "_ConvPoolBackpropFilterBias") == 0);
  // The Relu's output is fetched: the pool cannot take the conv output over.
  auto step2 = PruneForStep(net.g, {net.x}, {net.loss, net.relu}, {});
  FuseNnOps(step2.get());
  CHECK(CountOp(*step2, "_FusedConv2D") == 1);
  CHECK(CountOp(*step2, "_FusedConv2DMaxPool") == 0);
}

TEST_CASE("FuseNnOps fuses the filter and bias gradients of one dz (32+ channels in 16-blocks), with the same results") {
  for (int64_t O : {32, 48, 20}) {
    INFO(O << " output channels");
    Graph g;
    Scope s = Scope::Root(&g);
    Output x = ops::Placeholder(s, DType::kFloat32, {-1, 5, 6, 3});
    Tensor fv(DType::kFloat32, {3, 3, 3, O}), bv(DType::kFloat32, {O});
    for (int64_t i = 0; i < fv.num_elements(); ++i) fv.data<float>()[i] = 0.05f * static_cast<float>((i * 7) % 13) - 0.3f;
    for (int64_t i = 0; i < O; ++i) bv.data<float>()[i] = 0.01f * static_cast<float>(i % 5) - 0.02f;
    Output f = ops::Const(s, fv), b = ops::Const(s, bv);
    Output y = ops::Relu(s, ops::BiasAdd(s, ops::Conv2D(s, x, f, {1, 1}, "SAME"), b));
    Output loss = ops::Sum(s, ops::Mul(s, y, y));
    const std::vector<Output> grads = Gradients(s, {loss}, {f, b, x});
    auto step = PruneForStep(g, {x}, {loss, grads[0], grads[1], grads[2]}, {});
    FuseNnOps(step.get());
    const bool fuses = O % 16 == 0;
    CHECK(CountOp(*step, "_Conv2DBackpropFilterBias") == (fuses ? 1 : 0));
    CHECK(CountOp(*step, "BiasAddGrad") == (fuses ? 0 : 1));
    CHECK(CountOp(*step, "Conv2DBackpropInput") == 1);  // dz's third reader stays
    Tensor xv(DType::kFloat32, {2, 5, 6, 3});
    for (int64_t i = 0; i < xv.num_elements(); ++i) xv.data<float>()[i] = 0.04f * static_cast<float>((i * 11) % 17) - 0.3f;
    SessionOptions off;
    off.fuse_ops = false;
    Session fused(&g), plain(&g, off);
    auto a = fused.Run({{x, xv}}, {loss, grads[0], grads[1], grads[2]});
    auto want = plain.Run({{x, xv}}, {loss, grads[0], grads[1], grads[2]});
    for (int i = 0; i < 4; ++i) {
      REQUIRE(a[i].shape() == want[i].shape());
      for (int64_t j = 0; j < a[i].num_elements(); ++j) {
        CHECK(a[i].data<float>()[j] == doctest::Approx(want[i].data<float>()[j]).epsilon(1e-4));
      }
    }
    double norm = 0;
    for (int64_t j = 0; j < O; ++j) norm += std::abs(a[2].data<float>()[j]);
    CHECK(norm > 0);  // the bias gradient is not trivially zero
  }
}

TEST_CASE("FuseNnOps leaves intermediates that something else reads") {
  ConvNet net;
  // BiasAdd's output is fetched: only Conv2D + BiasAdd fuse (no activation), the Relu stays.
  auto step = PruneForStep(net.g, {net.x}, {net.loss, net.biased}, {});
  CHECK(FuseNnOps(step.get()) == 1);
  CHECK(CountOp(*step, "Relu") == 1);
  for (Node* n : step->nodes()) {
    if (n->op() == "_FusedConv2D") CHECK(n->attr<std::string>("activation") == "None");
  }
  // Conv2D's output is fetched: nothing fuses.
  auto step2 = PruneForStep(net.g, {net.x}, {net.loss, net.conv}, {});
  CHECK(FuseNnOps(step2.get()) == 0);
  CHECK(CountOp(*step2, "Conv2D") == 1);
  Session sess(&net.g);
  auto out = sess.Run({{net.x, net.Input()}}, {net.biased, net.relu});
  for (int64_t j = 0; j < out[0].num_elements(); ++j) {
    CHECK(out[1].data<float>()[j] == std::max(out[0].data<float>()[j], 0.0f));
  }
}

TEST_CASE("FuseNnOps keeps the pool separate where the conv-pool kernel does not apply") {
  // A pointwise (1x1, stride 1) conv under SAME padding, and a conv of 5 input channels.
  for (const std::vector<int64_t>& fdims : {std::vector<int64_t>{1, 1, 2, 3}, std::vector<int64_t>{2, 2, 5, 3}}) {
    Graph g;
    Scope s = Scope::Root(&g);
    Output x = ops::Placeholder(s, DType::kFloat32, {-1, 4, 4, fdims[2]});
    Output f = ops::Const(s, Tensor::Zeros(DType::kFloat32, TensorShape(fdims)));
    Output b = ops::Const(s, Tensor::FromVector<float>({1, -1, 2}, {3}));
    Output y = ops::MaxPool(s, ops::Relu(s, ops::BiasAdd(s, ops::Conv2D(s, x, f, {1, 1}, "SAME"), b)), {2, 2}, {2, 2});
    auto step = PruneForStep(g, {x}, {y}, {});
    CHECK(FuseNnOps(step.get()) == 1);
    CHECK(CountOp(*step, "_FusedConv2D") == 1);
    CHECK(CountOp(*step, "MaxPool") == 1);
    Session sess(&g);
    Tensor out = sess.Run({{x, Tensor::Zeros(DType::kFloat32, {1, 4, 4, fdims[2]})}}, {y})[0];
    REQUIRE(out.shape() == TensorShape({1, 2, 2, 3}));
    CHECK(out.data<float>()[0] == 1.0f);
    CHECK(out.data<float>()[1] == 0.0f);
    CHECK(out.data<float>()[2] == 2.0f);
  }
}

TEST_CASE("FuseNnOps fuses batch norm + relu and their gradients, with the same results") {
  Graph g;
  Scope s = Scope::Root(&g);
  const Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 4, 4, 3});
  const Output scale = ops::Const(s, Tensor::FromVector<float>({1.2f, 0.7f, 1.0f}, {3}));
  const Output offset = ops::Const(s, Tensor::FromVector<float>({0.1f, -0.3f, 0.2f}, {3}));
  const Output zeros = ops::Const(s, Tensor::FromVector<float>({0, 0, 0}, {3}));
  const Output ones = ops::Const(s, Tensor::FromVector<float>({1, 1, 1}, {3}));
  const std::vector<Output> bn = ops::FusedBatchNorm(s, x, scale, offset, zeros, ones, 1e-3, true);
  const Output r = ops::Relu(s, bn[0]);
  // Weights that differ per element, so each gradient element is checked; the statistics are
  // fetched too (their consumers move to the fused node).
  Tensor wv(DType::kFloat32, {2, 4, 4, 3});
  for (int64_t i = 0; i < wv.num_elements(); ++i) wv.data<float>()[i] = 0.01f * static_cast<float>((i * 7) % 13) - 0.05f;
  const Output loss = ops::Sum(s, ops::Mul(s, r, ops::Const(s, wv)));
  const std::vector<Output> grads = Gradients(s, {loss}, {x, scale, offset});
  const std::vector<Output> fetches = {loss, grads[0], grads[1], grads[2], bn[1], bn[2]};

  auto step = PruneForStep(g, {x}, fetches, {});
  CHECK(FuseNnOps(step.get()) == 2);
  CHECK(CountOp(*step, "_FusedBatchNormRelu") == 1);
  CHECK(CountOp(*step, "_FusedBatchNormGradRelu") == 1);
  for (const char* gone : {"FusedBatchNorm", "Relu", "ReluGrad", "FusedBatchNormGrad"}) CHECK(CountOp(*step, gone) == 0);

  Tensor xv(DType::kFloat32, {2, 4, 4, 3});
  for (int64_t i = 0; i < xv.num_elements(); ++i) xv.data<float>()[i] = 0.1f * static_cast<float>((i * 11) % 17) - 0.8f;
  SessionOptions off;
  off.fuse_ops = false;
  Session fused(&g), plain(&g, off);
  auto a = fused.Run({{x, xv}}, fetches);
  auto b = plain.Run({{x, xv}}, fetches);
  for (size_t i = 0; i < fetches.size(); ++i) {
    INFO("fetch " << i);
    REQUIRE(a[i].shape() == b[i].shape());
    CHECK(std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].bytes()) == 0);  // the same arithmetic
  }
  double zero = 0;  // the Relu masks some of the gradient
  for (int64_t j = 0; j < a[1].num_elements(); ++j) zero += a[1].data<float>()[j] == 0;
  CHECK(zero < a[1].num_elements());
}

TEST_CASE("FoldBatchNormIntoConv folds inference batch norm into the conv's filter and bias") {
  // relu(batchnorm(conv(x, f))) in inference mode, SAME padding, stride 1, against the closed form
  // computed here in double: y = max((conv - mean) * scale / sqrt(var + eps) + offset, 0).
  constexpr int64_t N = 2, H = 5, W = 4, C = 3, O = 4, K = 3;
  constexpr double eps = 1e-3;
  Graph g;
  Scope s = Scope::Root(&g);
  const Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, H, W, C});
  Tensor fv(DType::kFloat32, {K, K, C, O});
  for (int64_t i = 0; i < fv.num_elements(); ++i) fv.data<float>()[i] = 0.05f * static_cast<float>((i * 5) % 11) - 0.2f;
  const std::vector<float> sc = {1.2f, 0.7f, -0.5f, 2.0f}, off = {0.1f, -0.3f, 0.2f, 0.0f},
                           mean = {0.3f, -0.1f, 0.05f, 0.4f}, var = {0.5f, 2.0f, 0.01f, 1.0f};
  const Output conv = ops::Conv2D(s, x, ops::Const(s, fv), {1, 1}, "SAME");
  const std::vector<Output> bn =
      ops::FusedBatchNorm(s, conv, ops::Const(s, Tensor::FromVector<float>(sc, {O})),
                          ops::Const(s, Tensor::FromVector<float>(off, {O})),
                          ops::Const(s, Tensor::FromVector<float>(mean, {O})),
                          ops::Const(s, Tensor::FromVector<float>(var, {O})), eps, false);
  const Output y = ops::Relu(s, bn[0]);

  auto step = PruneForStep(g, {x}, {y}, {});
  CHECK(FoldBatchNormIntoConv(step.get()) == 1);
  CHECK(CountOp(*step, "FusedBatchNorm") == 0);
  CHECK(FuseNnOps(step.get()) == 1);  // the folded bias and the Relu go into the conv
  CHECK(CountOp(*step, "_FusedConv2D") == 1);

  Tensor xv(DType::kFloat32, {N, H, W, C});
  for (int64_t i = 0; i < xv.num_elements(); ++i) xv.data<float>()[i] = 0.1f * static_cast<float>((i * 7) % 17) - 0.8f;
  Session session(&g);
  const Tensor out = session.Run({{x, xv}}, {y})[0];
  REQUIRE(out.shape() == TensorShape({N, H, W, O}));
  const float* xp = xv.data<float>();
  const float* fp = fv.data<float>();
  int64_t positive = 0;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t i = 0; i < H; ++i) {
      for (int64_t j = 0; j < W; ++j) {
        for (int64_t o = 0; o < O; ++o) {
          double acc = 0;
          for (int64_t a = 0; a < K; ++a) {
            for (int64_t b = 0; b < K; ++b) {
              const int64_t r = i + a - 1, q = j + b - 1;  // SAME, 3x3: one row and column of padding
              if (r < 0 || r >= H || q < 0 || q >= W) continue;
              for (int64_t c = 0; c < C; ++c) acc += xp[((n * H + r) * W + q) * C + c] * fp[((a * K + b) * C + c) * O + o];
            }
          }
          const double want = std::max((acc - mean[o]) * sc[o] / std::sqrt(var[o] + eps) + off[o], 0.0);
          positive += want > 0;
          CHECK(out.data<float>()[((n * H + i) * W + j) * O + o] == doctest::Approx(want).epsilon(1e-5).scale(1));
        }
      }
    }
  }
  CHECK(positive > 0);
  CHECK(positive < out.num_elements());
}

TEST_CASE("FoldBatchNormIntoConv leaves training batch norm and convs whose output something else reads") {
  Graph g;
  Scope s = Scope::Root(&g);
  const Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 4, 4, 2});
  const Output f = ops::Const(s, Tensor::FromVector<float>(std::vector<float>(2 * 2 * 2 * 3, 0.1f), {2, 2, 2, 3}));
  const Output one = ops::Const(s, Tensor::FromVector<float>({1, 1, 1}, {3}));
  const Output zero = ops::Const(s, Tensor::FromVector<float>({0, 0, 0}, {3}));
  const Output c1 = ops::Conv2D(s, x, f, {1, 1}, "SAME");
  const Output train = ops::FusedBatchNorm(s, c1, one, zero, zero, one, 1e-3, true)[0];
  const Output c2 = ops::Conv2D(s, x, f, {1, 1}, "VALID");
  const Output infer = ops::FusedBatchNorm(s, c2, one, zero, zero, one, 1e-3, false)[0];
  const Output also = ops::Relu(s, c2);  // a second reader of c2
  auto step = PruneForStep(g, {x}, {train, infer, also}, {});
  CHECK(FoldBatchNormIntoConv(step.get()) == 0);
  CHECK(CountOp(*step, "FusedBatchNorm") == 2);
}
