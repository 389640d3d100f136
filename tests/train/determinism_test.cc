// Training gives the same bits whatever the number of intra-op threads (issue 18): every kernel
// on a convnet's step (convolutions with the oneDNN backend or weft's own, batch norm, the fused
// conv + pool, GEMMs, reductions, the optimizer) splits its reductions by the shape, not by the
// thread count. Two models, 20 steps each, 1 thread against 2, every variable compared bit for bit.
#include <doctest/doctest.h>

#include <cstring>

#include "data/datasets.h"
#include "ops/kernel.h"
#include "train/model.h"

using namespace weft;
using namespace weft::train;

namespace {

// A ResNet block at the sizes ResNet-20's first stage has: conv-BN-ReLU, conv-BN, the residual
// add, then a strided conv, a 3x3 conv on its 8x8x32 output (oneDNN's Winograd path at this
// batch of 64, onednn.h), global average pooling and Dense.
std::unique_ptr<Model> ResBlock() {
  Sym input = Input(TensorShape({16, 16, 3}));
  Sym x = Conv2D(16, 3, {.padding = "same"})(input);
  x = ReLU()(BatchNormalization()(x));
  Sym y = Conv2D(16, 3, {.padding = "same"})(x);
  y = ReLU()(BatchNormalization()(y));
  y = BatchNormalization()(Conv2D(16, 3, {.padding = "same"})(y));
  x = ReLU()(train::Add()({x, y}));
  x = Conv2D(32, 3, {.strides = {2, 2}, .padding = "same", .activation = "relu"})(x);
  x = Conv2D(32, 3, {.padding = "same", .activation = "relu"})(x);
  x = GlobalAveragePooling2D()(x);
  return std::make_unique<Model>(std::vector<Sym>{input}, std::vector<Sym>{Dense(10)(x)}, "resblock");
}

// The talks' CNN (the fused conv + bias + ReLU + max-pool kernels and their gradients).
std::unique_ptr<Model> MnistCnn() {
  return std::make_unique<Sequential>(TensorShape({28, 28, 1}), std::vector<LayerPtr>{
      Conv2D(32, 3, {.activation = "relu"}), MaxPool2D(2), Flatten(), Dense(64, {.activation = "relu"}), Dense(10)},
      "mnist_cnn");
}

std::map<std::string, Tensor> Train(std::unique_ptr<Model> m, const data::ArrayData& d, int threads) {
  CompileOptions o;
  o.loss = SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = SGD(0.05, 0.9);
  o.session.inter_op_threads = 1;
  o.session.intra_op_threads = threads;
  o.session.use_gpus = false;
  o.seed = 1;
  m->Compile(o);
  FitOptions fo;
  fo.batch_size = 64;
  fo.epochs = 1;
  fo.steps_per_epoch = 20;
  fo.shuffle_seed = 5;
  fo.verbose = 0;
  m->Fit(d.x, d.y, fo);
  std::map<std::string, Tensor> out;
  for (const std::string& name : m->VariableNames()) {
    REQUIRE(m->session()->vars().Find(name) != nullptr);
    // Fetched through the session: on the host wherever the variable lives.
    out.emplace(name, m->session()->Run({}, {m->session()->graph()->FindOutput(name)})[0]);
  }
  return out;
}

void ExpectSameBits(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [name, t] : a) {
    const Tensor& u = b.at(name);
    INFO("variable " << name << " " << t.shape().ToString());
    REQUIRE(t.shape() == u.shape());
    CHECK(std::memcmp(t.raw_data(), u.raw_data(), t.bytes()) == 0);
  }
}

}  // namespace

TEST_CASE("determinism: a ResNet block trains to the same bits on 1 and 2 intra-op threads") {
  const data::ArrayData d = data::Synthetic(64 * 20, {16, 16, 3}, 10, 21);
  ExpectSameBits(Train(ResBlock(), d, 1), Train(ResBlock(), d, 2));
}

TEST_CASE("determinism: the talks' CNN trains to the same bits on 1 and 2 intra-op threads") {
  const data::ArrayData d = data::Synthetic(64 * 20, {28, 28, 1}, 10, 22);
  ExpectSameBits(Train(MnistCnn(), d, 1), Train(MnistCnn(), d, 2));
}
