// NaN propagates as in TensorFlow and NumPy (issue 17, finding 4): a NaN anywhere in what Max,
// Min, Maximum, Minimum, MaxPool or Relu look at makes their result NaN (np.max, np.maximum,
// TF's reduce_max and nn.max_pool2d), and ArgMax / ArgMin return the first NaN's index
// (np.argmax). Every case puts a NaN at every position in turn: the kernels used to keep or drop
// it by position (reduce_max([nan, 1, 3]) was 3, [1, 3, nan] gave nan). The references are naive
// loops of numpy's rule; tests/cuda/ops/math_test.cc compares the GPU kernels with these on
// NaN inputs where a GPU exists.
#include <cmath>
#include <limits>

#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// numpy's max/min of a slice: NaN when any element is NaN.
double NanMax(const std::vector<double>& v, bool is_max) {
  double best = v[0];
  for (double x : v) {
    if (std::isnan(x)) return kNaN;
    best = is_max ? std::max(best, x) : std::min(best, x);
  }
  return best;
}

// np.argmax / np.argmin: the first NaN's index, else the first extreme's.
int64_t NanArg(const std::vector<double>& v, bool is_max) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) return static_cast<int64_t>(i);
  }
  size_t at = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (is_max ? v[i] > v[at] : v[i] < v[at]) at = i;
  }
  return static_cast<int64_t>(at);
}

const std::vector<double> kBase = {1, 3, -2, 3, 0.5, -7};  // a repeated max, a min at the end

TEST_CASE("Max and Min over all axes propagate a NaN at every position (float32, float64)") {
  for (size_t p = 0; p < kBase.size(); ++p) {
    std::vector<double> v = kBase;
    v[p] = kNaN;
    for (bool is_max : {true, false}) {
      const char* op = is_max ? "Max" : "Min";
      CAPTURE(op);
      CAPTURE(p);
      ExpectNear(RunOp(op, {T<float>(v)})[0], T<float>({NanMax(v, is_max)}, {}));
      ExpectNear(RunOp(op, {T<double>(v, {2, 3})})[0], T<double>({NanMax(v, is_max)}, {}));
      // Every path of the kernel: the [P, R] inner and [R, S] outer reductions too.
      const std::vector<double> rows = {NanMax({v[0], v[1], v[2]}, is_max), NanMax({v[3], v[4], v[5]}, is_max)};
      const std::vector<double> cols = {NanMax({v[0], v[3]}, is_max), NanMax({v[1], v[4]}, is_max),
                                        NanMax({v[2], v[5]}, is_max)};
      ExpectNear(RunOp(op, {T<float>(v, {2, 3})}, {{"axis", std::vector<int64_t>{1}}})[0], T<float>(rows));
      ExpectNear(RunOp(op, {T<float>(v, {2, 3})}, {{"axis", std::vector<int64_t>{0}}})[0], T<float>(cols));
    }
  }
}

TEST_CASE("Max over a long vector keeps a NaN wherever it is (the vectorized and threaded paths)") {
  constexpr int64_t n = 4099;  // not a multiple of any packet size
  for (int64_t p : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{2048}, n - 1}) {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 37) % 101);
    v[p] = kNaN;
    CAPTURE(p);
    ExpectNear(RunOp("Max", {T<float>(v)})[0], T<float>({kNaN}, {}));
    ExpectNear(RunOp("Min", {T<double>(v)})[0], T<double>({kNaN}, {}));
  }
}

TEST_CASE("ArgMax and ArgMin return the first NaN's index, as np.argmax") {
  for (size_t p = 0; p < kBase.size(); ++p) {
    std::vector<double> v = kBase;
    v[p] = kNaN;
    for (bool is_max : {true, false}) {
      const char* op = is_max ? "ArgMax" : "ArgMin";
      CAPTURE(op);
      CAPTURE(p);
      ExpectEqual(RunOp(op, {T<float>(v)}, {{"axis", int64_t{0}}})[0],
                  T<int64_t>({static_cast<double>(NanArg(v, is_max))}, {}));
      const std::vector<double> rows = {static_cast<double>(NanArg({v[0], v[1], v[2]}, is_max)),
                                        static_cast<double>(NanArg({v[3], v[4], v[5]}, is_max))};
      ExpectEqual(RunOp(op, {T<double>(v, {2, 3})}, {{"axis", int64_t{1}}})[0], T<int64_t>(rows));
    }
  }
  // Two NaNs: the first one's index.
  ExpectEqual(RunOp("ArgMax", {T<float>({1, kNaN, 5, kNaN})}, {{"axis", int64_t{0}}})[0], T<int64_t>({1}, {}));
}

TEST_CASE("Maximum and Minimum are NaN where either operand is NaN, as np.maximum") {
  const std::vector<double> a = {kNaN, 1, kNaN, -1, 2};
  const std::vector<double> b = {1, kNaN, kNaN, 5, -3};
  for (bool is_max : {true, false}) {
    const char* op = is_max ? "Maximum" : "Minimum";
    CAPTURE(op);
    std::vector<double> want;
    for (size_t i = 0; i < a.size(); ++i) want.push_back(NanMax({a[i], b[i]}, is_max));
    ExpectNear(RunOp(op, {T<float>(a), T<float>(b)})[0], T<float>(want));
    ExpectNear(RunOp(op, {T<double>(b), T<double>(a)})[0], T<double>(want));
    // Broadcast scalar paths: max(x, NaN) and max(NaN, x) are NaN everywhere.
    ExpectNear(RunOp(op, {T<float>({1, 2, 3}), T<float>({kNaN}, {})})[0], T<float>({kNaN, kNaN, kNaN}));
    ExpectNear(RunOp(op, {T<float>({kNaN}, {}), T<float>({1, 2, 3})})[0], T<float>({kNaN, kNaN, kNaN}));
  }
}

