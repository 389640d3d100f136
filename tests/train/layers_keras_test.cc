// The Keras layers added for TensorFlow programs (train/layers_shape.cc, layers_merge.cc, the 1-D
// and global layers of layers_conv.cc, train/activations.cc): output shapes, parameter counts,
// Keras' default names, forward values (TensorFlow-computed or closed forms), gradients by finite
// differences through each layer's composite ops, and the errors of bad arguments.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "tests/ops/op_test_util.h"
#include "train/layer.h"
#include "train/model.h"
#include "tests/train/layer_test_util.h"

using namespace weft;
using namespace weft::train;
using weft::test::ExpectNear;
using weft::test::Rand;
using weft::test::T;
using namespace weft::test::layers;

namespace {

}  // namespace

TEST_CASE("keras layers: output shapes and parameter counts as Keras reports them") {
  Sym v = Input({12});
  CHECK(ShapeOf(Reshape({3, 4})(v)) == "[?,3,4]");         // Keras' Reshape docstring
  CHECK(ShapeOf(Reshape({-1, 2, 2})(v)) == "[?,3,2,2]");   // its -1 example
  CHECK(ShapeOf(Permute({2, 1})(Input({10, 64}))) == "[?,64,10]");  // Keras' Permute docstring
  CHECK(ShapeOf(Rescaling(1.0 / 255)(v)) == "[?,12]");
  Sym img = Input({28, 28, 3});
  CHECK(ShapeOf(ZeroPadding2D({1, 1, 1, 1})(img)) == "[?,30,30,3]");
  CHECK(ShapeOf(ZeroPadding2D({1, 0, 2, 1})(img)) == "[?,29,31,3]");
  CHECK(ShapeOf(GlobalMaxPooling2D()(img)) == "[?,3]");
  CHECK(ShapeOf(GlobalMaxPooling2D(true)(img)) == "[?,1,1,3]");
  CHECK(ShapeOf(GlobalAveragePooling2D(true)(img)) == "[?,1,1,3]");
  CHECK(ShapeOf(Softmax(1)(Input({3, 5}))) == "[?,3,5]");

  Sym seq = Input({100, 8});
  LayerPtr conv = Conv1D(16, 5, {.activation = "relu"});
  CHECK(ShapeOf(conv(seq)) == "[?,96,16]");
  CHECK(conv->CountParams(true) == 5 * 8 * 16 + 16);  // kernel (5, 8, 16), bias (16)
  CHECK(ShapeOf(Conv1D(4, 3, {.strides = 2, .padding = "same"})(seq)) == "[?,50,4]");
  CHECK(ShapeOf(Conv1D(4, 3, {.padding = "causal", .dilation_rate = 4})(seq)) == "[?,100,4]");
  CHECK(ShapeOf(Conv1D(4, 3, {.dilation_rate = 2, .use_bias = false})(seq)) == "[?,96,4]");
  CHECK(ShapeOf(MaxPool1D()(seq)) == "[?,50,8]");
  CHECK(ShapeOf(MaxPool1D(3, 2, "same")(seq)) == "[?,50,8]");
  CHECK(ShapeOf(AvgPool1D(3)(seq)) == "[?,33,8]");
  CHECK(ShapeOf(GlobalAveragePooling1D()(seq)) == "[?,8]");
  CHECK(ShapeOf(GlobalMaxPooling1D(true)(seq)) == "[?,1,8]");
  CHECK(ShapeOf(LeakyReLU()(seq)) == "[?,100,8]");
  LayerPtr bn = BatchNormalization();  // over the channels of a sequence, as Keras
  CHECK(ShapeOf(bn(seq)) == "[?,100,8]");
  CHECK(bn->CountParams(true) == 16);
  LayerPtr dense = Dense(3);  // over the last axis of any rank, as Keras
  CHECK(ShapeOf(dense(seq)) == "[?,100,3]");
  CHECK(dense->CountParams(true) == 8 * 3 + 3);

  Sym a = Dense(4)(v), b = Dense(6)(v);
  CHECK(ShapeOf(Concatenate()({a, b})) == "[?,10]");
  CHECK(ShapeOf(Concatenate(1)({Reshape({2, 2})(a), Reshape({3, 2})(b)})) == "[?,5,2]");
  for (const LayerPtr& merge : {Multiply(), Average(), Maximum(), Minimum(), Subtract(), train::Add()}) {
    CHECK(ShapeOf(merge({a, Dense(4)(v)})) == "[?,4]");
  }
}

