// Linear regression with weft's graph API: fits y = w * x + b to noisy samples of
// y = 2x - 1 by gradient descent.
//
//   ninja -C build examples/cpp/linear_regression && ./build/examples/cpp/linear_regression
//
// The pattern is TensorFlow 1's: build a graph once (placeholders for the data, variables for
// the parameters, a loss, its gradients and the update ops), then run it step by step in a
// Session.
#include <cstdio>
#include <random>
#include <vector>

#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/optimizer.h"
#include "ops/random.h"
#include "ops/state.h"

using namespace weft;

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
  // Training data, generated here with a fixed seed: x uniform in [-1, 1], y = 2x - 1 + noise.
  const int64_t n = 256;
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::normal_distribution<float> noise(0.0f, 0.1f);
  std::vector<float> xs(n), ys(n);
  for (int64_t i = 0; i < n; ++i) {
    xs[i] = uniform(gen);
    ys[i] = 2.0f * xs[i] - 1.0f + noise(gen);
  }
  Tensor x_data = Tensor::FromVector(xs, {n}), y_data = Tensor::FromVector(ys, {n});

  Graph g;
  g.set_seed(7);  // makes every random op in the graph (here: w's initial value) reproducible
  Scope s = Scope::Root(&g);

  // Inputs: fed on every Run. The shape [?] accepts any number of samples.
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1});
  Output y = ops::Placeholder(s.WithOpName("y"), DType::kFloat32, {-1});

  // Parameters: variables live in the Session and keep their value between runs. They start
  // uninitialized; the Assign ops are the initializers, run once before training.
  Output w = ops::Variable(s.WithOpName("w"), {}, DType::kFloat32);
  Output b = ops::Variable(s.WithOpName("b"), {}, DType::kFloat32);
  Node* init = ops::Group(s.WithOpName("init"),
                          {ops::Assign(s, w, ops::RandomNormal(s, {}, DType::kFloat32, 0.0, 0.1)),
                           ops::Assign(s, b, ops::ScalarLike(s, DType::kFloat32, 0.0))});

  // Model and loss: mean squared error of w * x + b (the scalars broadcast over x).
  Output pred = ops::Add(s, ops::Mul(s, x, w), b);
  Output loss = ops::Mean(s.WithOpName("loss"), ops::Square(s, ops::Sub(s, pred, y)));

  // Gradients adds the backward pass to the graph: dloss/dw and dloss/db are ordinary outputs.
  std::vector<Output> grads = Gradients(s, {loss}, {w, b});
  Output lr = ops::ScalarLike(s, DType::kFloat32, 0.1);
  Node* train = ops::Group(s.WithOpName("train"), {ops::ApplyGradientDescent(s, w, lr, grads[0]),
                                                   ops::ApplyGradientDescent(s, b, lr, grads[1])});

  Session sess(&g);
  sess.Run({}, {}, {init});
  for (int step = 0; step <= 200; ++step) {
    // Fetch nothing, run `train` as a target: one gradient-descent step on the whole data set.
    sess.Run({{x, x_data}, {y, y_data}}, {}, {train});
    if (step % 25 == 0) {
      float l = sess.Run({{x, x_data}, {y, y_data}}, {loss})[0].scalar<float>()();
      std::printf("step %3d  loss %.5f\n", step, l);
    }
  }
  std::vector<Tensor> params = sess.Run({}, {w, b});
  std::printf("fitted w = %.3f, b = %.3f (true: w = 2, b = -1)\n", params[0].scalar<float>()(),
              params[1].scalar<float>()());
  return 0;
}
