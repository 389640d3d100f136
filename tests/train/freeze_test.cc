// Freezing layers (Layer::set_trainable, Keras' layer.trainable = False): a frozen layer's weights
// read as non-trainable, training leaves them alone, and a frozen BatchNormalization normalizes
// with its moving statistics without updating them (Keras 3); unfreezing gives back the declared flags.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "train/model.h"

using namespace weft;
using namespace weft::train;

namespace {

Tensor Value(Model& m, const std::string& name) {
  REQUIRE(m.session()->vars().Find(name) != nullptr);
  return m.session()->Run({}, {m.session()->graph()->FindOutput(name)})[0];
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0;
}

}  // namespace

TEST_CASE("freeze: a frozen layer keeps its weights and a frozen batch norm its statistics") {
  LayerPtr first = Dense(16), bn = BatchNormalization(0.5), last = Dense(3);
  Sequential m({6}, {first, bn, ReLU(), last});
  first->set_trainable(false);
  bn->set_trainable(false);
  CHECK(!first->trainable());
  CHECK(first->CountParams(true) == 0);
  CHECK(first->CountParams(false) == 6 * 16 + 16);
  CHECK(bn->CountParams(true) == 0);  // gamma and beta are frozen too
  CHECK(last->CountParams(true) == 16 * 3 + 3);
  CompileOptions o;
  o.loss = SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = SGD(0.1);
  o.session.inter_op_threads = 1;
  o.session.intra_op_threads = 1;
  o.seed = 5;
  m.Compile(o);
  const Tensor kernel = Value(m, "dense/kernel"), head = Value(m, "dense_1/kernel");
  Tensor x(DType::kFloat32, TensorShape({64, 6})), y(DType::kInt32, TensorShape({64}));
  for (int64_t i = 0; i < 64 * 6; ++i) x.data<float>()[i] = static_cast<float>(std::sin(0.3 * static_cast<double>(i)));
  for (int64_t i = 0; i < 64; ++i) y.data<int32_t>()[i] = static_cast<int32_t>(i % 3);
  FitOptions fo;
  fo.epochs = 1;
  fo.batch_size = 16;
  fo.verbose = 0;
  m.Fit(x, y, fo);
  CHECK(SameBits(Value(m, "dense/kernel"), kernel));
  CHECK(Value(m, "batch_normalization/moving_mean").flat<float>()(0) == 0.0f);
  CHECK(Value(m, "batch_normalization/moving_variance").flat<float>()(0) == 1.0f);
  CHECK(Value(m, "batch_normalization/gamma").flat<float>()(0) == 1.0f);
  CHECK(!SameBits(Value(m, "dense_1/kernel"), head));
  bn->set_trainable(true);  // the declared flags return: the moving statistics stay non-trainable
  CHECK(bn->CountParams(true) == 32);
  CHECK(bn->CountParams(false) == 32);
}