TEST_CASE("keras layers: default names are Keras' snake case of the class name") {
  Sym x = Input({20, 4});
  Sym h = GlobalAveragePooling1D()(MaxPool1D()(LeakyReLU()(Conv1D(8, 3)(x))));
  Sym y = Dense(2)(Concatenate()({h, GlobalMaxPooling1D()(x)}));
  Model m({x}, {y});
  std::vector<std::string> names;
  for (const LayerPtr& l : m.layers()) names.push_back(l->name());
  CHECK(names == std::vector<std::string>{"conv1d", "leaky_re_lu", "max_pooling1d", "global_average_pooling1d",
                                          "global_max_pooling1d", "concatenate", "dense"});
  std::ostringstream os;
  m.Summary(os);
  // A label wider than its column continues on the next line instead of running into the shape.
  CHECK(os.str().find(" global_average_pooling1d (G (None, 8)") != std::string::npos);
  CHECK(os.str().find(" lobalAveragePooling1D)") != std::string::npos);
}

TEST_CASE("keras layers: Conv1D matches TensorFlow for every padding, stride and dilation") {
  const Tensor x = T<float>({0.5, -1, 2, 0, -1.5, 1, 1, 3, 0.25, -0.5}, {1, 5, 2});
  std::vector<double> k;
  for (int i = 0; i < 12; ++i) k.push_back(i / 6.0 - 1.0);
  const Tensor kernel = T<float>(k, {2, 2, 3}), bias = T<float>({0.1, -0.2, 0.3});
  // keras.layers.Conv1D(3, 2, ...) with these weights, computed by TensorFlow 2.21.
  struct Case {
    std::string padding;
    int64_t strides, dilation;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {"valid", 1, 1, {0.1, 0.04999991, 0.8000001, -1.4, -1.45, -0.6999999, 2.6, 2.883333, 3.966667, -2.65, -2.325,
                       -1.2}},
      {"valid", 2, 1, {0.1, 0.04999991, 0.8000001, 2.6, 2.883333, 3.966667}},
      {"valid", 1, 2, {0.6, 0.1333333, 0.4666667, -0.4, 0.2999999, 1.8, 0.85, 0.4250001, 0.8}},
      {"same", 1, 1, {0.1, 0.04999991, 0.8000001, -1.4, -1.45, -0.6999999, 2.6, 2.883333, 3.966667, -2.65, -2.325,
                      -1.2, 0.1, -0.2416667, 0.2166667}},
      {"same", 2, 1, {0.1, 0.04999991, 0.8000001, 2.6, 2.883333, 3.966667, 0.1, -0.2416667, 0.2166667}},
      {"same", 1, 2, {0.1, 0.1333333, 0.9666668, 0.6, 0.1333333, 0.4666667, -0.4, 0.2999999, 1.8, 0.85, 0.4250001,
                      0.8, -2.4, -2.033333, -0.8666667}},
      {"causal", 1, 1, {-0.4, -0.7833333, -0.3666667, 0.1, 0.04999991, 0.8000001, -1.4, -1.45, -0.6999999, 2.6,
                        2.883333, 3.966667, -2.65, -2.325, -1.2}},
      {"causal", 2, 1, {-0.4, -0.7833333, -0.3666667, -1.4, -1.45, -0.6999999, -2.65, -2.325, -1.2}},
      {"causal", 1, 2, {-0.4, -0.7833333, -0.3666667, 0.1, 0.1333333, 0.9666668, 0.6, 0.1333333, 0.4666667, -0.4,
                        0.2999999, 1.8, 0.85, 0.4250001, 0.8}},
  };
  for (const Case& c : cases) {
    INFO(c.padding << " strides " << c.strides << " dilation " << c.dilation);
    LayerPtr conv = Conv1D(3, 2, {.strides = c.strides, .padding = c.padding, .dilation_rate = c.dilation});
    ExpectNear(Apply(conv, {x}, {kernel, bias}),
               T<float>(c.want, {1, static_cast<int64_t>(c.want.size() / 3), 3}), 1e-5, 1e-5);
  }
}

