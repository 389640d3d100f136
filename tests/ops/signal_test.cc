// FFT against a naive O(n^2) DFT in double (every length: radix 2 and Bluestein's), its inverse
// and scaling, its finite-difference gradient, and the errors bad input must give.
#include <cmath>
#include <numbers>

#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

// The DFT of re + i im along the last dim: sum_j x[j] exp(sign 2 pi i jk / n) (/ n when normalize).
std::pair<Tensor, Tensor> NaiveDft(const Tensor& re, const Tensor& im, bool inverse, bool normalize) {
  const std::vector<double> a = V(re), b = V(im);
  const int64_t n = re.dim(re.rank() - 1), rows = n ? re.num_elements() / n : 0;
  std::vector<double> yr(a.size()), yi(a.size());
  const double sign = inverse ? 1.0 : -1.0, scale = normalize ? 1.0 / static_cast<double>(n) : 1.0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < n; ++k) {
      double sr = 0, si = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double ang = sign * 2 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
        sr += a[r * n + j] * std::cos(ang) - b[r * n + j] * std::sin(ang);
        si += a[r * n + j] * std::sin(ang) + b[r * n + j] * std::cos(ang);
      }
      yr[r * n + k] = sr * scale;
      yi[r * n + k] = si * scale;
    }
  }
  return {Make(re.dtype(), yr, re.shape()), Make(re.dtype(), yi, re.shape())};
}

TEST_CASE("FFT matches the naive DFT for power-of-two and other lengths, forward and inverse") {
  for (const auto& dims : std::vector<std::vector<int64_t>>{{1}, {2}, {3}, {5}, {8}, {12}, {2, 17}, {3, 2, 64}, {2, 100}}) {
    const Tensor re = Rand(dims, -2, 2, 3), im = Rand(dims, -2, 2, 4);
    for (const bool inverse : {false, true}) {
      for (const bool normalize : {false, true}) {
        INFO("dims " << re.shape().ToString() << " inverse " << inverse << " normalize " << normalize);
        const auto out = RunOp("FFT", {re, im}, {{"inverse", inverse}, {"normalize", normalize}});
        const auto [wr, wi] = NaiveDft(re, im, inverse, normalize);
        ExpectNear(out[0], wr, 1e-10, 1e-10);
        ExpectNear(out[1], wi, 1e-10, 1e-10);
      }
    }
  }
  // float32 in, float32 out (computed in double).
  const Tensor re = Cast(Rand({4, 30}, -1, 1, 5), DType::kFloat32), im = Cast(Rand({4, 30}, -1, 1, 6), DType::kFloat32);
  const auto out = RunOp("FFT", {re, im});
  const auto [wr, wi] = NaiveDft(re, im, false, false);
  ExpectNear(out[0], wr, 1e-5, 1e-5);
  ExpectNear(out[1], wi, 1e-5, 1e-5);
  // Closed forms: the DFT of a unit impulse is all ones; of all ones, n at 0 and zeros elsewhere.
  ExpectNear(RunOp("FFT", {T<double>({1, 0, 0, 0, 0, 0, 0}), T<double>({0, 0, 0, 0, 0, 0, 0})})[0],
             T<double>({1, 1, 1, 1, 1, 1, 1}), 1e-12, 1e-12);
  ExpectNear(RunOp("FFT", {T<double>({1, 1, 1, 1, 1, 1}), T<double>({0, 0, 0, 0, 0, 0})})[0],
             T<double>({6, 0, 0, 0, 0, 0}), 1e-12, 1e-12);
  // Empty rows and an empty batch give empty outputs.
  ExpectEqual(RunOp("FFT", {T<double>({}, {3, 0}), T<double>({}, {3, 0})})[0], T<double>({}, {3, 0}));
  ExpectEqual(RunOp("FFT", {T<double>({}, {0, 4}), T<double>({}, {0, 4})})[1], T<double>({}, {0, 4}));
}

TEST_CASE("FFT's inverse with normalize undoes the forward transform") {
  const Tensor re = Rand({3, 45}, -1, 1, 8), im = Rand({3, 45}, -1, 1, 9);
  const auto fwd = RunOp("FFT", {re, im});
  const auto back = RunOp("FFT", {fwd[0], fwd[1]}, {{"inverse", true}, {"normalize", true}});
  ExpectNear(back[0], re, 1e-12, 1e-12);
  ExpectNear(back[1], im, 1e-12, 1e-12);
}

TEST_CASE("FFT's gradient matches finite differences") {
  for (const auto& dims : std::vector<std::vector<int64_t>>{{4}, {2, 5}, {1, 9}}) {
    const Tensor re = Rand(dims, -1, 1, 10), im = Rand(dims, -1, 1, 11);
    CheckGradient("FFT", {re, im});
    CheckGradient("FFT", {re, im}, {{"inverse", true}, {"normalize", true}});
    CheckGradient("FFT", {re, im}, {{"inverse", true}});
  }
}

TEST_CASE("FFT rejects bad input with the shapes and dtype") {
  ExpectOpError("FFT", {T<double>({1, 2}), T<double>({1, 2, 3})}, {}, Code::kInvalidArgument,
                "re and im must have one shape");
  ExpectOpError("FFT", {T<double>({1}, {}), T<double>({1}, {})}, {}, Code::kInvalidArgument, "rank at least 1");
  ExpectOpError("FFT", {T<int32_t>({1, 2}), T<int32_t>({1, 2})}, {}, Code::kInvalidArgument, "int32");
}

}  // namespace
}  // namespace weft::test
