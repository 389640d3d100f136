// Layers: output shapes, parameter counts (against Keras' counts for the zoo models), names,
// and the errors a wrong input shape gives.
#include <doctest/doctest.h>

#include <sstream>

#include "graph/session.h"
#include "ops/framework.h"
#include "ops/state.h"
#include "train/layer.h"
#include "train/model.h"
#include "zoo/models.h"

using namespace weft;
using namespace weft::train;

namespace {

std::string ShapeOf(const Sym& s) { return s->shape.ToString(); }

int64_t ZooParams(const std::string& name, TensorShape input) {
  return zoo::FindZooModel(name).build(input, 10)->CountParams();
}

}  // namespace

TEST_CASE("layers: output shapes and parameter counts") {
  Sym x = Input({28, 28, 1});
  CHECK(ShapeOf(x) == "[?,28,28,1]");
  LayerPtr conv = Conv2D(32, 3, {.activation = "relu"});
  Sym c = conv(x);
  CHECK(ShapeOf(c) == "[?,26,26,32]");
  CHECK(conv->CountParams(true) == 3 * 3 * 1 * 32 + 32);
  CHECK(ShapeOf(Conv2D(8, 3, {.strides = {2, 2}, .padding = "same"})(x)) == "[?,14,14,8]");
  CHECK(ShapeOf(Conv2D(8, {5, 3}, {.use_bias = false})(x)) == "[?,24,26,8]");
  CHECK(ShapeOf(MaxPool2D(2)(c)) == "[?,13,13,32]");
  CHECK(ShapeOf(AvgPool2D({3, 3}, {2, 2}, "same")(c)) == "[?,13,13,32]");
  CHECK(ShapeOf(GlobalAveragePooling2D()(c)) == "[?,32]");
  Sym f = Flatten()(MaxPool2D(2)(c));
  CHECK(ShapeOf(f) == "[?,5408]");
  LayerPtr dense = Dense(64, {.activation = "relu"});
  CHECK(ShapeOf(dense(f)) == "[?,64]");
  CHECK(dense->CountParams(true) == 5408 * 64 + 64);
  CHECK(ShapeOf(Dropout(0.5)(f)) == "[?,5408]");
  CHECK(ShapeOf(Activation("softmax")(dense(f))) == "[?,64]");
  LayerPtr bn = BatchNormalization();
  CHECK(ShapeOf(bn(c)) == "[?,26,26,32]");
  CHECK(bn->CountParams(true) == 64);   // gamma, beta
  CHECK(bn->CountParams(false) == 64);  // moving mean, moving variance
  CHECK(ShapeOf(train::Add()({c, ReLU()(c)})) == "[?,26,26,32]");
}

TEST_CASE("layers: the zoo's parameter counts equal Keras'") {
  // Keras model.count_params() for the same layer stacks.
  CHECK(ZooParams("mnist_cnn", {28, 28, 1}) == 347146);
  CHECK(ZooParams("mlp", {28, 28, 1}) == 669706);
  CHECK(ZooParams("lenet5", {28, 28, 1}) == 61706);
  CHECK(ZooParams("resnet20", {32, 32, 3}) == 274442);  // keras.io CIFAR-10 ResNet-20 v1
  CHECK(ZooParams("vgg_small", {28, 28, 1}) == 435306);
}

TEST_CASE("layers: a shared layer keeps one set of weights; names are Keras' and unique") {
  Sym x = Input({4});
  LayerPtr shared = Dense(4);
  Sym y = shared(shared(x));
  Model m({x}, {y});
  CHECK(m.layers().size() == 1);
  CHECK(m.CountParams() == 20);
  Sequential s({28, 28, 1}, {Conv2D(4, 3), Conv2D(4, 3), MaxPool2D(2), Flatten(), Dense(3), Dense(2)});
  std::vector<std::string> names;
  for (const LayerPtr& l : s.layers()) names.push_back(l->name());
  CHECK(names == std::vector<std::string>{"conv2d", "conv2d_1", "max_pooling2d", "flatten", "dense", "dense_1"});
  CHECK(s.GetLayer("dense_1")->CountParams(true) == 3 * 2 + 2);
  CHECK_THROWS_WITH_AS(s.GetLayer("nope"), doctest::Contains("no layer 'nope'"), Error);
}