TEST_CASE("keras layers: forward values against closed forms") {
  const Tensor v = T<float>({1, 2, 3, 4, 5, 6}, {1, 6});
  ExpectNear(Apply(Reshape({-1, 2}), {v}), T<float>({1, 2, 3, 4, 5, 6}, {1, 3, 2}));
  ExpectNear(Apply(Rescaling(0.5, -1), {v}), T<float>({-0.5, 0, 0.5, 1, 1.5, 2}, {1, 6}));
  ExpectNear(Apply(Permute({2, 1}), {T<float>({1, 2, 3, 4, 5, 6}, {1, 2, 3})}),
             T<float>({1, 4, 2, 5, 3, 6}, {1, 3, 2}));
  const Tensor a = T<float>({1, -2, 3}, {1, 3}), b = T<float>({4, 5, -6}, {1, 3}), c = T<float>({0, 1, 2}, {1, 3});
  ExpectNear(Apply(Multiply(), {a, b, c}), T<float>({0, -10, -36}, {1, 3}));
  ExpectNear(Apply(Average(), {a, b, c}), T<float>({5.0 / 3, 4.0 / 3, -1.0 / 3}, {1, 3}));
  ExpectNear(Apply(Average(), {a, b}), T<float>({2.5, 1.5, -1.5}, {1, 3}));
  ExpectNear(Apply(Maximum(), {a, b, c}), T<float>({4, 5, 3}, {1, 3}));
  ExpectNear(Apply(Minimum(), {a, b, c}), T<float>({0, -2, -6}, {1, 3}));
  ExpectNear(Apply(Subtract(), {a, b}), T<float>({-3, -7, 9}, {1, 3}));
  ExpectNear(Apply(Concatenate(), {a, c}), T<float>({1, -2, 3, 0, 1, 2}, {1, 6}));
  ExpectNear(Apply(ZeroPadding2D({1, 0, 0, 1}), {T<float>({1, 2}, {1, 1, 2, 1})}),
             T<float>({0, 0, 0, 1, 2, 0}, {1, 2, 3, 1}));
  ExpectNear(Apply(LeakyReLU(), {T<float>({-2, 3}, {1, 2})}), T<float>({-0.6, 3}, {1, 2}));
  // BatchNormalization in inference on (1, 2, 2): (x - moving_mean) / sqrt(moving_variance + eps)
  // * gamma + beta per channel.
  ExpectNear(Apply(BatchNormalization(0.99, 0.25), {T<float>({1, 2, 3, 4}, {1, 2, 2})},
                   {T<float>({2, 1}), T<float>({0, 1}), T<float>({1, 2}), T<float>({0.75, 3.75})}),
             T<float>({0, 1, 4, 2}, {1, 2, 2}));
  // Dense on (1, 2, 2): each row times the kernel, plus the bias.
  ExpectNear(Apply(Dense(1), {T<float>({1, 2, 3, 4}, {1, 2, 2})}, {T<float>({1, 10}, {2, 1}), T<float>({0.5})}),
             T<float>({21.5, 43.5}, {1, 2, 1}));
  ExpectNear(Apply(GlobalMaxPooling1D(), {T<float>({1, 5, 4, -2, 0, 3}, {1, 3, 2})}), T<float>({4, 5}, {1, 2}));
  // Softmax over axis 1 of (1, 2, 2): each column normalized.
  const double e = std::exp(1.0);
  ExpectNear(Apply(Softmax(1), {T<float>({0, 1, 1, 1}, {1, 2, 2})}),
             T<float>({1 / (1 + e), 0.5, e / (1 + e), 0.5}, {1, 2, 2}));
}

