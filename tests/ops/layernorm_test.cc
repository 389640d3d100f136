// LayerNorm and LayerNormGrad (ops/layernorm.cc) against a reference computed in double from the
// definition, Keras' documented example, finite differences and the closed-form gradient, and bad
// inputs.
#include <cmath>
#include <tuple>

#include "tests/ops/op_test_util.h"

namespace weft {
namespace {

using namespace weft::test;


// LayerNorm over the last axis, computed in double from the definition (two passes per row).
std::vector<Tensor> RefLayerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  const int64_t C = x.dim(x.rank() - 1), M = C == 0 ? 0 : x.num_elements() / C;
  const std::vector<double> xv = V(x), g = V(gamma), b = V(beta);
  std::vector<double> y(xv.size()), mean(M), rstd(M);
  for (int64_t m = 0; m < M; ++m) {
    double s = 0, q = 0;
    for (int64_t c = 0; c < C; ++c) s += xv[m * C + c];
    mean[m] = s / C;
    for (int64_t c = 0; c < C; ++c) q += (xv[m * C + c] - mean[m]) * (xv[m * C + c] - mean[m]);
    rstd[m] = 1 / std::sqrt(q / C + eps);
    for (int64_t c = 0; c < C; ++c) y[m * C + c] = (xv[m * C + c] - mean[m]) * rstd[m] * g[c] + b[c];
  }
  std::vector<int64_t> rows(x.shape().dims().begin(), x.shape().dims().end() - 1);
  return {Make(x.dtype(), y, x.shape()), Make(x.dtype(), mean, TensorShape(rows)), Make(x.dtype(), rstd, TensorShape(rows))};
}

TEST_CASE("LayerNorm matches the reference over the last axis") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    // Small rows, rows spanning the kernel's blocks (many rows), and values far from zero.
    for (const auto& [dims, lo, hi] : std::vector<std::tuple<std::vector<int64_t>, double, double>>{
             {{3, 5}, -2, 4}, {{4, 33, 128}, -1, 1}, {{700, 7}, 9, 11}, {{2, 3, 1}, -1, 1}}) {
      INFO(DTypeName(dt) << " x " << TensorShape(dims).ToString());
      const int64_t C = dims.back();
      const Tensor x = Cast(Rand(dims, lo, hi, 81), dt);
      const Tensor gamma = Cast(Rand({C}, 0.5, 2, 82), dt), beta = Cast(Rand({C}, -1, 1, 83), dt);
      auto out = RunOp("LayerNorm", {x, gamma, beta}, {{"epsilon", 1e-3}});
      const std::vector<Tensor> ref = RefLayerNorm(x, gamma, beta, 1e-3);
      ExpectNear(out[0], ref[0], 1e-4, 1e-4);
      ExpectNear(out[1], ref[1], 1e-5, 1e-5);
      ExpectNear(out[2], ref[2], 1e-4, 1e-4);
    }
  }
  // Keras' documented example: LayerNormalization of [[0, 10], [20, 30], ...] rows gives -1, 1
  // (mean 5, variance 25): (x - 5) / sqrt(25 + eps).
  auto out = RunOp("LayerNorm", {T<double>({0, 10, 20, 30}, {2, 2}), T<double>({1, 1}), T<double>({0, 0})});
  const double a = 5 / std::sqrt(25.001);
  ExpectNear(out[0], T<double>({-a, a, -a, a}, {2, 2}));
  // Empty batch: empty outputs.
  auto empty = RunOp("LayerNorm", {T<float>({}, {0, 4}), T<float>({1, 1, 1, 1}), T<float>({0, 0, 0, 0})});
  CHECK(empty[0].shape() == TensorShape({0, 4}));
  CHECK(empty[1].shape() == TensorShape({0}));
}

TEST_CASE("LayerNorm gradient and LayerNormGrad against finite differences") {
  const Tensor x = Rand({3, 2, 5}, -1, 2, 91);
  const std::vector<Tensor> in = {x, Rand({5}, 0.5, 2, 92), Rand({5}, -1, 1, 93)};
  CheckGradient("LayerNorm", in, {{"epsilon", 0.01}}, {0, 1, 2}, 1e-5);
  // The grad op's outputs as the derivatives of sum(y * w): checked against the forward op's
  // finite differences by CheckGradient above; here the grad op's own bad inputs.
  ExpectOpError("LayerNormGrad", {Rand({2, 3}), Rand({2, 4}), Rand({4}), Rand({2}), Rand({2})}, {},
                Code::kInvalidArgument, "dy has shape");
  ExpectOpError("LayerNormGrad", {Rand({2, 4}), Rand({2, 4}), Rand({4}), Rand({3}), Rand({2})}, {},
                Code::kInvalidArgument, "without its last dim");
  // LayerNormGrad's outputs against the closed form in double, at the statistics LayerNorm gives.
  const Tensor dy = Rand({3, 4}, -1, 1, 94), x2 = Rand({3, 4}, -1, 2, 95), gamma = Rand({4}, 0.5, 2, 96);
  const std::vector<Tensor> ref = RefLayerNorm(x2, gamma, Rand({4}), 1e-3);
  const std::vector<double> d = V(dy), xv = V(x2), gv = V(gamma), mu = V(ref[1]), rs = V(ref[2]);
  std::vector<double> dx(12), dgamma(4, 0.0), dbeta(4, 0.0);
  for (int r = 0; r < 3; ++r) {
    double sg = 0, sgx = 0;
    for (int c = 0; c < 4; ++c) {
      const double xhat = (xv[r * 4 + c] - mu[r]) * rs[r];
      sg += d[r * 4 + c] * gv[c];
      sgx += d[r * 4 + c] * gv[c] * xhat;
      dbeta[c] += d[r * 4 + c];
      dgamma[c] += d[r * 4 + c] * xhat;
    }
    for (int c = 0; c < 4; ++c) {
      const double xhat = (xv[r * 4 + c] - mu[r]) * rs[r];
      dx[r * 4 + c] = rs[r] * (d[r * 4 + c] * gv[c] - sg / 4 - xhat * sgx / 4);
    }
  }
  auto g = RunOp("LayerNormGrad", {dy, x2, gamma, ref[1], ref[2]});
  ExpectNear(g[0], Make(DType::kFloat64, dx, TensorShape({3, 4})), 1e-9, 1e-9);
  ExpectNear(g[1], Make(DType::kFloat64, dgamma, TensorShape({4})), 1e-9, 1e-9);
  ExpectNear(g[2], Make(DType::kFloat64, dbeta, TensorShape({4})), 1e-9, 1e-9);
}

TEST_CASE("LayerNorm errors name the mismatch") {
  ExpectOpError("LayerNorm", {Rand({2, 3}), Rand({4}), Rand({3})}, {}, Code::kInvalidArgument, "gamma must have shape [3]");
  ExpectOpError("LayerNorm", {Rand({2, 3}), Rand({3}), Rand({2})}, {}, Code::kInvalidArgument, "beta must have shape [3]");
  ExpectOpError("LayerNorm", {T<double>({1.0}, {}), Rand({1}), Rand({1})}, {}, Code::kInvalidArgument, "rank at least 1");
}

}  // namespace
}  // namespace weft
