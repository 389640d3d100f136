// The fused activation ops of ops/nn.cc: Gelu and GeluGrad (values against TensorFlow's documented
// example and the closed forms) and SoftmaxGrad (the closed form); first and second derivatives by
// finite differences, bad inputs by name.
#include <cmath>

#include "tests/ops/op_test_util.h"

namespace weft {
namespace {

using namespace weft::test;

double GeluRef(double x, bool approximate) {
  if (approximate) return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

TEST_CASE("Gelu gives TF's documented values and the closed forms") {
  // tf.nn.gelu's docstring: x = [-3, -1, 0, 1, 3].
  const Tensor x = T<float>({-3, -1, 0, 1, 3});
  ExpectNear(RunOp("Gelu", {x})[0], T<float>({-0.00404951f, -0.15865529f, 0.f, 0.8413447f, 2.9959507f}), 1e-6, 1e-6);
  ExpectNear(RunOp("Gelu", {x}, {{"approximate", true}})[0],
             T<float>({-0.00363752f, -0.15880796f, 0.f, 0.841192f, 2.9963627f}), 1e-6, 1e-6);
  const Tensor z = Rand({3, 5}, -6, 6, 21);
  for (bool approximate : {false, true}) {
    std::vector<double> want;
    for (int64_t i = 0; i < z.num_elements(); ++i) want.push_back(GeluRef(z.data<double>()[i], approximate));
    ExpectNear(RunOp("Gelu", {z}, {{"approximate", approximate}})[0], T<double>(want, {3, 5}), 1e-14, 1e-14);
  }
  const Tensor empty = RunOp("Gelu", {T<float>({}, {0, 3})})[0];
  CHECK(empty.shape() == TensorShape({0, 3}));
}

TEST_CASE("GeluGrad is dy times the closed-form derivative") {
  const Tensor x = Rand({2, 4}, -4, 4, 24), g = Rand({2, 4}, -1, 1, 25);
  for (bool approximate : {false, true}) {
    std::vector<double> want;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const double v = x.data<double>()[i];
      double d;
      if (approximate) {
        const double k = std::sqrt(2 / M_PI), t = std::tanh(k * (v + 0.044715 * v * v * v));
        d = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * k * (1 + 3 * 0.044715 * v * v);
      } else {
        d = 0.5 * (1 + std::erf(v / std::sqrt(2.0))) + v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
      }
      want.push_back(g.data<double>()[i] * d);
    }
    ExpectNear(RunOp("GeluGrad", {g, x}, {{"approximate", approximate}})[0], T<double>(want, {2, 4}), 1e-14, 1e-14);
  }
}

TEST_CASE("Gelu and GeluGrad gradients by finite differences") {
  const Tensor x = Rand({2, 3}, -3, 3, 22), g = Rand({2, 3}, -1, 1, 23);
  for (bool approximate : {false, true}) {
    CAPTURE(approximate);
    CheckGradient("Gelu", {x}, {{"approximate", approximate}});
    CheckGradient("GeluGrad", {g, x}, {{"approximate", approximate}});
  }
}

TEST_CASE("Gelu errors name the input") {
  ExpectOpError("GeluGrad", {Rand({2, 3}), Rand({3, 2})}, {}, Code::kInvalidArgument, "shapes [2,3] and [3,2] are incompatible");
  ExpectOpError("Gelu", {T<int32_t>({1, 2})}, {}, Code::kInvalidArgument, "int32");
}

TEST_CASE("SoftmaxGrad is softmax's Jacobian-vector product, rows over the last axis") {
  const Tensor x = Rand({2, 3, 4}, -2, 2, 31), g = Rand({2, 3, 4}, -1, 1, 32);
  const Tensor y = RunOp("Softmax", {x})[0];
  std::vector<double> want(24);
  for (int64_t r = 0; r < 6; ++r) {
    const double* yr = y.data<double>() + r * 4;
    const double* gr = g.data<double>() + r * 4;
    double s = 0;
    for (int c = 0; c < 4; ++c) s += gr[c] * yr[c];
    for (int c = 0; c < 4; ++c) want[r * 4 + c] = (gr[c] - s) * yr[c];
  }
  ExpectNear(RunOp("SoftmaxGrad", {y, g})[0], T<double>(want, {2, 3, 4}), 1e-15, 1e-15);
  CheckGradient("SoftmaxGrad", {y, g});
  CheckGradient("Softmax", {x});
  ExpectOpError("SoftmaxGrad", {Rand({2, 3}), Rand({2, 4})}, {}, Code::kInvalidArgument, "[2,3]");
}

}  // namespace
}  // namespace weft