TEST_CASE("keras activations: every name against its formula; unknown names list the known ones") {
  const std::vector<double> xs = {-3, -1, -0.5, 0, 0.5, 1, 3};
  auto sig = [](double x) { return 1 / (1 + std::exp(-x)); };
  auto softplus = [](double x) { return std::log1p(std::exp(x)); };
  auto relu6 = [](double x) { return std::min(std::max(x, 0.0), 6.0); };
  const double selu_scale = 1.0507009873554805, selu_alpha = 1.6732632423543772;
  const std::vector<std::pair<std::string, std::function<double(double)>>> fns = {
      {"gelu", [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"selu", [&](double x) { return selu_scale * (x > 0 ? x : selu_alpha * std::expm1(x)); }},
      {"elu", [](double x) { return x > 0 ? x : std::expm1(x); }},
      {"swish", [&](double x) { return x * sig(x); }},
      {"silu", [&](double x) { return x * sig(x); }},
      {"softplus", softplus},
      {"softsign", [](double x) { return x / (std::abs(x) + 1); }},
      {"relu6", relu6},
      {"hard_sigmoid", [&](double x) { return relu6(x + 3) / 6; }},
      {"hard_silu", [&](double x) { return x * relu6(x + 3) / 6; }},
      {"mish", [&](double x) { return x * std::tanh(softplus(x)); }},
      {"exponential", [](double x) { return std::exp(x); }},
      {"leaky_relu", [](double x) { return x > 0 ? x : 0.2 * x; }},
      {"linear", [](double x) { return x; }},
      {"relu", [](double x) { return std::max(x, 0.0); }},
      {"sigmoid", sig},
      {"tanh", [](double x) { return std::tanh(x); }},
      // Keras 3's newer activations at their default arguments.
      {"celu", [](double x) { return x > 0 ? x : std::expm1(x); }},
      {"hard_tanh", [](double x) { return std::min(std::max(x, -1.0), 1.0); }},
      {"hard_shrink", [](double x) { return std::abs(x) > 0.5 ? x : 0.0; }},
      {"soft_shrink", [](double x) { return x > 0.5 ? x - 0.5 : (x < -0.5 ? x + 0.5 : 0.0); }},
      {"tanh_shrink", [](double x) { return x - std::tanh(x); }},
      {"log_sigmoid", [&](double x) { return std::log(sig(x)); }},
      {"squareplus", [](double x) { return (x + std::sqrt(x * x + 4)) / 2; }},
      {"sparse_plus", [](double x) { return x <= -1 ? 0.0 : (x >= 1 ? x : (x + 1) * (x + 1) / 4); }},
      {"sparse_sigmoid", [](double x) { return std::min(std::max((x + 1) / 2, 0.0), 1.0); }},
  };
  for (const auto& [name, f] : fns) {
    INFO(name);
    std::vector<double> want;
    for (double x : xs) want.push_back(f(x));
    ExpectNear(Apply(Activation(name), {T<double>(xs, {1, 7})}), T<double>(want, {1, 7}), 1e-12, 1e-12);
    ExpectNear(Apply(Dense(7, {.activation = name}), {T<float>(xs, {1, 7})},
                     {T<float>({1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
                                0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1},
                               {7, 7}),
                      T<float>({0, 0, 0, 0, 0, 0, 0})}),
               T<float>(want, {1, 7}), 1e-5, 1e-5);
  }
  const std::string err = ErrorOf([] { Activation("gelux"); });
  CHECK(err.find("unknown activation 'gelux'") != std::string::npos);
  CHECK(err.find("gelu, glu, hard_shrink, hard_sigmoid") != std::string::npos);
  // glu halves the last axis: a * sigmoid(b); an odd axis is an error naming the shape.
  ExpectNear(Apply(Activation("glu"), {T<double>({1, 2, 0, -1}, {1, 4})}),
             T<double>({1 * sig(0), 2 * sig(-1)}, {1, 2}), 1e-12, 1e-12);
  CHECK(ErrorOf([] { Activation("glu")(Input({3})); }).find("does not divide into 2 equal parts") != std::string::npos);
  CHECK(err.find("swish") != std::string::npos);
}

TEST_CASE("keras layers: gradients by finite differences through each layer") {
  CheckLayerGradient(Conv1D(3, 2, {.padding = "causal", .dilation_rate = 2, .activation = "gelu"}),
                     Rand({2, 5, 2}, -1, 1, 1), {Rand({2, 2, 3}, -1, 1, 2), Rand({3}, -1, 1, 3)});
  CheckLayerGradient(Conv1D(2, 3, {.strides = 2, .padding = "same", .activation = "selu"}), Rand({1, 6, 2}, -1, 1, 4),
                     {Rand({3, 2, 2}, -1, 1, 5), Rand({2}, -1, 1, 6)});
  CheckLayerGradient(Softmax(1), Rand({2, 3, 4}, -1, 1, 7));
  CheckLayerGradient(Dense(2), Rand({2, 3, 4}, -1, 1, 15), {Rand({4, 2}, -1, 1, 16), Rand({2}, -1, 1, 17)});
  CheckLayerGradient(Reshape({-1, 2}), Rand({2, 6}, -1, 1, 8));
  CheckLayerGradient(Permute({2, 1}), Rand({2, 3, 4}, -1, 1, 9));
  CheckLayerGradient(Rescaling(2.5, 1), Rand({2, 3}, -1, 1, 10));
  CheckLayerGradient(ZeroPadding2D({1, 0, 2, 1}), Rand({1, 2, 2, 2}, -1, 1, 11));
  CheckLayerGradient(AvgPool1D(2, 1), Rand({1, 5, 2}, -1, 1, 12));
  CheckLayerGradient(GlobalAveragePooling1D(), Rand({2, 3, 2}, -1, 1, 13));
  CheckLayerGradient(ReLU({.max_value = 0.6, .negative_slope = 0.1, .threshold = 0.2}), Rand({2, 5}, -2, 2, 18));
  CheckLayerGradient(ELU(0.5), Rand({2, 5}, -2, 2, 19));
  for (const char* a : {"gelu", "swish", "mish", "softsign", "hard_sigmoid", "softplus", "elu", "celu", "hard_tanh",
                        "soft_shrink", "tanh_shrink", "log_sigmoid", "squareplus", "sparse_plus", "sparse_sigmoid",
                        "glu"}) {
    CheckLayerGradient(Activation(a), Rand({2, 4}, -2, 2, 14));
  }
}

TEST_CASE("keras layers: bad arguments and shapes name the layer and the shapes") {
  CHECK(ErrorOf([] { Reshape({5})(Input({12})); }).find("cannot reshape examples of shape [?,12] (12 values) to "
                                                         "target_shape (5)") != std::string::npos);
  CHECK(ErrorOf([] { Reshape({-1, -1}); }).find("at most one -1") != std::string::npos);
  CHECK(ErrorOf([] { Reshape({-1, 5})(Input({12})); }).find("Reshape") != std::string::npos);
  CHECK(ErrorOf([] { Permute({1, 1}); }).find("permutation of 1..2") != std::string::npos);
  CHECK(ErrorOf([] { Permute({2, 1})(Input({4})); }).find("need inputs of rank 3, got [?,4]") != std::string::npos);
  CHECK(ErrorOf([] { Concatenate()({Input({3, 2}), Input({4, 3})}); })
            .find("same shape except on axis -1, got [?,3,2], [?,4,3]") != std::string::npos);
  CHECK(ErrorOf([] { Concatenate(0)({Input({3}), Input({3})}); }).find("batch axis 0") != std::string::npos);
  CHECK(ErrorOf([] { Multiply()({Input({3}), Input({4})}); }).find("same shape, got [?,3], [?,4]") !=
        std::string::npos);
  CHECK(ErrorOf([] { Subtract()({Input({3}), Input({3}), Input({3})}); }).find("takes 2 input(s), got 3") !=
        std::string::npos);
  CHECK(ErrorOf([] { Multiply()(Input({3})); }).find("two or more") != std::string::npos);
  CHECK(ErrorOf([] { Conv1D(4, 3)(Input({28, 28, 1})); }).find("expects inputs (batch, steps, channels), got "
                                                               "[?,28,28,1]") != std::string::npos);
  CHECK(ErrorOf([] { Conv1D(4, 3, {.padding = "full"}); }).find("\"full\"") != std::string::npos);
  CHECK(ErrorOf([] { Conv1D(4, 3, {.strides = 2, .dilation_rate = 2}); }).find("cannot both") != std::string::npos);
  CHECK(ErrorOf([] { MaxPool1D()(Input({28, 28, 1})); }).find("MaxPooling1D") != std::string::npos);
  CHECK(ErrorOf([] { GlobalMaxPooling2D()(Input({28})); }).find("expects NHWC inputs") != std::string::npos);
  CHECK(ErrorOf([] { ZeroPadding2D({1, 1, -1, 1}); }).find("non-negative") != std::string::npos);
  CHECK(ErrorOf([] { Softmax(0)(Input({3})); }).find("axis 0 is out of range") != std::string::npos);
  CHECK(ErrorOf([] { LeakyReLU(-1); }).find("negative_slope") != std::string::npos);
  CHECK(ErrorOf([] { ReLU({.max_value = -1}); }).find("must be non-negative, got -1") != std::string::npos);
  CHECK(ErrorOf([] { Dense(2)(Input({})); }).find("expects inputs (batch, ..., features)") != std::string::npos);
}

TEST_CASE("keras layers: Normalization adapts per feature or over everything, as Keras") {
  // Feature 0: values 1, 3 (mean 2, population variance 1); feature 1: 10, 10 (variance 0).
  const Tensor data = T<float>({1, 10, 3, 10}, {2, 2});
  LayerPtr norm = Normalization();
  AdaptNormalization(*norm, data);
  ExpectNear(Apply(norm, {data}), T<float>({-1, 0, 1, 0}, {2, 2}));  // variance 0: divided by 1e-7, of 0
  CHECK(norm->CountParams(false) == 2 + 2 + 1);                     // mean, variance, count
  LayerPtr all = Normalization({.has_axis = false});
  AdaptNormalization(*all, data);  // mean 6, variance (25 + 16 + 9 + 16) / 4
  const double sd = std::sqrt(16.5);
  ExpectNear(Apply(all, {data}), T<float>({-5 / sd, 4 / sd, -3 / sd, 4 / sd}, {2, 2}));
  LayerPtr inverse = Normalization({.mean = T<float>({6}), .variance = T<float>({16}), .invert = true});
  ExpectNear(Apply(inverse, {T<float>({-1.25, 1}, {1, 2})}), T<float>({1, 10}, {1, 2}));
  CHECK(inverse->CountParams(false) == 0);
  LayerPtr per_row = Normalization({.axis = 1});
  AdaptNormalization(*per_row, T<float>({1, 3, 10, 20}, {1, 2, 2}));  // axis 1 of (N, 2, 2)
  ExpectNear(Apply(per_row, {T<float>({1, 3, 10, 20}, {1, 2, 2})}), T<float>({-1, 1, -1, 1}, {1, 2, 2}));
  CHECK(ErrorOf([] { Normalization()(Input({3})); }).find("call adapt(data)") != std::string::npos);
  CHECK(ErrorOf([] { AdaptNormalization(*Dense(2), T<float>({1})); }).find("not a Normalization layer") !=
        std::string::npos);
  CHECK(ErrorOf([&] { AdaptNormalization(*norm, data); }).find("before the layer is used") != std::string::npos);
}

// Keras' Conv2DTranspose by its definition: every input pixel scatters kernel * value into the
// output at (i * stride + a - pad_top, j * stride + b - pad_left), with TF's "same" padding
// (total kernel - stride, the smaller half before) or none ("valid").
std::vector<double> TransposedConvReference(const Tensor& x, const Tensor& k, int64_t stride, bool same,
                                            int64_t oh, int64_t ow) {
  const int64_t n = x.shape().dim(0), h = x.shape().dim(1), w = x.shape().dim(2), c = x.shape().dim(3);
  const int64_t kh = k.shape().dim(0), kw = k.shape().dim(1), f = k.shape().dim(2);
  const int64_t pt = same ? std::max<int64_t>(kh - stride, 0) / 2 : 0;
  const int64_t pl = same ? std::max<int64_t>(kw - stride, 0) / 2 : 0;
  std::vector<double> y(n * oh * ow * f, 0.0);
  const float* xv = x.data<float>();
  const float* kv = k.data<float>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j)
        for (int64_t a = 0; a < kh; ++a)
          for (int64_t e = 0; e < kw; ++e) {
            const int64_t r = i * stride + a - pt, q = j * stride + e - pl;
            if (r < 0 || r >= oh || q < 0 || q >= ow) continue;
            for (int64_t o = 0; o < f; ++o)
              for (int64_t ci = 0; ci < c; ++ci)
                y[((b * oh + r) * ow + q) * f + o] +=
                    xv[((b * h + i) * w + j) * c + ci] * kv[((a * kw + e) * f + o) * c + ci];
          }
  return y;
}

