// Gradient accumulation (Optimizer::gradient_accumulation_steps, Keras 3's): k steps of batch b
// with accumulation make the same update as one step of batch k * b (plain SGD, mean loss).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "train/model.h"

using namespace weft;
using namespace weft::train;

namespace {

CompileOptions Options(Optimizer opt) {
  CompileOptions o;
  o.loss = SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = std::move(opt);
  o.session.inter_op_threads = 1;
  o.session.intra_op_threads = 1;
  o.seed = 7;  // the same initial weights in every model of a test
  return o;
}

std::unique_ptr<Model> Mlp() {
  return std::make_unique<Sequential>(
      TensorShape({6}), std::vector<LayerPtr>{Dense(8, {.activation = "tanh"}), Dense(3)}, "mlp");
}

// Rows [begin, begin + n) of a 2-D float or 1-D int32 array.
Tensor Rows(const Tensor& t, int64_t begin, int64_t n) {
  std::vector<int64_t> dims = {n};
  for (int i = 1; i < t.shape().rank(); ++i) dims.push_back(t.shape().dim(i));
  Tensor out(t.dtype(), TensorShape(dims));
  const size_t row = t.bytes() / static_cast<size_t>(t.shape().dim(0));
  std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + row * static_cast<size_t>(begin), out.bytes());
  return out;
}

void Data(int64_t n, Tensor* x, Tensor* y) {
  *x = Tensor(DType::kFloat32, TensorShape({n, 6}));
  *y = Tensor(DType::kInt32, TensorShape({n}));
  for (int64_t i = 0; i < n * 6; ++i) x->data<float>()[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)));
  for (int64_t i = 0; i < n; ++i) y->data<int32_t>()[i] = static_cast<int32_t>((i * 5) % 3);
}

double MaxDiff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (int64_t j = 0; j < a[i].num_elements(); ++j) {
      d = std::max(d, std::fabs(static_cast<double>(a[i].data<float>()[j]) - b[i].data<float>()[j]));
    }
  }
  return d;
}

std::vector<Tensor> Weights(Model& m) { return m.session()->Run({}, m.LayerWeightNames(), {}); }

// Two models with the same initial weights: SGD(lr) accumulating k steps, and plain SGD(lr).
std::pair<std::unique_ptr<Model>, std::unique_ptr<Model>> Pair(int k, double lr) {
  Optimizer accumulating = SGD(lr);
  accumulating.gradient_accumulation_steps = k;
  auto a = Mlp(), b = Mlp();
  a->Compile(Options(accumulating));
  b->Compile(Options(SGD(lr)));
  return {std::move(a), std::move(b)};
}

}  // namespace

TEST_CASE("gradient accumulation: k steps of batch b equal one step of batch k*b (SGD, mean loss)") {
  constexpr int64_t kSteps = 4, kBatch = 5;
  Tensor x, y;
  Data(kSteps * kBatch, &x, &y);
  auto [a, b] = Pair(kSteps, 0.5);
  const std::vector<Tensor> initial = Weights(*a);
  REQUIRE(MaxDiff(initial, Weights(*b)) == 0.0);  // same seed, same start
  for (int64_t s = 0; s < kSteps; ++s) {
    a->TrainOnBatch(Rows(x, s * kBatch, kBatch), Rows(y, s * kBatch, kBatch));
    // Keras: the variables change only at the k-th step; the step counter counts every step.
    CHECK(a->step() == s + 1);
    if (s + 1 < kSteps) CHECK(MaxDiff(Weights(*a), initial) == 0.0);
  }
  b->TrainOnBatch(x, y);
  CHECK(MaxDiff(Weights(*a), initial) > 1e-3);  // it did move
  CHECK(MaxDiff(Weights(*a), Weights(*b)) < 1e-5);
  // A second round starts from zeroed accumulators: still the large-batch step.
  for (int64_t s = 0; s < kSteps; ++s) a->TrainOnBatch(Rows(x, s * kBatch, kBatch), Rows(y, s * kBatch, kBatch));
  b->TrainOnBatch(x, y);
  CHECK(MaxDiff(Weights(*a), Weights(*b)) < 1e-5);
  // The accumulators are checkpointed with the optimizer's slots.
  const std::vector<std::string> names = a->VariableNames();
  CHECK(std::find(names.begin(), names.end(), "dense/kernel/gradient_accumulator") != names.end());
}

TEST_CASE("gradient accumulation: Fit over k*b examples in batches of b equals one batch of k*b") {
  constexpr int64_t kSteps = 3, kBatch = 4;
  Tensor x, y;
  Data(kSteps * kBatch, &x, &y);
  auto [a, b] = Pair(kSteps, 0.3);
  a->Fit(x, y, {.batch_size = kBatch, .epochs = 2, .shuffle = false, .verbose = 0});
  b->Fit(x, y, {.batch_size = kSteps * kBatch, .epochs = 2, .shuffle = false, .verbose = 0});
  CHECK(MaxDiff(Weights(*a), Weights(*b)) < 1e-5);
}

TEST_CASE("gradient accumulation: a negative count is an error naming the argument") {
  Optimizer o = SGD(0.1);
  o.gradient_accumulation_steps = -2;
  auto m = Mlp();
  try {
    m->Compile(Options(o));
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("gradient_accumulation_steps") != std::string::npos);
  }
}
