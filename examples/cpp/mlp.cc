// A small multilayer perceptron (2-16-16-2, ReLU) trained with momentum on the two-spirals
// problem, printing loss and accuracy as it goes.
//
//   ninja -C build examples/cpp/mlp && ./build/examples/cpp/mlp
//
// Shows: name scopes per layer, variables with their initializers, a softmax cross-entropy
// loss, Gradients over every parameter, one ApplyMomentum per parameter (each with its own
// accumulator variable) grouped into a single train op, and evaluation in the same Session.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "ops/optimizer.h"
#include "ops/random.h"
#include "ops/state.h"

using namespace weft;

namespace {

// Two interleaved spirals (classes 0 and 1), 1.75 turns each, with a little noise.
void MakeSpirals(int64_t n, Tensor* points, Tensor* labels) {
  std::mt19937 gen(1);
  std::normal_distribution<float> noise(0.0f, 0.03f);
  std::vector<float> xy;
  std::vector<int32_t> cls;
  for (int64_t i = 0; i < n; ++i) {
    int c = static_cast<int>(i % 2);
    float t = 0.1f + 0.9f * static_cast<float>(i / 2) / static_cast<float>(n / 2);  // radius
    float angle = 3.5f * static_cast<float>(M_PI) * t + static_cast<float>(M_PI) * c;
    xy.push_back(t * std::cos(angle) + noise(gen));
    xy.push_back(t * std::sin(angle) + noise(gen));
    cls.push_back(c);
  }
  *points = Tensor::FromVector(xy, {n, 2});
  *labels = Tensor::FromVector(cls, {n});
}

// What the model-building helpers collect: trainable variables and their initializers.
struct Params {
  std::vector<Output> vars;
  std::vector<Output> inits;

  Output Add(const Scope& s, const std::string& name, TensorShape shape, Output initial_value) {
    Output v = ops::Variable(s.WithOpName(name), std::move(shape), DType::kFloat32);
    vars.push_back(v);
    inits.push_back(ops::Assign(s.WithOpName(name + "/init"), v, initial_value));
    return v;
  }
};

// y = x @ W + b, with W ~ N(0, 2 / fan_in) (He initialization) and b = 0; ReLU unless `linear`.
Output Dense(const Scope& scope, Output x, int64_t in, int64_t out, Params* p, bool linear = false) {
  Output w = p->Add(scope, "W", {in, out},
                    ops::RandomNormal(scope, {in, out}, DType::kFloat32, 0.0, std::sqrt(2.0 / in)));
  Output b = p->Add(scope, "b", {out}, ops::Const(scope, Tensor::Zeros(DType::kFloat32, {out})));
  Output y = ops::BiasAdd(scope, ops::MatMul(scope, x, w), b);
  return linear ? y : ops::Relu(scope, y);
}

}  // namespace

// Every weft call reports problems by throwing weft::Error (code + a message naming the node).
static int Run();

int main() {
  try {
    return Run();
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

static int Run() {
  Tensor points, labels;
  MakeSpirals(400, &points, &labels);

  Graph g;
  g.set_seed(3);  // reproducible initial weights
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 2});
  Output y = ops::Placeholder(s.WithOpName("y"), DType::kInt32, {-1});

  // The model: nodes are named "layer1/W", "layer1/MatMul", ...
  Params p;
  Output h = Dense(s.NewSubScope("layer1"), x, 2, 16, &p);
  h = Dense(s.NewSubScope("layer2"), h, 16, 16, &p);
  Output logits = Dense(s.NewSubScope("out"), h, 16, 2, &p, /*linear=*/true);

  // Loss: mean cross-entropy (output 0 of the op is the per-example loss).
  Output loss = ops::Mean(s.WithOpName("loss"), ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, y)[0]);
  Output accuracy = ops::Mean(
      s.WithOpName("accuracy"),
      ops::Cast(s, ops::Equal(s, ops::ArgMax(s, logits, 1, DType::kInt32), y), DType::kFloat32));

  // Training: momentum SGD, one accumulator (initialized to zeros) per parameter.
  std::vector<Output> grads = Gradients(s, {loss}, p.vars);
  Scope opt = s.NewSubScope("momentum");
  Output lr = ops::ScalarLike(opt, DType::kFloat32, 0.1);
  Output momentum = ops::ScalarLike(opt, DType::kFloat32, 0.9);
  std::vector<Output> updates;
  for (size_t i = 0; i < p.vars.size(); ++i) {
    const std::string name = p.vars[i].node->name() + "/accum";
    Output accum = ops::Variable(opt.WithOpName(name), p.vars[i].shape(), DType::kFloat32);
    p.inits.push_back(ops::Assign(opt, accum, ops::Const(opt, Tensor::Zeros(DType::kFloat32, p.vars[i].shape()))));
    updates.push_back(ops::ApplyMomentum(opt, p.vars[i], accum, lr, grads[i], momentum));
  }
  Node* train = ops::Group(s.WithOpName("train"), updates);
  Node* init = ops::Group(s.WithOpName("init"), p.inits);

  Session sess(&g);
  sess.Run({}, {}, {init});
  const std::vector<std::pair<Output, Tensor>> feeds = {{x, points}, {y, labels}};
  for (int step = 0; step <= 1000; ++step) {
    if (step % 100 == 0) {
      std::vector<Tensor> out = sess.Run(feeds, {loss, accuracy});
      std::printf("step %4d  loss %.4f  accuracy %.3f\n", step, out[0].scalar<float>()(), out[1].scalar<float>()());
    }
    sess.Run(feeds, {}, {train});  // full-batch step
  }
  return 0;
}