TEST_CASE("keras layers: Conv2DTranspose matches TensorFlow and the scatter definition") {
  std::vector<double> xs, ks;
  for (int i = 0; i < 24; ++i) xs.push_back((i % 5) / 2.0 - 1.0);
  for (int i = 0; i < 36; ++i) ks.push_back(i / 10.0 - 1.0);
  const Tensor x = T<float>(xs, {2, 2, 3, 2}), kernel = T<float>(ks, {3, 3, 2, 2}), bias = T<float>({0.5, -0.5});
  // keras.layers.Conv2DTranspose(2, 3, strides=2, padding="same") with these weights, by TensorFlow 2.21.
  const std::vector<double> tf_same_2 = {
      1.95, 0.65, 1.35, 0.05, 0.3, -0.9, 0.25, -0.65, 0.35, -0.55, 0.4, -0.6, 0.15, -1.15, -0.45, -1.75, -0.9, -2.1,
      0.85, -0.05, 0.95, 0.05, 0.4, -0.6, -1.15, -2.55, -1.95, -3.35, -3.4, -4.4, 0.65, 0.05, 2.8, 1.9, 1.25, -0.05,
      0.4, -0.7, 0.2, -0.9, 0.4, -0.4, 1.5, 0.8, 1.75, 0.75, -0.45, -1.75, 0.05, -0.85, 0.25, -0.65, 0.35, -0.55,
      0.4, -0.6, 0.9, -0.2, 0.8, -0.3, 0.65, -0.25, 0.85, -0.05, 0.95, 0.05, 0.4, -0.6, 0.3, -0.8, 0.2, -0.9, -0.15,
      -0.75, 0.65, 0.05, 2.8, 1.9, 1.25, -0.05, -0.5, -1.8, -0.65, -1.65, 0.9, 0.2, 1.5, 0.8, 1.75, 0.75, -0.45,
      -1.75, -0.9, -2.1, 0.85, -0.05};
  LayerPtr same2 = Conv2DTranspose(2, {3, 3}, {.strides = {2, 2}, .padding = "same"});
  ExpectNear(Apply(same2, {x}, {kernel, bias}), T<float>(tf_same_2, {2, 4, 6, 2}), 1e-5, 1e-5);
  // Every padding and stride against the definition; output sizes as TensorFlow reports them
  // (valid stride 1: (2, 4, 5, 2); valid stride 2: (2, 5, 7, 2); same stride 1: (2, 2, 3, 2)).
  struct Case {
    std::string padding;
    int64_t stride, oh, ow;
  };
  for (const Case& c : {Case{"valid", 1, 4, 5}, Case{"valid", 2, 5, 7}, Case{"same", 1, 2, 3}, Case{"same", 2, 4, 6}}) {
    INFO(c.padding << " stride " << c.stride);
    LayerPtr t = Conv2DTranspose(2, {3, 3}, {.strides = {c.stride, c.stride}, .padding = c.padding,
                                             .use_bias = false});
    CHECK(ShapeOf(t(Input({2, 3, 2}))) == fmt::format("[?,{},{},2]", c.oh, c.ow));
    ExpectNear(Apply(t, {x}, {kernel}),
               T<float>(TransposedConvReference(x, kernel, c.stride, c.padding == "same", c.oh, c.ow),
                        {2, c.oh, c.ow, 2}), 1e-5, 1e-5);
  }
  // A kernel smaller than the stride leaves gaps: (2, 3) -> (6, 9), as TensorFlow.
  CHECK(ShapeOf(Conv2DTranspose(1, {1, 1}, {.strides = {3, 3}})(Input({2, 3, 2}))) == "[?,6,9,1]");
  CHECK(Conv2DTranspose(4, {3, 3})->CountParams(true) == 0);  // not built yet
  LayerPtr built = Conv2DTranspose(4, {3, 3});
  built(Input({5, 5, 2}));
  CHECK(built->CountParams(true) == 3 * 3 * 4 * 2 + 4);
  CheckLayerGradient(Conv2DTranspose(2, {3, 3}, {.strides = {2, 2}, .padding = "same", .activation = "tanh"}),
                     Rand({1, 2, 2, 2}, -1, 1, 20), {Rand({3, 3, 2, 2}, -1, 1, 21), Rand({2}, -1, 1, 22)});
}

