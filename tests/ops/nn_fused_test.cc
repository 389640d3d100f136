// The fused nn ops the FuseNnOps graph pass makes (graph/passes.h): each against the chain of
// unfused ops it replaces, its gradient, and bad input.
#include <doctest/doctest.h>

#include <cmath>

#include "tests/ops/op_test_util.h"

namespace weft {
namespace {

using namespace weft::test;
using IntList = std::vector<int64_t>;

AttrMap ConvAttrs(IntList strides, std::string padding, IntList dilations, std::string activation) {
  return {{"strides", strides}, {"padding", padding}, {"dilations", dilations}, {"activation", activation}};
}
AttrMap PoolAttrs(IntList ksize, IntList strides, std::string padding) {
  return {{"ksize", ksize}, {"strides", strides}, {"padding", padding}};
}

struct ConvCase {
  IntList x, f, strides;
  std::string padding;
  IntList dilations;
};
// Direct kernels (C <= 4, with and without padding, strides, dilations, output channels that are
// and are not a multiple of the SIMD width), im2col + GEMM (C > 4) and the pointwise GEMM.
const ConvCase kCases[] = {
    {{2, 28, 28, 1}, {3, 3, 1, 32}, {1, 1}, "VALID", {1, 1}}, {{2, 9, 11, 2}, {3, 3, 2, 20}, {1, 1}, "SAME", {1, 1}},
    {{1, 12, 13, 3}, {2, 3, 3, 7}, {2, 1}, "VALID", {1, 2}},  {{2, 6, 7, 6}, {3, 3, 6, 5}, {1, 1}, "SAME", {1, 1}},
    {{2, 4, 5, 3}, {1, 1, 3, 17}, {1, 1}, "VALID", {1, 1}},
};

TEST_CASE("_FusedConv2D equals Relu(BiasAdd(Conv2D)) and BiasAdd(Conv2D)") {
  int seed = 500;
  for (const ConvCase& cc : kCases) {
    for (DType dt : {DType::kFloat32, DType::kFloat64}) {
      for (const std::string act : {"Relu", "None"}) {
        INFO("x " << TensorShape(cc.x).ToString() << " f " << TensorShape(cc.f).ToString() << " " << cc.padding
                  << " " << act << " " << DTypeName(dt));
        const Tensor x = Cast(Rand(cc.x, -1, 1, ++seed), dt), f = Cast(Rand(cc.f, -1, 1, ++seed), dt);
        const Tensor b = Cast(Rand({cc.f[3]}, -0.5, 0.5, ++seed), dt);
        const AttrMap conv = {{"strides", cc.strides}, {"padding", cc.padding}, {"dilations", cc.dilations}};
        Tensor want = RunOp("BiasAdd", {RunOp("Conv2D", {x, f}, conv)[0], b})[0];
        if (act == "Relu") want = RunOp("Relu", {want})[0];
        const double tol = dt == DType::kFloat32 ? 1e-5 : 1e-12;
        ExpectNear(RunOp("_FusedConv2D", {x, f, b}, ConvAttrs(cc.strides, cc.padding, cc.dilations, act))[0], want, tol,
                   tol);
      }
    }
  }
}

TEST_CASE("_FusedConv2D gradients") {
  for (const std::string act : {"None", "Relu"}) {
    INFO(act);
    CheckGradient("_FusedConv2D", {Rand({2, 5, 6, 2}, -1, 1, 61), Rand({3, 2, 2, 3}, -1, 1, 62), Rand({3}, -1, 1, 63)},
                  ConvAttrs({1, 1}, "SAME", {1, 1}, act));
    CheckGradient("_FusedConv2D", {Rand({1, 5, 5, 6}, -1, 1, 64), Rand({2, 2, 6, 2}, -1, 1, 65), Rand({2}, -1, 1, 66)},
                  ConvAttrs({2, 2}, "VALID", {1, 1}, act));
  }
}

TEST_CASE("_FusedConv2D rejects a bias of the wrong size and an unknown activation") {
  const Tensor x = Rand({1, 5, 5, 1}), f = Rand({3, 3, 1, 4});
  ExpectOpError("_FusedConv2D", {x, f, Rand({3})}, ConvAttrs({1, 1}, "VALID", {1, 1}, "Relu"), Code::kInvalidArgument,
                "bias");
  ExpectOpError("_FusedConv2D", {x, f, Rand({4})}, ConvAttrs({1, 1}, "VALID", {1, 1}, "Tanh"), Code::kInvalidArgument,
                "activation");
}

TEST_CASE("_MaxPoolGradRelu equals ReluGrad(MaxPoolGrad(y, p, dp), y) for a Relu output y") {
  struct PoolCase {
    IntList x, k, strides;
    std::string padding;
  };
  const PoolCase cases[] = {
      {{2, 26, 26, 32}, {2, 2}, {2, 2}, "VALID"}, {{2, 5, 5, 3}, {2, 2}, {2, 2}, "SAME"},
      {{1, 7, 7, 5}, {2, 2}, {3, 3}, "VALID"},    {{2, 6, 5, 3}, {3, 3}, {1, 2}, "SAME"},
  };
  int seed = 600;
  for (const PoolCase& pc : cases) {
    for (DType dt : {DType::kFloat32, DType::kFloat64}) {
      INFO("x " << TensorShape(pc.x).ToString() << " k " << pc.k[0] << "x" << pc.k[1] << " " << pc.padding);
      const AttrMap attrs = PoolAttrs(pc.k, pc.strides, pc.padding);
      // Mostly negative before the Relu, so whole windows are zero and their gradient must vanish.
      const Tensor y = RunOp("Relu", {Cast(Rand(pc.x, -1, 0.3, ++seed), dt)})[0];
      const Tensor p = RunOp("MaxPool", {y}, attrs)[0];
      const Tensor dp = Cast(Rand(p.shape().dims(), -1, 1, ++seed), dt);
      const Tensor want = RunOp("ReluGrad", {RunOp("MaxPoolGrad", {y, p, dp}, attrs)[0], y})[0];
      ExpectNear(RunOp("_MaxPoolGradRelu", {y, p, dp}, attrs)[0], want, 0, 0);
      double nonzero = 0;
      for (double v : V(want)) nonzero += v != 0;
      CHECK(nonzero > 0);
    }
  }
}

TEST_CASE("_FusedBatchNormRelu equals Relu(FusedBatchNorm) and _FusedBatchNormGradRelu FusedBatchNormGrad(ReluGrad)") {
  int seed = 900;
  // C = 3 (one reduction block), 17 and 16 (several, C not / a vector width); both modes.
  for (const IntList& dims : {IntList{2, 4, 5, 3}, IntList{3, 24, 24, 17}, IntList{4, 16, 16, 16}}) {
    for (DType dt : {DType::kFloat32, DType::kFloat64}) {
      for (bool training : {true, false}) {
        INFO("x " << TensorShape(dims).ToString() << " " << DTypeName(dt) << " training " << training);
        const int64_t C = dims.back();
        const Tensor x = Cast(Rand(dims, -2, 2, ++seed), dt);
        const std::vector<Tensor> in = {x, Cast(Rand({C}, 0.5, 2, ++seed), dt), Cast(Rand({C}, -1, 1, ++seed), dt),
                                        Cast(Rand({C}, -0.5, 0.5, ++seed), dt), Cast(Rand({C}, 0.5, 1.5, ++seed), dt)};
        const AttrMap attrs = {{"epsilon", 0.01}, {"is_training", training}};
        const auto bn = RunOp("FusedBatchNorm", in, attrs);
        const auto fused = RunOp("_FusedBatchNormRelu", in, attrs);
        const Tensor r = RunOp("Relu", {bn[0]})[0];
        ExpectNear(fused[0], r, 0, 0);
        ExpectNear(fused[1], bn[1], 0, 0);
        ExpectNear(fused[2], bn[2], 0, 0);
        const Tensor dr = Cast(Rand(dims, -1, 1, ++seed), dt);
        const Tensor dm = Cast(Rand({C}, -1, 1, ++seed), dt), dv = Cast(Rand({C}, -1, 1, ++seed), dt);
        const auto want = RunOp("FusedBatchNormGrad", {RunOp("ReluGrad", {dr, r})[0], x, in[1], bn[1], bn[2], dm, dv},
                                attrs);
        const auto got = RunOp("_FusedBatchNormGradRelu", {dr, r, x, in[1], bn[1], bn[2], dm, dv}, attrs);
        for (int i = 0; i < 5; ++i) ExpectNear(got[i], want[i], 0, 0);
      }
    }
  }
}

TEST_CASE("_FusedBatchNormRelu gradients") {
  // Batch-norm outputs away from zero on every element (|x - mean| well above 0 for a scale of
  // ~1): the finite differences do not straddle the Relu's kink.
  const Tensor x = T<double>({-2.0, 1.5, -1.0, 2.2, 0.9, -1.7, 2.5, -0.6, -1.4, 1.1, 0.5, -2.3}, {6, 2});
  const std::vector<Tensor> in = {x, T<double>({1.2, 0.8}), T<double>({0.3, -0.2}), T<double>({0.1, -0.1}),
                                  T<double>({1.1, 0.9})};
  CheckGradient("_FusedBatchNormRelu", in, {{"epsilon", 0.01}, {"is_training", true}}, {0, 1, 2}, 1e-5);
  CheckGradient("_FusedBatchNormRelu", in, {{"epsilon", 0.01}, {"is_training", false}}, {}, 1e-5);
}

TEST_CASE("_FusedBatchNormGradRelu checks y against x") {
  ExpectOpError("_FusedBatchNormGradRelu",
                {Rand({2, 3}), Rand({2, 4}), Rand({2, 3}), Rand({3}), Rand({3}), Rand({3}), Rand({3}), Rand({3})}, {},
                Code::kInvalidArgument, "y has shape [2,4]");
  ExpectOpError("_FusedBatchNormRelu", {Rand({1, 2, 2, 3}), Rand({3}), Rand({4}), Rand({3}), Rand({3})}, {},
                Code::kInvalidArgument, "offset must have shape [3]");
}

TEST_CASE("_MaxPoolGradRelu checks the grad shape") {
  ExpectOpError("_MaxPoolGradRelu", {Rand({1, 4, 4, 1}), Rand({1, 2, 2, 1}), Rand({1, 3, 2, 1})},
                PoolAttrs({2, 2}, {2, 2}, "VALID"), Code::kInvalidArgument, "grad");
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

AttrMap ConvPoolAttrs(IntList strides, std::string padding, std::string activation, IntList k, IntList pool_strides) {
  return {{"strides", strides},   {"padding", padding}, {"dilations", IntList{1, 1}}, {"activation", activation},
          {"ksize", k},           {"pool_strides", pool_strides}, {"pool_padding", std::string("VALID")}};
}

TEST_CASE("_FusedConv2DMaxPool equals MaxPool(_FusedConv2D) and records where each max came from") {
  struct Case {
    IntList x, f, strides;
    std::string padding;
    IntList k, pool_strides;
  };
  const Case cases[] = {
      {{2, 28, 28, 1}, {3, 3, 1, 32}, {1, 1}, "VALID", {2, 2}, {2, 2}},  // the MNIST conv layer
      {{2, 9, 11, 2}, {3, 3, 2, 20}, {1, 1}, "SAME", {2, 3}, {2, 3}},    // uneven: a remainder row / column
      {{1, 12, 13, 3}, {2, 3, 3, 7}, {2, 1}, "VALID", {2, 2}, {3, 3}},   // gaps between windows
  };
  int seed = 700;
  for (const Case& cc : cases) {
    for (DType dt : {DType::kFloat32, DType::kFloat64}) {
      for (const std::string act : {"Relu", "None"}) {
        INFO("x " << TensorShape(cc.x).ToString() << " f " << TensorShape(cc.f).ToString() << " " << act);
        const Tensor x = Cast(Rand(cc.x, -1, 1, ++seed), dt), f = Cast(Rand(cc.f, -1, 1, ++seed), dt);
        const Tensor b = Cast(Rand({cc.f[3]}, -0.5, 0.5, ++seed), dt);
        const Tensor y =
            RunOp("_FusedConv2D", {x, f, b}, ConvAttrs(cc.strides, cc.padding, {1, 1}, act))[0];
        const AttrMap pool = PoolAttrs(cc.k, cc.pool_strides, "VALID");
        const Tensor want = RunOp("MaxPool", {y}, pool)[0];
        auto got =
            RunOp("_FusedConv2DMaxPool", {x, f, b}, ConvPoolAttrs(cc.strides, cc.padding, act, cc.k, cc.pool_strides));
        // _FusedConv2D may run oneDNN's kernel (float32, onednn.h) and the fused conv-pool weft's
        // own: the same sums in another order, so equal to rounding.
        const double tol = dt == DType::kFloat32 ? 1e-5 : 1e-12;
        ExpectNear(got[0], want, tol, tol);
        // The recorded tap holds the max: y at that tap equals the pooled value (to rounding).
        const std::vector<double> yv = V(y), pv = V(got[0]), av = V(got[1]);
        const int64_t PH = want.dim(1), PW = want.dim(2), O = want.dim(3), OH = y.dim(1), OW = y.dim(2);
        int bad = 0;
        for (int64_t i = 0; i < want.num_elements(); ++i) {
          const int64_t o = i % O, pw = (i / O) % PW, ph = (i / O / PW) % PH, n = i / O / PW / PH;
          const int64_t t = static_cast<int64_t>(av[i]);
          const int64_t oh = ph * cc.pool_strides[0] + t / cc.k[1], ow = pw * cc.pool_strides[1] + t % cc.k[1];
          bad += !(t >= 0 && t < cc.k[0] * cc.k[1] &&
                   std::abs(yv[((n * OH + oh) * OW + ow) * O + o] - pv[i]) <= tol * (1 + std::abs(pv[i])));
        }
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("_FusedConv2DMaxPool gradients") {
  for (const std::string act : {"None", "Relu"}) {
    INFO(act);
    CheckGradient("_FusedConv2DMaxPool", {Rand({2, 7, 6, 2}, -1, 1, 71), Rand({2, 2, 2, 3}, -1, 1, 72),
                                          Rand({3}, -1, 1, 73)},
                  ConvPoolAttrs({1, 1}, "VALID", act, {2, 2}, {2, 2}));
  }
}

TEST_CASE("_MaxPoolGradWithArgmax equals MaxPoolGrad (and _MaxPoolGradRelu) of the same pool") {
  int seed = 800;
  for (const IntList& pool_strides : {IntList{2, 2}, IntList{3, 3}}) {
    for (const std::string act : {"Relu", "None"}) {
      INFO("pool strides " << pool_strides[0] << " " << act);
      const Tensor x = Rand({2, 9, 10, 1}, -1, 1, ++seed), f = Rand({2, 2, 1, 5}, -1, 1, ++seed);
      const Tensor b = Rand({5}, -0.5, 0.5, ++seed);
      const Tensor y = RunOp("_FusedConv2D", {x, f, b}, ConvAttrs({1, 1}, "VALID", {1, 1}, act))[0];
      auto pa = RunOp("_FusedConv2DMaxPool", {x, f, b}, ConvPoolAttrs({1, 1}, "VALID", act, {2, 2}, pool_strides));
      const Tensor dp = Rand(pa[0].shape().dims(), -1, 1, ++seed);
      const AttrMap pool = PoolAttrs({2, 2}, pool_strides, "VALID");
      const Tensor want = RunOp(act == "Relu" ? "_MaxPoolGradRelu" : "MaxPoolGrad", {y, pa[0], dp}, pool)[0];
      const AttrMap attrs = {{"ksize", IntList{2, 2}}, {"strides", pool_strides},
                             {"input_hw", IntList{y.dim(1), y.dim(2)}}, {"relu", act == "Relu"}};
      ExpectNear(RunOp("_MaxPoolGradWithArgmax", {pa[1], pa[0], dp}, attrs)[0], want, 0, 0);
    }
  }
}

TEST_CASE("_ConvPoolBackpropFilterBias equals Conv2DBackpropFilter and BiasAddGrad of _MaxPoolGradWithArgmax") {
  struct Case {
    IntList x, f, strides;
    std::string padding;
    IntList pool_strides;
  };
  const Case cases[] = {
      {{2, 28, 28, 1}, {3, 3, 1, 32}, {1, 1}, "VALID", {2, 2}},
      {{2, 9, 11, 2}, {3, 3, 2, 20}, {1, 1}, "SAME", {2, 2}},  // padding; an uncovered last row and column
      {{1, 12, 13, 3}, {2, 3, 3, 7}, {2, 1}, "VALID", {3, 3}},  // strides; gaps between windows
  };
  int seed = 900;
  for (const Case& cc : cases) {
    for (DType dt : {DType::kFloat32, DType::kFloat64}) {
      for (const std::string act : {"Relu", "None"}) {
        INFO("x " << TensorShape(cc.x).ToString() << " f " << TensorShape(cc.f).ToString() << " " << act);
        const Tensor x = Cast(Rand(cc.x, -1, 1, ++seed), dt), f = Cast(Rand(cc.f, -1, 1, ++seed), dt);
        const Tensor b = Cast(Rand({cc.f[3]}, -0.5, 0.5, ++seed), dt);
        const AttrMap fwd = ConvPoolAttrs(cc.strides, cc.padding, act, {2, 2}, cc.pool_strides);
        auto pa = RunOp("_FusedConv2DMaxPool", {x, f, b}, fwd);
        const Tensor dp = Cast(Rand(pa[0].shape().dims(), -1, 1, ++seed), dt);
        const Tensor y = RunOp("_FusedConv2D", {x, f, b}, ConvAttrs(cc.strides, cc.padding, {1, 1}, act))[0];
        const AttrMap grad = {{"ksize", IntList{2, 2}}, {"strides", cc.pool_strides},
                              {"input_hw", IntList{y.dim(1), y.dim(2)}}, {"relu", act == "Relu"}};
        const Tensor dz = RunOp("_MaxPoolGradWithArgmax", {pa[1], pa[0], dp}, grad)[0];
        const AttrMap conv = {{"strides", cc.strides}, {"padding", cc.padding}, {"dilations", IntList{1, 1}}};
        const Tensor sizes = T<int32_t>(std::vector<double>(cc.f.begin(), cc.f.end()));
        const Tensor want_df = RunOp("Conv2DBackpropFilter", {x, sizes, dz}, conv)[0];
        const Tensor want_db = RunOp("BiasAddGrad", {dz})[0];
        const AttrMap attrs = {{"strides", cc.strides},    {"padding", cc.padding},
                               {"dilations", IntList{1, 1}}, {"ksize", IntList{2, 2}},
                               {"pool_strides", cc.pool_strides}, {"relu", act == "Relu"}};
        auto got = RunOp("_ConvPoolBackpropFilterBias", {x, sizes, pa[1], pa[0], dp}, attrs);
        const double tol = dt == DType::kFloat32 ? 1e-4 : 1e-11;
        ExpectNear(got[0], want_df, tol, tol);
        ExpectNear(got[1], want_db, tol, tol);
      }
    }
  }
}

TEST_CASE("_Conv2DBackpropFilterBias equals Conv2DBackpropFilter and BiasAddGrad of the same out_backprop") {
  // kCases, then the oneDNN paths' odd shapes: batch 1, 1x1 images, channels that are not a
  // multiple of the vector width, padding beyond the image, a batch of several chunks.
  std::vector<ConvCase> cases(std::begin(kCases), std::end(kCases));
  cases.push_back({{1, 1, 1, 24}, {3, 3, 24, 8}, {1, 1}, "SAME", {1, 1}});
  cases.push_back({{3, 9, 7, 17}, {3, 3, 17, 20}, {2, 2}, "SAME", {1, 1}});
  cases.push_back({{1, 2, 2, 16}, {5, 5, 16, 16}, {1, 1}, "SAME", {1, 1}});
  cases.push_back({{9, 14, 14, 32}, {3, 3, 32, 32}, {1, 1}, "SAME", {1, 1}});
  int seed = 1200;
  for (const ConvCase& cc : cases) {
    for (DType dt : {DType::kFloat32, DType::kFloat64}) {
      INFO("x " << TensorShape(cc.x).ToString() << " f " << TensorShape(cc.f).ToString() << " " << DTypeName(dt));
      const Tensor x = Cast(Rand(cc.x, -1, 1, ++seed), dt), f = Cast(Rand(cc.f, -1, 1, ++seed), dt);
      const AttrMap conv = {{"strides", cc.strides}, {"padding", cc.padding}, {"dilations", cc.dilations}};
      const Tensor y = RunOp("Conv2D", {x, f}, conv)[0];
      const Tensor dy = Cast(Rand(y.shape().dims(), -1, 1, ++seed), dt);
      const Tensor sizes = T<int32_t>(std::vector<double>(cc.f.begin(), cc.f.end()));
      auto got = RunOp("_Conv2DBackpropFilterBias", {x, sizes, dy}, conv);
      const double tol = dt == DType::kFloat32 ? 1e-4 : 1e-11;
      ExpectNear(got[0], RunOp("Conv2DBackpropFilter", {x, sizes, dy}, conv)[0], tol, tol);
      ExpectNear(got[1], RunOp("BiasAddGrad", {dy})[0], tol, tol);
    }
  }
  const AttrMap conv = {{"strides", IntList{1, 1}}, {"padding", std::string("SAME")}, {"dilations", IntList{1, 1}}};
  ExpectOpError("_Conv2DBackpropFilterBias", {Rand({1, 4, 4, 3}), T<int32_t>({3, 3, 3, 5}), Rand({1, 4, 4, 6})}, conv,
                Code::kInvalidArgument, "out_backprop");
}

TEST_CASE("the fused conv-pool ops reject what their kernels do not support") {
  const Tensor b = Rand({4});
  ExpectOpError("_FusedConv2DMaxPool", {Rand({1, 6, 6, 5}), Rand({3, 3, 5, 4}), b},
                ConvPoolAttrs({1, 1}, "VALID", "Relu", {2, 2}, {2, 2}), Code::kInvalidArgument, "input channels");
  ExpectOpError("_FusedConv2DMaxPool", {Rand({1, 6, 6, 1}), Rand({3, 3, 1, 4}), b},
                ConvPoolAttrs({1, 1}, "VALID", "Relu", {2, 2}, {1, 1}), Code::kInvalidArgument, "do not overlap");
  const AttrMap attrs = {{"ksize", IntList{2, 2}}, {"strides", IntList{2, 2}}, {"input_hw", IntList{6, 6}},
                         {"relu", true}};
  const AttrMap bp = {{"strides", IntList{1, 1}}, {"padding", std::string("VALID")}, {"dilations", IntList{1, 1}},
                      {"ksize", IntList{2, 2}}, {"pool_strides", IntList{2, 2}}, {"relu", true}};
  ExpectOpError("_ConvPoolBackpropFilterBias",
                {Rand({1, 6, 6, 1}), T<int32_t>({3, 3, 1, 4}), T<int32_t>(std::vector<double>(8, 0.0), {1, 2, 2, 2}),
                 Rand({1, 2, 2, 2}), Rand({1, 2, 2, 2})},
                bp, Code::kInvalidArgument, "pooled shape");
  ExpectOpError("_MaxPoolGradWithArgmax",
                {T<int32_t>(std::vector<double>(8, 0.0), {1, 2, 2, 2}), Rand({1, 2, 2, 2}), Rand({1, 2, 2, 2})}, attrs,
                Code::kInvalidArgument, "pooled shape");
}

}  // namespace
}  // namespace weft