TEST_CASE("layers: summary prints Keras' table") {
  Sequential m({28, 28, 1}, {Conv2D(32, 3, {.activation = "relu"}), MaxPool2D(2), Flatten(),
                             Dense(64, {.activation = "relu"}), Dense(10)},
               "cnn");
  std::ostringstream os;
  m.Summary(os);
  const std::string s = os.str();
  CHECK(s.find("Model: \"cnn\"") != std::string::npos);
  CHECK(s.find("conv2d (Conv2D)             (None, 26, 26, 32)        320") != std::string::npos);
  CHECK(s.find("dense (Dense)               (None, 64)                346176") != std::string::npos);
  CHECK(s.find("Total params: 347,146") != std::string::npos);
  CHECK(s.find("Non-trainable params: 0") != std::string::npos);
}

TEST_CASE("layers: bad inputs name the layer and the shapes") {
  Sym img = Input({28, 28, 1});
  Sym ragged = Input({4, -1});  // Dense needs the features (the last dim; unknown steps are fine, as Keras)
  CHECK_THROWS_WITH_AS(Dense(3)(ragged), doctest::Contains("Dense"), Error);
  CHECK_THROWS_WITH_AS(Dense(3)(ragged), doctest::Contains("[?,4,?]"), Error);
  CHECK(ShapeOf(Dense(3)(Input({-1, 4}))) == "[?,?,3]");
  Sym vec = Input({10});
  CHECK_THROWS_WITH_AS(Conv2D(3, 3)(vec), doctest::Contains("NHWC"), Error);
  CHECK_THROWS_WITH_AS(Conv2D(3, 30)(img), doctest::Contains("Conv2D"), Error);  // kernel larger than input
  CHECK_THROWS_WITH_AS(train::Add()({vec, Input({11})}), doctest::Contains("same shape"), Error);
  CHECK_THROWS_WITH_AS(Conv2D(3, 3, {.padding = "full"}), doctest::Contains("padding"), Error);
  CHECK_THROWS_WITH_AS(Dense(3, {.activation = "gelu2"}), doctest::Contains("unknown activation"), Error);
  CHECK_THROWS_WITH_AS(Dropout(1.0), doctest::Contains("rate"), Error);
  CHECK_THROWS_WITH_AS(Dense(0), doctest::Contains("units"), Error);
  CHECK_THROWS_WITH_AS(MaxPool2D({2, 2, 2}), doctest::Contains("pool_size"), Error);
}

TEST_CASE("initializers: fans, ranges and seeds") {
  double fi, fo;
  ComputeFans(TensorShape({3, 3, 2, 8}), &fi, &fo);
  CHECK(fi == 18);
  CHECK(fo == 72);
  Graph g;
  Scope s = Scope::Root(&g);
  Output a = GlorotUniform(5).Build(s, {100, 50});
  Output b = GlorotUniform(5).Build(s, {100, 50});
  Output c = HeNormal(6).Build(s, {200, 10});
  Output z = Zeros().Build(s, {3});
  Output o = Ones().Build(s, {3});
  Session sess(&g);
  std::vector<Tensor> out = sess.Run({}, {a, b, c, z, o});
  const double limit = std::sqrt(6.0 / 150.0);
  double max_abs = 0;
  for (int64_t i = 0; i < out[0].num_elements(); ++i) {
    max_abs = std::max(max_abs, std::abs(static_cast<double>(out[0].flat<float>()(i))));
    CHECK(out[0].flat<float>()(i) == out[1].flat<float>()(i));  // same seed, same values
  }
  CHECK(max_abs <= limit);
  CHECK(max_abs > 0.9 * limit);
  double sq = 0;
  for (int64_t i = 0; i < out[2].num_elements(); ++i) sq += std::pow(out[2].flat<float>()(i), 2);
  CHECK(std::sqrt(sq / 2000.0) == doctest::Approx(std::sqrt(2.0 / 200.0)).epsilon(0.1));  // He: var 2 / fan_in
  CHECK(out[3].flat<float>()(2) == 0.0f);
  CHECK(out[4].flat<float>()(2) == 1.0f);
  CHECK_THROWS_WITH_AS(InitializerByName("orthogonal_ish"), doctest::Contains("unknown initializer"), Error);
  CHECK(InitializerByName("HeNormal").ToString() == "he_normal");
}