TEST_CASE("keras layers: padding, cropping and upsampling of sequences and images") {
  Sym seq = Input({10, 3}), img = Input({28, 28, 3});
  CHECK(ShapeOf(ZeroPadding1D({1, 2})(seq)) == "[?,13,3]");
  CHECK(ShapeOf(Cropping1D({1, 2})(seq)) == "[?,7,3]");
  CHECK(ShapeOf(Cropping2D({2, 2, 4, 4})(img)) == "[?,24,20,3]");  // Keras' Cropping2D docstring
  CHECK(ShapeOf(UpSampling1D(3)(seq)) == "[?,30,3]");
  CHECK(ShapeOf(UpSampling2D({2, 3})(img)) == "[?,56,84,3]");
  // Closed forms on (1, 2, 2, 1) = [[1, 2], [3, 4]] and the sequence (1, 3, 1) = [1, 2, 3].
  const Tensor square = T<float>({1, 2, 3, 4}, {1, 2, 2, 1}), steps = T<float>({1, 2, 3}, {1, 3, 1});
  ExpectNear(Apply(UpSampling2D({2, 1}), {square}), T<float>({1, 2, 1, 2, 3, 4, 3, 4}, {1, 4, 2, 1}));
  ExpectNear(Apply(UpSampling2D({1, 2}), {square}), T<float>({1, 1, 2, 2, 3, 3, 4, 4}, {1, 2, 4, 1}));
  ExpectNear(Apply(UpSampling1D(2), {steps}), T<float>({1, 1, 2, 2, 3, 3}, {1, 6, 1}));
  ExpectNear(Apply(Cropping2D({1, 0, 0, 1}), {square}), T<float>({3}, {1, 1, 1, 1}));
  ExpectNear(Apply(Cropping1D({0, 1}), {steps}), T<float>({1, 2}, {1, 2, 1}));
  ExpectNear(Apply(ZeroPadding1D({2, 0}), {steps}), T<float>({0, 0, 1, 2, 3}, {1, 5, 1}));
  CheckLayerGradient(UpSampling2D({2, 2}), Rand({2, 2, 3, 2}, -1, 1, 30));
  CheckLayerGradient(Cropping2D({1, 0, 1, 1}), Rand({1, 3, 4, 2}, -1, 1, 31));
  CheckLayerGradient(ZeroPadding1D({1, 2}), Rand({2, 3, 2}, -1, 1, 32));
  CHECK(ErrorOf([] { Cropping1D({5, 5})(Input({10, 3})); }).find("leaves nothing of [?,10,3]") != std::string::npos);
  CHECK(ErrorOf([] { Cropping2D({1, 1}); }).find("must be 4 non-negative values") != std::string::npos);
  CHECK(ErrorOf([] { UpSampling2D({2, 0}); }).find("size must be positive") != std::string::npos);
  CHECK(ErrorOf([] { UpSampling2D()(Input({10, 3})); }).find("(batch, height, width, channels)") !=
        std::string::npos);
}

