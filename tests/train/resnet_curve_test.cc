// ResNet-20 (weft-zoo's, zoo/models.cc) trains like TensorFlow's: the same model on the same 2,000
// Fashion-MNIST images (padded to 32x32) with the same optimizer, batches and epochs gives a
// training curve within TensorFlow's own seed noise. TensorFlow's curves, five seeds, are kept in
// tests/train/golden/resnet20_tf_curve.json (made by make_resnet20_curve.py beside it, whose
// docstring gives the set-up). This exercises the convolution (oneDNN or weft's own), batch-norm,
// residual and optimizer kernels together over ~100 steps: a wrong gradient anywhere shows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "data/datasets.h"
#include "tests/train/layer_test_util.h"
#include "zoo/models.h"

using namespace weft;
using namespace weft::train;
using weft::test::layers::Lists;
using weft::test::layers::SourceDir;

namespace {

// The first n images of `d`, zero-padded by 2 pixels on every side: float32 [n, 32, 32, 1].
Tensor Padded(const data::ArrayData& d, int64_t n) {
  Tensor x(DType::kFloat32, TensorShape({n, 32, 32, 1}));
  float* out = x.data<float>();
  std::fill(out, out + x.num_elements(), 0.0f);
  const float* in = d.x.data<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t r = 0; r < 28; ++r)
      std::copy_n(in + (i * 28 + r) * 28, 28, out + (i * 32 + r + 2) * 32 + 2);
  return x;
}

Tensor FirstLabels(const data::ArrayData& d, int64_t n) {
  Tensor y(DType::kInt32, TensorShape({n}));
  std::copy_n(d.y.data<int32_t>(), n, y.data<int32_t>());
  return y;
}

}  // namespace

TEST_CASE("resnet20 on 2,000 Fashion-MNIST images follows TensorFlow's training curve") {
  const std::string golden = SourceDir() + "/tests/train/golden/resnet20_tf_curve.json";
  std::ifstream f(golden);
  INFO("golden curves: " << golden);
  REQUIRE(f.good());
  const std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto tf_loss = Lists(json, "loss"), tf_acc = Lists(json, "test_accuracy");
  REQUIRE(tf_loss.size() >= 3);
  const size_t epochs = tf_loss[0].size();

  const data::ArrayData train = data::FashionMnist(true), test = data::FashionMnist(false);
  const Tensor x = Padded(train, 2000), y = FirstLabels(train, 2000);
  const Tensor tx = Padded(test, 1000), ty = FirstLabels(test, 1000);
  auto model = zoo::FindZooModel("resnet20").build(TensorShape({32, 32, 1}), 10);
  CompileOptions o;
  o.loss = SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = SGD(0.05, 0.9);
  o.metrics = {"accuracy"};
  o.session.use_gpus = false;
  o.seed = 1;
  model->Compile(o);
  FitOptions fo;
  fo.batch_size = 64;
  fo.epochs = 1;
  fo.shuffle = false;
  fo.verbose = 0;
  for (size_t e = 0; e < epochs; ++e) {
    const double loss = model->Fit(x, y, fo).history["loss"].back();
    const double acc = model->Evaluate(tx, ty, 250)["accuracy"];
    // TensorFlow's range over its seeds, widened by half its width (and at least 0.05 loss /
    // 0.05 accuracy on each side): a different initialization is all that separates the runs.
    double lo = 1e30, hi = -1e30, alo = 1e30, ahi = -1e30;
    for (size_t s = 0; s < tf_loss.size(); ++s) {
      lo = std::min(lo, tf_loss[s][e]), hi = std::max(hi, tf_loss[s][e]);
      alo = std::min(alo, tf_acc[s][e]), ahi = std::max(ahi, tf_acc[s][e]);
    }
    const double pad = std::max(0.05, (hi - lo) / 2), apad = std::max(0.05, (ahi - alo) / 2);
    INFO("epoch " << e + 1 << ": weft loss " << loss << " (TensorFlow " << lo << " .. " << hi << "), test accuracy "
                  << acc << " (TensorFlow " << alo << " .. " << ahi << ")");
    CHECK(loss >= lo - pad);
    CHECK(loss <= hi + pad);
    CHECK(acc >= alo - apad);
    CHECK(acc <= ahi + apad);
  }
}