TEST_CASE("Relu and Relu6 of NaN are NaN, as TF's relu") {
  ExpectNear(RunOp("Relu", {T<float>({kNaN, -1, 2})})[0], T<float>({kNaN, 0, 2}));
  ExpectNear(RunOp("Relu6", {T<double>({kNaN, -1, 7})})[0], T<double>({kNaN, 0, 6}));
}

// A 4x4 image of `channels` channels (channel c = value + c) with a NaN at pixel `p` of channel 0.
Tensor ImageWithNaN(int64_t p, int64_t channels, DType dt) {
  std::vector<double> v;
  for (int64_t i = 0; i < 16; ++i) {
    for (int64_t c = 0; c < channels; ++c) v.push_back(i == p && c == 0 ? kNaN : static_cast<double>((i * 7) % 5 + c));
  }
  return dt == DType::kFloat32 ? T<float>(v, {1, 4, 4, channels}) : T<double>(v, {1, 4, 4, channels});
}

// numpy's max over the 2x2 windows (stride s, VALID) of ImageWithNaN's channel `c`.
std::vector<double> PoolReference(const Tensor& x, int64_t channels, int64_t stride) {
  std::vector<double> out;
  for (int64_t oh = 0; oh + 2 <= 4; oh += stride) {
    for (int64_t ow = 0; ow + 2 <= 4; ow += stride) {
      for (int64_t c = 0; c < channels; ++c) {
        std::vector<double> w;
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) w.push_back(x.ElementAsDouble(((oh + i) * 4 + ow + j) * channels + c));
        out.push_back(NanMax(w, true));
      }
    }
  }
  return out;
}

TEST_CASE("MaxPool propagates a NaN at every pixel; MaxPoolGrad gives each window's gradient to one tap") {
  // 9 channels: one packet of 8 floats (or 4 doubles) plus a scalar tail, both paths.
  for (int64_t channels : {int64_t{1}, int64_t{9}}) {
    for (int64_t stride : {int64_t{1}, int64_t{2}}) {  // overlapping and non-overlapping windows
      for (int64_t p = 0; p < 16; ++p) {
        CAPTURE(channels);
        CAPTURE(stride);
        CAPTURE(p);
        const int64_t out = stride == 1 ? 3 : 2;
        const AttrMap attrs = {{"ksize", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{stride, stride}}};
        const Tensor x = ImageWithNaN(p, channels, DType::kFloat32);
        const Tensor y = RunOp("MaxPool", {x}, attrs)[0];
        ExpectNear(y, T<float>(PoolReference(x, channels, stride), {1, out, out, channels}));
        // The gradient: finite, and each window's dy (1) lands on exactly one of its taps, so
        // dx sums to the number of windows per channel.
        const Tensor dy = T<float>(std::vector<double>(out * out * channels, 1.0), {1, out, out, channels});
        for (const char* grad : {"MaxPoolGrad", "_MaxPoolGradRelu"}) {
          const Tensor dx = RunOp(grad, {x, y, dy}, attrs)[0];
          double sum = 0;
          for (int64_t i = 0; i < dx.num_elements(); ++i) {
            REQUIRE(std::isfinite(dx.ElementAsDouble(i)));
            sum += dx.ElementAsDouble(i);
          }
          if (std::string(grad) == "MaxPoolGrad") CHECK(sum == static_cast<double>(out * out * channels));
        }
      }
    }
  }
}

TEST_CASE("_FusedConv2DMaxPool propagates a NaN of its convolution into the pooled value") {
  // A 1x2 filter [1, 0.5], zero bias, VALID: conv[h][w] = x[h][w] + 0.5 x[h][w+1] (4x3), then
  // the 2x2 pool with stride 2 (2x1) of numpy's max. A NaN input makes one or two conv values NaN.
  const AttrMap attrs = {{"ksize", std::vector<int64_t>{2, 2}}, {"pool_strides", std::vector<int64_t>{2, 2}}};
  for (int64_t p = 0; p < 16; ++p) {
    CAPTURE(p);
    const Tensor x = ImageWithNaN(p, 1, DType::kFloat64);
    auto conv = [&](int64_t h, int64_t w) { return x.ElementAsDouble(h * 4 + w) + 0.5 * x.ElementAsDouble(h * 4 + w + 1); };
    std::vector<double> want;
    for (int64_t ph = 0; ph < 2; ++ph) {
      want.push_back(NanMax({conv(2 * ph, 0), conv(2 * ph, 1), conv(2 * ph + 1, 0), conv(2 * ph + 1, 1)}, true));
    }
    const auto out = RunOp("_FusedConv2DMaxPool", {x, T<double>({1, 0.5}, {1, 2, 1, 1}), T<double>({0})}, attrs);
    ExpectNear(out[0], T<double>(want, {1, 2, 1, 1}));
  }
}

TEST_CASE("TopK ranks NaN above every number (np.sort puts NaN last, so first in descending order)") {
  // A plain `>` is no strict weak order once a NaN is in the row: partial_sort was undefined.
  const auto out = RunOp("TopK", {T<float>({1, kNaN, 3, kNaN, -2})}, {{"k", int64_t{4}}});
  ExpectNear(out[0], T<float>({kNaN, kNaN, 3, 1}));
  ExpectEqual(out[1], T<int32_t>({1, 3, 2, 0}));
}

}  // namespace
}  // namespace weft::test