TEST_CASE("keras layers: DepthwiseConv2D and SeparableConv2D match TensorFlow") {
  std::vector<double> xs, dws;
  for (int i = 0; i < 32; ++i) xs.push_back((i % 7) / 3.0 - 1.0);
  for (int i = 0; i < 36; ++i) dws.push_back(i / 18.0 - 0.5);
  const Tensor x = T<float>(xs, {1, 4, 4, 2}), dw = T<float>(dws, {3, 3, 2, 2});
  const Tensor pw = T<float>({1, -1, 0.5, 0.5, 0.25, -1, -0.5, 1, 1, 2, 0, -0.25}, {1, 1, 4, 3});
  // keras.layers.SeparableConv2D(3, 3, strides=2, padding="same", depth_multiplier=2) and
  // DepthwiseConv2D(3, depth_multiplier=2) with these weights, computed by TensorFlow 2.21.
  LayerPtr sep = SeparableConv2D(3, {3, 3}, {.strides = {2, 2}, .padding = "same", .depth_multiplier = 2});
  ExpectNear(Apply(sep, {x}, {dw, pw, T<float>({0.1, -0.1, 0.2})}),
             T<float>({4.22963, -1.285185, -0.5592594, -3.122222, -1.118518, -0.6703701, -0.4277777, 0.1037038,
                       0.2833333, -0.6777776, 0.6037036, 0.7833334},
                      {1, 2, 2, 3}),
             1e-5, 1e-5);
  LayerPtr depthwise = DepthwiseConv2D({3, 3}, {.depth_multiplier = 2});
  ExpectNear(Apply(depthwise, {x}, {dw, T<float>({0.1, -0.1, 0.2, 0.3})}),
             T<float>({2.322222, 2.122222, 0.6814814, 0.8185186, 0.2481482, 0.1222223, -0.8555555, -0.774074,
                       0.5074074, 0.3444444, 0.4962964, 0.6703703, -0.9185184, -1.137037, -0.5222222, -0.4037036},
                      {1, 2, 2, 4}),
             1e-5, 1e-5);
  CHECK(depthwise->weights()[0].name == "kernel");  // Keras 3's names
  CHECK(sep->weights()[1].name == "pointwise_kernel");
  // Keras' parameter counts on (8, 8, 16): 688 and 640.
  LayerPtr s32 = SeparableConv2D(32, {3, 3}), d2 = DepthwiseConv2D({3, 3}, {.depth_multiplier = 2});
  CHECK(ShapeOf(d2(s32(Input({8, 8, 16})))) == "[?,4,4,64]");
  CHECK(s32->CountParams(true) == 688);
  CHECK(d2->CountParams(true) == 640);
  CheckLayerGradient(SeparableConv2D(2, {2, 2}, {.activation = "relu"}), Rand({1, 3, 3, 2}, -1, 1, 40),
                     {Rand({2, 2, 2, 1}, -1, 1, 41), Rand({1, 1, 2, 2}, -1, 1, 42), Rand({2}, -1, 1, 43)});
  CHECK(ErrorOf([] { SeparableConv2D(0, {3, 3}); }).find("filters must be positive") != std::string::npos);
  CHECK(ErrorOf([] { DepthwiseConv2D({3, 3}, {.depth_multiplier = 0}); }).find("depth_multiplier") !=
        std::string::npos);
}

