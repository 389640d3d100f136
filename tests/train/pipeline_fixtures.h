// What the pipeline tests share (tests/train/pipeline_test.cc, tests/distributed/pipeline_test.cc):
// a small MLP and data set, the trained weights and their largest difference. Header-only: each
// test binary includes it once.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "train/model.h"

namespace weft::test {

inline train::CompileOptions PipelineCompileOptions(train::Optimizer opt, int threads) {
  train::CompileOptions o;
  o.loss = train::SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = std::move(opt);
  o.session.inter_op_threads = 2;
  o.session.intra_op_threads = threads;
  o.seed = 11;
  return o;
}

inline train::LayerPtr Named(train::LayerPtr l, const std::string& name) {
  l->set_name(name);
  return l;
}

// 6 -> d1 (16, tanh) -> d2 (16, tanh) -> d3 (12, tanh) -> out (3 logits).
inline std::unique_ptr<train::Model> PipelineMlp() {
  using namespace train;
  return std::make_unique<Sequential>(
      TensorShape({6}),
      std::vector<LayerPtr>{Named(Dense(16, {.activation = "tanh"}), "d1"), Named(Dense(16, {.activation = "tanh"}), "d2"),
                            Named(Dense(12, {.activation = "tanh"}), "d3"), Named(Dense(3), "out")},
      "mlp");
}

// n examples of 6 features (cos of their index) and labels in 0..2.
inline void PipelineData(int64_t n, Tensor* x, Tensor* y) {
  *x = Tensor(DType::kFloat32, TensorShape({n, 6}));
  *y = Tensor(DType::kInt32, TensorShape({n}));
  for (int64_t i = 0; i < n * 6; ++i) x->data<float>()[i] = static_cast<float>(std::cos(0.37 * static_cast<double>(i)));
  for (int64_t i = 0; i < n; ++i) y->data<int32_t>()[i] = static_cast<int32_t>((i * 7) % 3);
}

inline std::vector<Tensor> Weights(train::Model& m) { return m.session()->Run({}, m.LayerWeightNames(), {}); }

inline double MaxDiff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].shape() == b[i].shape());
    for (int64_t j = 0; j < a[i].num_elements(); ++j) {
      d = std::max(d, std::fabs(static_cast<double>(a[i].data<float>()[j]) - b[i].data<float>()[j]));
    }
  }
  return d;
}

// Trains make() for 2 epochs of 48 examples (PipelineData) in global batches of 16 on one device
// and in `strategy`'s scope (`compile_options` for both, `placed` called on the strategy's model
// once compiled); checks that training moved the weights and that the last epoch's losses agree
// within 1e-5; returns the largest weight difference.
inline double TrainedLikeOneDevice(const Strategy& strategy, const std::function<std::unique_ptr<train::Model>()>& make,
                                   const std::function<train::CompileOptions()>& compile_options,
                                   const std::function<void(train::Model&)>& placed = {}) {
  Tensor x, y;
  PipelineData(48, &x, &y);
  std::unique_ptr<train::Model> single = make();
  single->Compile(compile_options());
  const std::vector<Tensor> initial = Weights(*single);
  std::unique_ptr<train::Model> distributed;
  {
    auto scope = strategy.scope();
    distributed = make();
    distributed->Compile(compile_options());
  }
  REQUIRE(MaxDiff(Weights(*distributed), initial) == 0.0);
  if (placed) placed(*distributed);
  const train::FitOptions fo{.batch_size = 16, .epochs = 2, .shuffle = false, .verbose = 0};
  const train::History hs = single->Fit(x, y, fo);
  const train::History hd = distributed->Fit(x, y, fo);
  CHECK(MaxDiff(Weights(*single), initial) > 1e-2);
  CHECK(std::fabs(hs.history.at("loss").back() - hd.history.at("loss").back()) < 1e-5);
  return MaxDiff(Weights(*single), Weights(*distributed));
}

}  // namespace weft::test
