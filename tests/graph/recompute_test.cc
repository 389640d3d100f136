// Activation recomputation (graph/recompute.h): gradients through recomputed blocks equal the plain
// ones, the backward pass reads the copies only, and a step's peak memory is lower.
#include <doctest/doctest.h>

#include <cmath>

#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "tests/graph/test_ops.h"

using namespace weft;

namespace {

// A float64 MLP of `depth` tanh layers of width w over a [rows, w] input; blocks[i] holds the
// nodes (MatMul, Tanh) of layers [i * per_block, (i + 1) * per_block).
struct Mlp {
  Output x, loss;
  std::vector<Output> ws;
  std::vector<std::vector<const Node*>> blocks;
};

Mlp BuildMlp(Graph* g, int depth, int64_t w, int per_block = 1) {
  Scope s = Scope::Root(g);
  Mlp m;
  m.x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {-1, w});
  Output h = m.x;
  for (int i = 0; i < depth; ++i) {
    m.ws.push_back(ops::Placeholder(s.WithOpName("w" + std::to_string(i)), DType::kFloat64, {w, w}));
    Scope ls = s.NewSubScope("layer" + std::to_string(i));
    Output z = ops::MatMul(ls, h, m.ws.back());
    h = ops::Tanh(ls, z);
    if (i % per_block == 0) m.blocks.emplace_back();
    m.blocks.back().push_back(z.node);
    m.blocks.back().push_back(h.node);
  }
  m.loss = ops::Sum(s, ops::Square(s, h));
  return m;
}

Tensor Filled(TensorShape shape, double scale, double phase) {
  Tensor t(DType::kFloat64, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<double>()[i] = scale * std::sin(0.37 * i + phase);
  return t;
}

std::vector<std::pair<Output, Tensor>> Feeds(const Mlp& m, int64_t rows, int64_t w) {
  std::vector<std::pair<Output, Tensor>> feeds{{m.x, Filled(TensorShape({rows, w}), 1.0, 0.0)}};
  for (size_t i = 0; i < m.ws.size(); ++i) {
    feeds.push_back({m.ws[i], Filled(TensorShape({w, w}), 1.5 / std::sqrt(static_cast<double>(w)), 1.0 + i)});
  }
  return feeds;
}

// The gradients of m's loss by its weights, and the step's peak bytes on the one CPU device.
std::vector<Tensor> Run(bool recompute, int depth, int64_t rows, int64_t w, int per_block, int64_t* peak) {
  Graph g;
  Mlp m = BuildMlp(&g, depth, w, per_block);
  GradientOptions go;
  if (recompute) go.recompute = m.blocks;
  std::vector<Output> dw = Gradients(Scope::Root(&g), {m.loss}, m.ws, {}, go);
  SessionOptions o;
  o.inter_op_threads = 1;
  o.intra_op_threads = 1;
  o.device_memory_limit = int64_t{1} << 34;  // a budget, so that the allocator reports its peak
  Session sess(&g, o);
  std::vector<Tensor> out = sess.Run(Feeds(m, rows, w), dw);
  *peak = 0;
  for (const auto& [device, stats] : sess.DeviceMemory()) *peak = std::max(*peak, stats.peak_bytes_in_use);
  return out;
}

}  // namespace

TEST_CASE("recompute: equal gradients (float64 MLP); the backward pass reads only recomputed copies") {
  int64_t peak_plain = 0, peak_recomputed = 0;
  const std::vector<Tensor> plain = Run(false, 3, 5, 7, 3, &peak_plain);
  const std::vector<Tensor> recomputed = Run(true, 3, 5, 7, 3, &peak_recomputed);
  REQUIRE(plain.size() == recomputed.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    for (int64_t j = 0; j < plain[i].num_elements(); ++j) {
      CHECK(std::fabs(plain[i].data<double>()[j] - recomputed[i].data<double>()[j]) <= 1e-6);
    }
  }
  // The rewrite, all three layers one block: no gradient node reads a forward Tanh output but the
  // last (the block's output, which the loss reads); the gradients read recomputed copies, whose
  // root waits for the gradient that reaches the block.
  Graph g;
  Mlp m = BuildMlp(&g, 3, 7, 3);
  GradientOptions go;
  go.recompute = m.blocks;
  Gradients(Scope::Root(&g), {m.loss}, m.ws, {}, go);
  const std::vector<const Node*>& block = m.blocks[0];
  for (size_t i = 0; i + 1 < block.size(); ++i) {
    for (const auto& [dst, in] : block[i]->out_edges()) {
      CHECK_MESSAGE(dst->name().rfind("gradients/", 0) != 0, dst->name(), " reads ", block[i]->name());
    }
  }
  Node* root = g.FindNode("gradients/recompute/layer0/MatMul");
  REQUIRE(root != nullptr);
  CHECK(!root->control_inputs().empty());
  Node* tanh = g.FindNode("gradients/recompute/layer1/Tanh");
  REQUIRE(tanh != nullptr);
  CHECK(tanh->control_inputs().empty());  // gated through its inputs
}

TEST_CASE("recompute: a deep MLP's step peaks lower with blocks of four layers recomputed") {
  int64_t peak_plain = 0, peak_recomputed = 0;
  // 8 layers of [2048, 128] float64 activations (2 MiB each; the weights and their gradients, all
  // live at the end of the step, are 128 KiB each). The backward pass of a tanh MLP
  // reads each layer's Tanh output (Tanh's and the next MatMul's gradients), not its MatMul output:
  // blocks of four keep only their last Tanh output through the forward pass, and remake the
  // other three when the backward pass reaches them (checkpointing, as tf.recompute_grad).
  const std::vector<Tensor> plain = Run(false, 8, 2048, 128, 4, &peak_plain);
  const std::vector<Tensor> recomputed = Run(true, 8, 2048, 128, 4, &peak_recomputed);
  for (size_t i = 0; i < plain.size(); ++i) {
    for (int64_t j = 0; j < plain[i].num_elements(); ++j) {
      REQUIRE(std::fabs(plain[i].data<double>()[j] - recomputed[i].data<double>()[j]) <= 1e-6);
    }
  }
  MESSAGE("peak bytes: plain ", peak_plain, ", recomputed ", peak_recomputed);
  CHECK(peak_plain > 0);
  // Of the six inner Tanh outputs, the first block's three are dead while the second block's are
  // remade: at least three activations less at the peak.
  CHECK(peak_recomputed + 3 * 2048 * 128 * 8 <= peak_plain);
}

TEST_CASE("recompute: a node in two blocks is an error naming it") {
  Graph g;
  Mlp m = BuildMlp(&g, 2, 3);
  GradientOptions go;
  go.recompute = {m.blocks[0], {m.blocks[0][1], m.blocks[1][0]}};
  try {
    Gradients(Scope::Root(&g), {m.loss}, m.ws, {}, go);
    FAIL("expected InvalidArgument");
  } catch (const Error& e) {
    CHECK(e.status().code() == Code::kInvalidArgument);
    CHECK(std::string(e.what()).find("Tanh 'layer0/Tanh' is in blocks 0 and 1") != std::string::npos);
  }
}