TEST_CASE("keras layers: LayerNormalization matches TensorFlow") {
  const Tensor x = T<float>({1, 2, 4, 0.5, -1, 3, 2, 2, 2, -3, 0, 1}, {2, 2, 3});
  // keras.layers.LayerNormalization()(x) and LayerNormalization(axis=1, epsilon=0.5)(x), by
  // TensorFlow 2.21 (gamma 1, beta 0).
  ExpectNear(Apply(LayerNormalization(), {x}),
             T<float>({-1.068702, -0.2671753, 1.335877, -0.2019934, -1.110964, 1.312957, 0, 0, 0, -1.372575, 0.3921644,
                       0.980411},
                      {2, 2, 3}),
             1e-5, 1e-5);
  ExpectNear(Apply(LayerNormalization({.axis = 1, .epsilon = 0.5}), {x}),
             T<float>({0.3333334, 0.904534, 0.5773501, -0.3333333, -0.904534, -0.5773504, 0.9622505, 0.8164966,
                       0.5773503, -0.9622504, -0.8164966, -0.5773503},
                      {2, 2, 3}),
             1e-5, 1e-5);
  LayerPtr ln = LayerNormalization();
  ln(Input({2, 3}));
  CHECK(ln->CountParams(true) == 6);  // gamma, beta: Keras' count
  LayerPtr plain = LayerNormalization({.center = false, .scale = false});
  plain(Input({3}));
  CHECK(plain->CountParams(true) == 0);
  CheckLayerGradient(LayerNormalization({.axis = 1}), Rand({2, 3, 2}, -1, 1, 50),
                     {Rand({3}, 0.5, 1.5, 51), Rand({3}, -1, 1, 52)});
  CHECK(ErrorOf([] { LayerNormalization({.axis = 0})(Input({3})); }).find("axis 0 needs a known non-batch dim") !=
        std::string::npos);
}

TEST_CASE("keras layers: PReLU, RepeatVector and Identity") {
  LayerPtr prelu = PReLU();
  CHECK(ShapeOf(prelu(Input({4, 5, 3}))) == "[?,4,5,3]");
  CHECK(prelu->CountParams(true) == 60);  // one alpha per value, as Keras
  LayerPtr shared = PReLU(Zeros(), {1, 2});
  shared(Input({4, 5, 3}));
  CHECK(shared->CountParams(true) == 3);  // Keras' shared_axes=[1, 2]: one alpha per channel
  ExpectNear(Apply(PReLU(), {T<float>({-2, 1, -4}, {1, 3})}, {T<float>({0.5, 0.5, 0.25})}),
             T<float>({-1, 1, -1}, {1, 3}));
  CheckLayerGradient(PReLU(Zeros(), {1}), Rand({2, 3, 2}, -1, 1, 60), {Rand({1, 2}, 0, 1, 61)});
  CHECK(ShapeOf(RepeatVector(3)(Input({32}))) == "[?,3,32]");  // Keras' RepeatVector docstring
  ExpectNear(Apply(RepeatVector(2), {T<float>({1, 2}, {1, 2})}), T<float>({1, 2, 1, 2}, {1, 2, 2}));
  CheckLayerGradient(RepeatVector(3), Rand({2, 2}, -1, 1, 62));
  ExpectNear(Apply(Identity(), {T<float>({1, 2}, {1, 2})}), T<float>({1, 2}, {1, 2}));
  CHECK(ErrorOf([] { RepeatVector(2)(Input({3, 4})); }).find("expects inputs (batch, features)") !=
        std::string::npos);
  CHECK(ErrorOf([] { PReLU(Zeros(), {3})(Input({4})); }).find("shared_axes 3") != std::string::npos);
}
