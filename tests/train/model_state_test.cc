// Model state from outside the loop (train/model_state.cc) and per-example loss weights:
// SetVariables' all-or-nothing checks, LayerWeightNames' order, the learning-rate override, and
// sample weights, each against a closed form on a one-weight model.
#include <doctest/doctest.h>

#include "train/callbacks.h"
#include "train/model.h"

using namespace weft;
using namespace weft::train;

namespace {

// pred = k * x (no bias, k = 0 at start), MSE, plain SGD at `lr`, one thread.
std::unique_ptr<Model> OneWeight(double lr) {
  auto m = std::make_unique<Sequential>(
      TensorShape({1}), std::vector<LayerPtr>{Dense(1, {.use_bias = false, .kernel_initializer = Zeros()})});
  CompileOptions o;
  o.loss = MeanSquaredError();
  o.optimizer = SGD(lr);
  o.session.inter_op_threads = 1;
  o.session.intra_op_threads = 1;
  m->Compile(o);
  return m;
}

Tensor Column(std::vector<float> v) {
  Tensor t(DType::kFloat32, TensorShape({static_cast<int64_t>(v.size()), 1}));
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

Tensor Vector(std::vector<float> v) {
  Tensor t(DType::kFloat32, TensorShape({static_cast<int64_t>(v.size())}));
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

float Kernel(Model& m) { return m.session()->Run({}, {"dense/kernel"}, {})[0].data<float>()[0]; }

}  // namespace

TEST_CASE("sample weights scale each example's loss: sum(w * loss) / batch") {
  auto m = OneWeight(0.1);
  Tensor w4 = Vector({4, 3, 2, 1}), w1 = Vector({1});
  // k = 0: each loss is y^2; weights 4, 3, 2, 1 on y = 1..4 -> (4 + 12 + 18 + 16) / 4
  Logs logs = m->TrainOnBatch(Column({1, 1, 1, 1}), Column({1, 2, 3, 4}), &w4);
  CHECK(logs["loss"] == doctest::Approx(12.5));
  // the gradient is 2 * sum(w * (k - y)) / 4 = -10: k moves to 0.1 * 10
  CHECK(Kernel(*m) == doctest::Approx(1.0));
  CHECK_THROWS_WITH_AS(m->TrainOnBatch(Column({1, 1}), Column({1, 2}), &w1),
                       doctest::Contains("sample_weight has shape [1] but the batch has 2 examples"), Error);
  // Fit with weights: an epoch of one batch gives the same closed form from a fresh model
  auto f = OneWeight(0.1);
  Tensor x = Column({1, 1, 1, 1}), y = Column({1, 2, 3, 4}), w = Vector({4, 3, 2, 1});
  History h = f->Fit(x, y, {.batch_size = 4, .sample_weight = &w, .verbose = 0});
  CHECK(h.history["loss"][0] == doctest::Approx(12.5));
}

TEST_CASE("SetLearningRate sets a constant rate from the next step") {
  auto m = OneWeight(0.25);
  CHECK(m->learning_rate() == doctest::Approx(0.25));
  m->SetLearningRate(0.0);
  m->TrainOnBatch(Column({1}), Column({1}));
  CHECK(Kernel(*m) == 0.0f);  // no step
  m->SetLearningRate(0.25);
  m->TrainOnBatch(Column({1}), Column({1}));
  CHECK(Kernel(*m) == doctest::Approx(0.5));  // k - lr * 2 (k - 1)
  CHECK_THROWS_AS(m->SetLearningRate(-1), Error);
}

TEST_CASE("SetVariables checks every value before assigning any") {
  auto m = OneWeight(0.1);
  CHECK(m->LayerWeightNames() == std::vector<std::string>{"dense/kernel"});
  Tensor good(DType::kFloat32, TensorShape({1, 1}));
  good.data<float>()[0] = 3;
  Tensor bad(DType::kFloat32, TensorShape({2, 1}));
  CHECK_THROWS_WITH_AS(m->SetVariables({{"dense/kernel", bad}}, "test values"),
                       doctest::Contains("test values gives variable 'dense/kernel' as float32 [2,1], but the "
                                         "model's is float32 [1,1]"),
                       Error);
  CHECK_THROWS_WITH_AS(m->SetVariables({{"dense/kernel", good}, {"nope", good}}, "test values"),
                       doctest::Contains("names variable 'nope'"), Error);
  CHECK(Kernel(*m) == 0.0f);  // nothing assigned
  m->SetVariables({{"dense/kernel", good}}, "test values");
  CHECK(Kernel(*m) == 3.0f);
  good.data<float>()[0] = 7;  // the model holds its own copy
  CHECK(Kernel(*m) == 3.0f);
}

TEST_CASE("OnBatchBegin comes before each step, OnBatchEnd after") {
  struct Order : Callback {
    std::string seen;
    void OnBatchBegin(Model&, int64_t b) override { seen += "b" + std::to_string(b); }
    void OnBatchEnd(Model&, int64_t b, const Logs&) override { seen += "e" + std::to_string(b); }
  };
  auto m = OneWeight(0.1);
  auto cb = std::make_shared<Order>();
  Tensor x = Column({1, 1}), y = Column({1, 1});
  m->Fit(x, y, {.batch_size = 1, .callbacks = {cb}, .verbose = 0});
  CHECK(cb->seen == "b0e0b1e1");
}
