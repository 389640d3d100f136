// The nn ops against naive references (direct loops), their gradients by finite differences, and
// bad inputs. The references compute padding from TensorFlow's definition independently of
// ops/kernels/cpu/nn_kernels.h, and a hand-worked example pins the SAME convention.
#include <algorithm>
#include <cmath>
#include <limits>

#include "graph/gradients.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "tests/ops/op_test_util.h"

namespace weft {
namespace {

using namespace weft::test;
using IntList = std::vector<int64_t>;


AttrMap ConvAttrs(IntList strides, std::string padding, IntList dilations = {1, 1}) {
  return {{"strides", strides}, {"padding", padding}, {"dilations", dilations}};
}
AttrMap PoolAttrs(IntList ksize, IntList strides, std::string padding) {
  return {{"ksize", ksize}, {"strides", strides}, {"padding", padding}};
}
Tensor Dims(const TensorShape& s) {
  std::vector<double> d(s.dims().begin(), s.dims().end());
  return T<int32_t>(d);
}

// TF's definition: VALID keeps windows inside the input; SAME gives ceil(in / stride) outputs and
// pads (total) so the last window fits, the smaller half before.
struct Pad {
  int64_t out, before;
};
Pad RefPad(int64_t in, int64_t k, int64_t stride, int64_t dilation, const std::string& padding) {
  const int64_t ke = (k - 1) * dilation + 1;
  if (padding == "VALID") return {in >= ke ? (in - ke) / stride + 1 : 0, 0};
  const int64_t out = (in + stride - 1) / stride;
  return {out, std::max<int64_t>((out - 1) * stride + ke - in, 0) / 2};
}

// Naive conv over NHWC: y = conv(x, f) and, for a given dy, dx and df by scattering through the
// same loops. depthwise: f is [KH,KW,C,M] and output channel c*M+m reads input channel c.
struct ConvRef {
  Tensor y, dx, df;
};
ConvRef RefConv(const Tensor& x, const Tensor& f, const Tensor* dy, IntList st, const std::string& padding,
                IntList dil, bool depthwise) {
  const int64_t N = x.dim(0), H = x.dim(1), W = x.dim(2), C = x.dim(3);
  const int64_t KH = f.dim(0), KW = f.dim(1), X = f.dim(3);
  const Pad ph = RefPad(H, KH, st[0], dil[0], padding), pw = RefPad(W, KW, st[1], dil[1], padding);
  const int64_t O = depthwise ? C * X : X;
  const std::vector<double> xv = V(x), fv = V(f), dyv = dy ? V(*dy) : std::vector<double>();
  std::vector<double> y(N * ph.out * pw.out * O, 0.0), dx(xv.size(), 0.0), df(fv.size(), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < ph.out; ++oh)
      for (int64_t ow = 0; ow < pw.out; ++ow)
        for (int64_t o = 0; o < O; ++o) {
          const int64_t yi = ((n * ph.out + oh) * pw.out + ow) * O + o;
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              const int64_t ih = oh * st[0] - ph.before + kh * dil[0];
              const int64_t iw = ow * st[1] - pw.before + kw * dil[1];
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              for (int64_t c = 0; c < C; ++c) {
                if (depthwise && c != o / X) continue;
                const int64_t xi = ((n * H + ih) * W + iw) * C + c;
                const int64_t fi = depthwise ? ((kh * KW + kw) * C + c) * X + o % X : ((kh * KW + kw) * C + c) * O + o;
                y[yi] += xv[xi] * fv[fi];
                if (dy) {
                  dx[xi] += dyv[yi] * fv[fi];
                  df[fi] += dyv[yi] * xv[xi];
                }
              }
            }
        }
  return {Make(x.dtype(), y, TensorShape({N, ph.out, pw.out, O})), Make(x.dtype(), dx, x.shape()),
          Make(x.dtype(), df, f.shape())};
}

// Naive pooling; for a given dy also dx (max: to the first max of each window; avg: evenly
// over the in-bounds elements).
ConvRef RefPool(const Tensor& x, const Tensor* dy, IntList k, IntList st, const std::string& padding, bool max) {
  const int64_t N = x.dim(0), H = x.dim(1), W = x.dim(2), C = x.dim(3);
  const Pad ph = RefPad(H, k[0], st[0], 1, padding), pw = RefPad(W, k[1], st[1], 1, padding);
  const std::vector<double> xv = V(x), dyv = dy ? V(*dy) : std::vector<double>();
  std::vector<double> y(N * ph.out * pw.out * C), dx(xv.size(), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < ph.out; ++oh)
      for (int64_t ow = 0; ow < pw.out; ++ow)
        for (int64_t c = 0; c < C; ++c) {
          std::vector<int64_t> in_window;
          for (int64_t kh = 0; kh < k[0]; ++kh)
            for (int64_t kw = 0; kw < k[1]; ++kw) {
              const int64_t ih = oh * st[0] - ph.before + kh, iw = ow * st[1] - pw.before + kw;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W) in_window.push_back(((n * H + ih) * W + iw) * C + c);
            }
          const int64_t yi = ((n * ph.out + oh) * pw.out + ow) * C + c;
          if (max) {
            int64_t best = in_window[0];
            for (int64_t i : in_window) if (xv[i] > xv[best]) best = i;
            y[yi] = xv[best];
            if (dy) dx[best] += dyv[yi];
          } else {
            double sum = 0;
            for (int64_t i : in_window) sum += xv[i];
            y[yi] = sum / in_window.size();
            if (dy) for (int64_t i : in_window) dx[i] += dyv[yi] / in_window.size();
          }
        }
  return {Make(x.dtype(), y, TensorShape({N, ph.out, pw.out, C})), Make(x.dtype(), dx, x.shape()), Tensor()};
}

// Distinct values (a shuffled ramp), so max pooling has no ties and finite differences stay on
// one side of every max.
Tensor Ramp(IntList dims, uint64_t seed) {
  const Tensor r = Rand(dims, 0, 1, seed);
  std::vector<double> v = V(r);
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  for (size_t rank = 0; rank < order.size(); ++rank) v[order[rank]] = 0.1 * static_cast<double>(rank) - 1.0;
  return T<double>(v, dims);
}

// ---------------------------------------------------------------- activations

double RefAct(const std::string& op, double x, double alpha) {
  if (op == "Relu") return std::max(x, 0.0);
  if (op == "Relu6") return std::min(std::max(x, 0.0), 6.0);
  if (op == "LeakyRelu") return x > 0 ? x : alpha * x;
  if (op == "Elu") return x > 0 ? x : std::expm1(x);
  if (op == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (op == "Tanh") return std::tanh(x);
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));  // Softplus
}
const char* kActivations[] = {"Relu", "Relu6", "LeakyRelu", "Elu", "Sigmoid", "Tanh", "Softplus"};

TEST_CASE("activations match the reference in float32 and float64, including extreme inputs") {
  const std::vector<double> xs = {-100, -7, -1.5, -0.25, 0, 0.3, 2, 5.9, 6, 6.5, 40, 100};
  for (const char* op : kActivations) {
    for (DType dt : {DType::kFloat32, DType::kFloat64}) {
      INFO(op << " " << DTypeName(dt));
      const AttrMap attrs = std::string(op) == "LeakyRelu" ? AttrMap{{"alpha", 0.1}} : AttrMap{};
      std::vector<double> want;
      for (double x : xs) want.push_back(RefAct(op, x, 0.1));
      ExpectNear(RunOp(op, {Make(dt, xs, TensorShape({3, 4}))}, attrs)[0], Make(dt, want, TensorShape({3, 4})), 1e-6,
                 1e-6);
      ExpectNear(RunOp(op, {Make(dt, {}, TensorShape({0, 4}))}, attrs)[0], Make(dt, {}, TensorShape({0, 4})));
    }
  }
}

TEST_CASE("LeakyRelu uses its default alpha 0.2") {
  ExpectNear(RunOp("LeakyRelu", {T<float>({-2, 3})})[0], T<float>({-0.4, 3}));
}

TEST_CASE("activation gradients") {
  for (const char* op : kActivations) {
    INFO(op);
    // Values away from the kinks at 0 and 6.
    Tensor x = Rand({2, 3, 4}, 0.05, 1.0, 7);
    std::vector<double> v = V(x);
    for (size_t i = 0; i < v.size(); ++i) v[i] = (i % 3 == 0) ? -3 * v[i] : (i % 3 == 1 ? v[i] : 5.5 + v[i]);
    CheckGradient(op, {T<double>(v, {2, 3, 4})}, std::string(op) == "LeakyRelu" ? AttrMap{{"alpha", 0.3}} : AttrMap{});
  }
}

TEST_CASE("activation gradient ops compute TF's formulas and have second derivatives") {
  const Tensor g = T<double>({0.5, -1, 2, 3});
  const Tensor x = T<double>({-1, 0.5, 3, 7});
  ExpectNear(RunOp("ReluGrad", {g, x})[0], T<double>({0, -1, 2, 3}));
  ExpectNear(RunOp("Relu6Grad", {g, x})[0], T<double>({0, -1, 2, 0}));
  ExpectNear(RunOp("LeakyReluGrad", {g, x}, {{"alpha", 0.1}})[0], T<double>({0.05, -1, 2, 3}));
  const Tensor y = T<double>({-0.5, 0.25, 0.5, 0.9});
  ExpectNear(RunOp("EluGrad", {g, y})[0], T<double>({0.25, -1, 2, 3}));
  ExpectNear(RunOp("SigmoidGrad", {y, g})[0], T<double>({0.5 * -0.5 * 1.5, -0.25 * 0.75, 2 * 0.25, 3 * 0.9 * 0.1}));
  ExpectNear(RunOp("TanhGrad", {y, g})[0], T<double>({0.5 * 0.75, -(1 - 0.0625), 2 * 0.75, 3 * (1 - 0.81)}));
  std::vector<double> sp;
  for (int i = 0; i < 4; ++i) sp.push_back(V(g)[i] / (1 + std::exp(-V(x)[i])));
  ExpectNear(RunOp("SoftplusGrad", {g, x})[0], T<double>(sp));
  ExpectOpError("ReluGrad", {T<double>({1, 2}), T<double>({1, 2, 3})}, {}, Code::kInvalidArgument, "[3]");

  const Tensor a = Rand({2, 3}, -1, 1, 3), b = Rand({2, 3}, 0.1, 0.9, 4);
  CheckGradient("SigmoidGrad", {b, a});
  CheckGradient("TanhGrad", {b, a});
  CheckGradient("SoftplusGrad", {a, b});
  CheckGradient("EluGrad", {a, T<double>({-0.5, 0.3, -0.2, 0.7, 1.5, -0.9}, {2, 3})});
  CheckGradient("ReluGrad", {a, b}, {}, {0});
  CheckGradient("LeakyReluGrad", {a, Rand({2, 3}, -1, 1, 5)}, {{"alpha", 0.2}}, {0});
}

// ---------------------------------------------------------------- BiasAdd

TEST_CASE("BiasAdd adds along the last axis; BiasAddGrad sums the rest") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const Tensor x = Cast(Rand({2, 3, 2, 4}), dt), b = Cast(Rand({4}, -1, 1, 2), dt);
    std::vector<double> want = V(x), db(4, 0.0);
    for (size_t i = 0; i < want.size(); ++i) {
      want[i] += V(b)[i % 4];
      db[i % 4] += V(x)[i];
    }
    ExpectNear(RunOp("BiasAdd", {x, b})[0], Make(dt, want, x.shape()));
    ExpectNear(RunOp("BiasAddGrad", {x})[0], Make(dt, db, TensorShape({4})), 1e-5);
  }
  ExpectNear(RunOp("BiasAdd", {T<float>({}, {0, 3}), T<float>({1, 2, 3})})[0], T<float>({}, {0, 3}));
  ExpectNear(RunOp("BiasAddGrad", {T<float>({}, {0, 3})})[0], T<float>({0, 0, 0}));
  CheckGradient("BiasAdd", {Rand({3, 4}), Rand({4}, -1, 1, 2)});
  CheckGradient("BiasAddGrad", {Rand({2, 2, 3})});
  ExpectOpError("BiasAdd", {Rand({2, 3}), Rand({4})}, {}, Code::kInvalidArgument, "x [2,3] vs bias [4]");
  ExpectOpError("BiasAdd", {Rand({2, 3}), Rand({1, 3})}, {}, Code::kInvalidArgument, "rank 1");
}

// ---------------------------------------------------------------- softmax and losses

std::vector<double> RefLogSoftmaxRows(const std::vector<double>& z, int64_t C) {
  std::vector<double> out(z.size());
  for (size_t r = 0; r * C < z.size(); ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < C; ++c) m = std::max(m, z[r * C + c]);
    for (int64_t c = 0; c < C; ++c) s += std::exp(z[r * C + c] - m);
    for (int64_t c = 0; c < C; ++c) out[r * C + c] = z[r * C + c] - m - std::log(s);
  }
  return out;
}

TEST_CASE("Softmax and LogSoftmax over the last axis are stable for large logits") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const std::vector<double> z = {1, 2, 3, 1000, 1001, 999, -1000, 0, 5, 0.5, 0.5, 0.5};
    const std::vector<double> ls = RefLogSoftmaxRows(z, 3);
    std::vector<double> sm;
    for (double v : ls) sm.push_back(std::exp(v));
    ExpectNear(RunOp("Softmax", {Make(dt, z, TensorShape({2, 2, 3}))})[0], Make(dt, sm, TensorShape({2, 2, 3})));
    ExpectNear(RunOp("LogSoftmax", {Make(dt, z, TensorShape({4, 3}))})[0], Make(dt, ls, TensorShape({4, 3})), 1e-4);
    ExpectNear(RunOp("Softmax", {Make(dt, {}, TensorShape({0, 3}))})[0], Make(dt, {}, TensorShape({0, 3})));
  }
  ExpectNear(RunOp("Softmax", {T<double>({0, std::log(3.0)})})[0], T<double>({0.25, 0.75}));
  CheckGradient("Softmax", {Rand({3, 4})});
  CheckGradient("LogSoftmax", {Rand({2, 2, 5})});
  ExpectOpError("Softmax", {T<double>(std::vector<double>{2.0}, std::vector<int64_t>{})}, {}, Code::kInvalidArgument,
                "rank at least 1");
}

TEST_CASE("SoftmaxCrossEntropyWithLogits: loss, backprop and gradients of both outputs") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const Tensor z = Cast(Rand({3, 5}, -3, 3, 11), dt);
    Tensor l = Rand({3, 5}, 0, 1, 12);
    std::vector<double> lv = V(l);
    for (int r = 0; r < 3; ++r) {  // rows of a distribution
      double s = 0;
      for (int c = 0; c < 5; ++c) s += lv[r * 5 + c];
      for (int c = 0; c < 5; ++c) lv[r * 5 + c] /= s;
    }
    const std::vector<double> ls = RefLogSoftmaxRows(V(z), 5);
    std::vector<double> loss(3, 0.0), bp(15);
    for (int i = 0; i < 15; ++i) {
      loss[i / 5] -= lv[i] * ls[i];
      bp[i] = std::exp(ls[i]) - lv[i];
    }
    auto out = RunOp("SoftmaxCrossEntropyWithLogits", {z, Make(dt, lv, TensorShape({3, 5}))});
    ExpectNear(out[0], Make(dt, loss, TensorShape({3})));
    ExpectNear(out[1], Make(dt, bp, TensorShape({3, 5})));
  }
  // Huge logits stay finite.
  auto big = RunOp("SoftmaxCrossEntropyWithLogits", {T<float>({1000, 0}, {1, 2}), T<float>({0, 1}, {1, 2})});
  ExpectNear(big[0], T<float>({1000}));
  // Rows of labels are distributions (backprop = softmax - labels assumes that, as in TF).
  CheckGradient("SoftmaxCrossEntropyWithLogits",
                {Rand({2, 4}), T<double>({0.1, 0.2, 0.3, 0.4, 0.5, 0, 0.25, 0.25}, {2, 4})});
  ExpectOpError("SoftmaxCrossEntropyWithLogits", {Rand({2, 4}), Rand({2, 3})}, {}, Code::kInvalidArgument,
                "logits [2,4] vs labels [2,3]");
  ExpectOpError("SoftmaxCrossEntropyWithLogits", {Rand({2, 4, 1}), Rand({2, 4, 1})}, {}, Code::kInvalidArgument,
                "rank 2");
}

TEST_CASE("SparseSoftmaxCrossEntropyWithLogits with int32 and int64 labels") {
  const Tensor z = Rand({4, 3}, -2, 2, 21);
  const std::vector<double> ls = RefLogSoftmaxRows(V(z), 3);
  const std::vector<double> labels = {2, 0, 1, 2};
  std::vector<double> loss, bp;
  for (int r = 0; r < 4; ++r) {
    loss.push_back(-ls[r * 3 + static_cast<int>(labels[r])]);
    for (int c = 0; c < 3; ++c) bp.push_back(std::exp(ls[r * 3 + c]) - (c == labels[r] ? 1 : 0));
  }
  for (const Tensor& lab : {T<int32_t>(labels), T<int64_t>(labels)}) {
    auto out = RunOp("SparseSoftmaxCrossEntropyWithLogits", {z, lab});
    ExpectNear(out[0], T<double>(loss));
    ExpectNear(out[1], T<double>(bp, {4, 3}));
    auto out32 = RunOp("SparseSoftmaxCrossEntropyWithLogits", {Cast(z, DType::kFloat32), lab});
    ExpectNear(out32[0], T<float>(loss));
  }
  CheckGradient("SparseSoftmaxCrossEntropyWithLogits", {Rand({3, 4}), T<int64_t>({3, 0, 1})});
  ExpectOpError("SparseSoftmaxCrossEntropyWithLogits", {Rand({2, 3}), T<int32_t>({0, 5})}, {},
                Code::kInvalidArgument, "label 5 at batch row 1");
  ExpectOpError("SparseSoftmaxCrossEntropyWithLogits", {Rand({2, 3}), T<int64_t>({-1, 0})}, {},
                Code::kInvalidArgument, "label -1 at batch row 0");
  ExpectOpError("SparseSoftmaxCrossEntropyWithLogits", {Rand({2, 3}), T<int64_t>({0, 1, 2})}, {},
                Code::kInvalidArgument, "logits [2,3] vs labels [3]");
}

// ---------------------------------------------------------------- convolution

TEST_CASE("Conv2D SAME pads like TF: the odd pad goes after") {
  // 3x3 input 1..9, 2x2 ones filter, SAME stride 1: pad total 1 -> 0 before, 1 after.
  const Tensor x = T<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  const Tensor f = T<float>({1, 1, 1, 1}, {2, 2, 1, 1});
  ExpectNear(RunOp("Conv2D", {x, f}, ConvAttrs({1, 1}, "SAME"))[0],
             T<float>({12, 16, 9, 24, 28, 15, 15, 17, 9}, {1, 3, 3, 1}));
  // 5x5, 3x3 window, stride 2, SAME: 3x3 output, pad 1 before.
  const Tensor x5 = Rand({1, 5, 5, 1});
  auto y = RunOp("Conv2D", {x5, T<double>(std::vector<double>(9, 1.0), {3, 3, 1, 1})}, ConvAttrs({2, 2}, "SAME"))[0];
  CHECK(y.shape() == TensorShape({1, 3, 3, 1}));
  const std::vector<double> xv = V(x5);
  CHECK(y.ElementAsDouble(0) == doctest::Approx(xv[0] + xv[1] + xv[5] + xv[6]));
}

struct ConvCase {
  IntList x, f, strides;
  std::string padding;
  IntList dilations;
};
const ConvCase kConvCases[] = {
    {{1, 5, 5, 2}, {3, 3, 2, 3}, {1, 1}, "VALID", {1, 1}},  {{1, 5, 5, 2}, {3, 3, 2, 3}, {1, 1}, "SAME", {1, 1}},
    {{3, 7, 6, 2}, {3, 2, 2, 4}, {2, 2}, "SAME", {1, 1}},   {{3, 7, 6, 2}, {3, 3, 2, 2}, {2, 1}, "VALID", {1, 1}},
    {{2, 7, 7, 3}, {3, 3, 3, 2}, {1, 1}, "SAME", {2, 2}},   {{2, 9, 8, 1}, {2, 3, 1, 2}, {2, 2}, "VALID", {2, 1}},
    {{3, 4, 5, 3}, {1, 1, 3, 4}, {1, 1}, "VALID", {1, 1}},  {{2, 5, 5, 3}, {1, 1, 3, 2}, {2, 2}, "SAME", {1, 1}},
    {{1, 28, 28, 1}, {3, 3, 1, 8}, {1, 1}, "VALID", {1, 1}}, {{2, 4, 4, 2}, {5, 5, 2, 1}, {1, 1}, "SAME", {1, 1}},
    // Few input channels run the direct kernels: blocks of 16 output channels plus a remainder,
    // four pixels at a time inside the image and one at a time at its padded edges.
    {{2, 9, 11, 1}, {3, 3, 1, 20}, {1, 1}, "SAME", {1, 1}}, {{2, 10, 12, 2}, {3, 3, 2, 32}, {2, 2}, "SAME", {1, 1}},
    {{1, 12, 13, 3}, {2, 3, 3, 17}, {1, 2}, "VALID", {2, 1}}, {{2, 26, 26, 4}, {3, 3, 4, 16}, {1, 1}, "VALID", {1, 1}},
    // More input channels run im2col + GEMM.
    {{2, 6, 7, 6}, {3, 3, 6, 5}, {1, 1}, "SAME", {1, 1}},   {{1, 7, 7, 8}, {3, 2, 8, 4}, {2, 1}, "VALID", {1, 2}},
    // Deep-net shapes (float32: the oneDNN backend where the build has it, onednn.h): 16-32
    // channels at stride 1 and 2, a 1x1 stride-2 projection, odd channel counts, a batch of
    // several chunks with a short last one.
    {{2, 12, 12, 16}, {3, 3, 16, 16}, {1, 1}, "SAME", {1, 1}}, {{2, 11, 11, 16}, {3, 3, 16, 32}, {2, 2}, "SAME", {1, 1}},
    {{2, 8, 8, 16}, {1, 1, 16, 32}, {2, 2}, "VALID", {1, 1}},  {{2, 7, 9, 19}, {3, 3, 19, 13}, {1, 1}, "SAME", {1, 1}},
    {{5, 16, 16, 32}, {3, 3, 32, 32}, {1, 1}, "SAME", {1, 1}}, {{1, 1, 1, 24}, {3, 3, 24, 8}, {1, 1}, "SAME", {1, 1}},
    // oneDNN's Winograd path (onednn.h, UsesWinograd): a large batch of small images, three chunks.
    {{65, 4, 5, 32}, {3, 3, 32, 48}, {1, 1}, "SAME", {1, 1}},
};

TEST_CASE("Conv2D and its backprop ops match the naive reference") {
  int seed = 0;
  for (const ConvCase& cc : kConvCases) {
    for (DType dt : {DType::kFloat32, DType::kFloat64}) {
      INFO("x " << TensorShape(cc.x).ToString() << " f " << TensorShape(cc.f).ToString() << " " << cc.padding
                << " strides " << cc.strides[0] << "," << cc.strides[1] << " dilations " << cc.dilations[0] << ","
                << cc.dilations[1] << " " << DTypeName(dt));
      const Tensor x = Cast(Rand(cc.x, -1, 1, ++seed), dt), f = Cast(Rand(cc.f, -1, 1, ++seed), dt);
      const AttrMap attrs = ConvAttrs(cc.strides, cc.padding, cc.dilations);
      const Tensor y = RunOp("Conv2D", {x, f}, attrs)[0];
      const Tensor dy = Cast(Rand(y.shape().dims(), -1, 1, ++seed), dt);
      const ConvRef ref = RefConv(x, f, &dy, cc.strides, cc.padding, cc.dilations, false);
      const double tol = dt == DType::kFloat32 ? 1e-4 : 1e-10;
      ExpectNear(y, ref.y, tol, tol);
      ExpectNear(RunOp("Conv2DBackpropInput", {Dims(x.shape()), f, dy}, attrs)[0], ref.dx, tol, tol);
      ExpectNear(RunOp("Conv2DBackpropFilter", {x, Dims(f.shape()), dy}, attrs)[0], ref.df, tol, tol);
    }
  }
}

TEST_CASE("Conv2D handles empty batches and zero channels") {
  const AttrMap attrs = ConvAttrs({1, 1}, "SAME");
  ExpectNear(RunOp("Conv2D", {T<float>({}, {0, 4, 4, 2}), Cast(Rand({3, 3, 2, 3}), DType::kFloat32)}, attrs)[0],
             T<float>({}, {0, 4, 4, 3}));
  ExpectNear(RunOp("Conv2D", {T<float>({}, {1, 2, 2, 0}), T<float>({}, {1, 1, 0, 2})}, attrs)[0],
             T<float>(std::vector<double>(8, 0.0), {1, 2, 2, 2}));
  // VALID with the window one larger than the input: an empty output, as in TF.
  ExpectNear(RunOp("Conv2D", {Rand({1, 2, 5, 2}), Rand({3, 3, 2, 4})}, ConvAttrs({1, 1}, "VALID"))[0],
             T<double>({}, {1, 0, 3, 4}));
  ExpectNear(RunOp("Conv2DBackpropFilter", {T<float>({}, {0, 4, 4, 2}), T<int32_t>({3, 3, 2, 1}),
                                            T<float>({}, {0, 4, 4, 1})}, attrs)[0],
             T<float>(std::vector<double>(18, 0.0), {3, 3, 2, 1}));
}

TEST_CASE("Conv2D gradients, and gradients of its backprop ops") {
  for (const auto& [strides, padding, dil] : std::vector<std::tuple<IntList, std::string, IntList>>{
           {{1, 1}, "VALID", {1, 1}}, {{1, 1}, "SAME", {1, 1}}, {{2, 2}, "SAME", {1, 1}}, {{1, 1}, "SAME", {2, 2}}}) {
    INFO(padding << " stride " << strides[0] << " dilation " << dil[0]);
    const AttrMap attrs = ConvAttrs(strides, padding, dil);
    const Tensor x = Rand({1, 5, 5, 2}, -1, 1, 31), f = Rand({3, 3, 2, 3}, -1, 1, 32);
    CheckGradient("Conv2D", {x, f}, attrs);
    const Tensor y = RunOp("Conv2D", {x, f}, attrs)[0];
    const Tensor dy = Rand(y.shape().dims(), -1, 1, 33);
    CheckGradient("Conv2DBackpropInput", {Dims(x.shape()), f, dy}, attrs);
    CheckGradient("Conv2DBackpropFilter", {x, Dims(f.shape()), dy}, attrs);
  }
  CheckGradient("Conv2D", {Rand({3, 4, 3, 2}), Rand({1, 1, 2, 2}, -1, 1, 2)}, ConvAttrs({1, 1}, "VALID"));
}

TEST_CASE("DepthwiseConv2D and its backprop ops match the naive reference") {
  int seed = 100;
  for (const ConvCase& cc : kConvCases) {
    for (DType dt : {DType::kFloat32, DType::kFloat64}) {
      INFO("x " << TensorShape(cc.x).ToString() << " f " << TensorShape(cc.f).ToString() << " " << cc.padding);
      const Tensor x = Cast(Rand(cc.x, -1, 1, ++seed), dt), f = Cast(Rand(cc.f, -1, 1, ++seed), dt);
      const AttrMap attrs = ConvAttrs(cc.strides, cc.padding, cc.dilations);
      const Tensor y = RunOp("DepthwiseConv2D", {x, f}, attrs)[0];
      const Tensor dy = Cast(Rand(y.shape().dims(), -1, 1, ++seed), dt);
      const ConvRef ref = RefConv(x, f, &dy, cc.strides, cc.padding, cc.dilations, true);
      const double tol = dt == DType::kFloat32 ? 1e-4 : 1e-10;
      ExpectNear(y, ref.y, tol, tol);
      ExpectNear(RunOp("DepthwiseConv2DBackpropInput", {Dims(x.shape()), f, dy}, attrs)[0], ref.dx, tol, tol);
      ExpectNear(RunOp("DepthwiseConv2DBackpropFilter", {x, Dims(f.shape()), dy}, attrs)[0], ref.df, tol, tol);
    }
  }
  for (const std::string padding : {"VALID", "SAME"}) {
    const AttrMap attrs = ConvAttrs({2, 1}, padding, {1, 1});
    const Tensor x = Rand({2, 5, 5, 2}, -1, 1, 41), f = Rand({3, 3, 2, 2}, -1, 1, 42);
    CheckGradient("DepthwiseConv2D", {x, f}, attrs);
    const Tensor dy = Rand(RunOp("DepthwiseConv2D", {x, f}, attrs)[0].shape().dims(), -1, 1, 43);
    CheckGradient("DepthwiseConv2DBackpropInput", {Dims(x.shape()), f, dy}, attrs);
    CheckGradient("DepthwiseConv2DBackpropFilter", {x, Dims(f.shape()), dy}, attrs);
  }
  CheckGradient("DepthwiseConv2D", {Rand({1, 6, 6, 1}), Rand({2, 2, 1, 3}, -1, 1, 2)}, ConvAttrs({1, 1}, "SAME", {2, 2}));
}

TEST_CASE("conv shape errors name the shapes, attrs and padding") {
  const AttrMap ok = ConvAttrs({1, 1}, "VALID");
  ExpectOpError("Conv2D", {Rand({1, 5, 5, 2}), Rand({3, 3, 3, 4})}, ok, Code::kInvalidArgument,
                "input [1,5,5,2] vs filter [3,3,3,4]");
  ExpectOpError("DepthwiseConv2D", {Rand({1, 5, 5, 2}), Rand({3, 3, 3, 4})}, ok, Code::kInvalidArgument,
                "input [1,5,5,2] vs filter [3,3,3,4]");
  ExpectOpError("Conv2D", {Rand({1, 5, 5, 2}), Rand({3, 3, 2, 4})}, ConvAttrs({1, 1}, "FULL"),
                Code::kInvalidArgument, "\"FULL\"");
  ExpectOpError("Conv2D", {Rand({5, 5, 2}), Rand({3, 3, 2, 4})}, ok, Code::kInvalidArgument, "rank 4");
  ExpectOpError("Conv2D", {Rand({1, 5, 5, 2}), Rand({3, 2, 4})}, ok, Code::kInvalidArgument, "rank 4");
  ExpectOpError("Conv2D", {Rand({1, 5, 5, 2}), Rand({3, 3, 2, 4})}, ConvAttrs({0, 1}, "VALID"),
                Code::kInvalidArgument, "strides");
  ExpectOpError("Conv2D", {Rand({1, 5, 5, 2}), Rand({3, 3, 2, 4})}, ConvAttrs({1, 1, 1}, "VALID"),
                Code::kInvalidArgument, "strides");
  ExpectOpError("Conv2D", {Rand({1, 5, 5, 2}), Rand({3, 3, 2, 4})}, ConvAttrs({1, 1}, "VALID", {1, -1}),
                Code::kInvalidArgument, "dilations");
  ExpectOpError("Conv2D", {Rand({1, 1, 5, 2}), Rand({3, 3, 2, 4})}, ok, Code::kInvalidArgument, "input dim 1");
  ExpectOpError("Conv2DBackpropInput", {T<int32_t>({1, 5, 5, 2}), Rand({3, 3, 2, 4}), Rand({1, 2, 2, 4})}, ok,
                Code::kInvalidArgument, "expected [1,3,3,4]");
}

TEST_CASE("conv kernels check shapes the shape function could not see") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat32);
  Output f = ops::Placeholder(s, DType::kFloat32);
  Output y = ops::Conv2D(s, x, f, {1, 1}, "SAME");
  CHECK(y.shape().rank() == 4);
  Session sess(&g);
  try {
    sess.Run({{x, Tensor::Zeros(DType::kFloat32, {1, 4, 4, 2})}, {f, Tensor::Zeros(DType::kFloat32, {3, 3, 3, 1})}},
             {y});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kInvalidArgument);
    CHECK(std::string(e.what()).find("input [1,4,4,2] vs filter [3,3,3,1]") != std::string::npos);
  }
}

// ---------------------------------------------------------------- pooling

TEST_CASE("MaxPool / AvgPool and their grads match the naive reference") {
  struct PoolCase {
    IntList x, k, strides;
    std::string padding;
  };
  const PoolCase cases[] = {
      {{1, 4, 4, 1}, {2, 2}, {2, 2}, "VALID"}, {{3, 5, 5, 2}, {2, 2}, {2, 2}, "SAME"},
      {{2, 7, 6, 3}, {3, 3}, {2, 2}, "SAME"},  {{2, 7, 6, 3}, {3, 2}, {1, 2}, "VALID"},
      {{1, 5, 5, 2}, {3, 3}, {1, 1}, "SAME"},  {{2, 28, 28, 4}, {2, 2}, {2, 2}, "VALID"},
      // Windows that do not overlap but leave elements in no window: a VALID remainder, gaps.
      {{1, 5, 5, 2}, {2, 2}, {2, 2}, "VALID"}, {{2, 7, 7, 3}, {2, 2}, {3, 3}, "VALID"},
      {{1, 6, 7, 3}, {2, 1}, {2, 3}, "SAME"},
  };
  int seed = 200;
  for (const PoolCase& pc : cases) {
    for (DType dt : {DType::kFloat32, DType::kFloat64}) {
      INFO("x " << TensorShape(pc.x).ToString() << " k " << pc.k[0] << "x" << pc.k[1] << " " << pc.padding);
      const AttrMap attrs = PoolAttrs(pc.k, pc.strides, pc.padding);
      const Tensor x = Cast(Rand(pc.x, -1, 1, ++seed), dt);
      const Tensor ymax = RunOp("MaxPool", {x}, attrs)[0];
      const Tensor dy = Cast(Rand(ymax.shape().dims(), -1, 1, ++seed), dt);
      const ConvRef mx = RefPool(x, &dy, pc.k, pc.strides, pc.padding, true);
      const ConvRef av = RefPool(x, &dy, pc.k, pc.strides, pc.padding, false);
      ExpectNear(ymax, mx.y);
      ExpectNear(RunOp("MaxPoolGrad", {x, ymax, dy}, attrs)[0], mx.dx);
      ExpectNear(RunOp("AvgPool", {x}, attrs)[0], av.y);
      ExpectNear(RunOp("AvgPoolGrad", {Dims(x.shape()), dy}, attrs)[0], av.dx);
    }
  }
}

TEST_CASE("MaxPoolGrad sends a tied window's gradient to its first maximum only") {
  const Tensor x = T<double>({1, 1, 1, 1}, {1, 2, 2, 1});
  const AttrMap attrs = PoolAttrs({2, 2}, {2, 2}, "VALID");
  ExpectNear(RunOp("MaxPoolGrad", {x, T<double>({1}, {1, 1, 1, 1}), T<double>({5}, {1, 1, 1, 1})}, attrs)[0],
             T<double>({5, 0, 0, 0}, {1, 2, 2, 1}));
  // SAME padding never wins: all-negative inputs keep their max.
  ExpectNear(RunOp("MaxPool", {T<float>({-5, -3, -4, -9}, {1, 2, 2, 1})}, PoolAttrs({3, 3}, {1, 1}, "SAME"))[0],
             T<float>({-3, -3, -3, -3}, {1, 2, 2, 1}));
}

TEST_CASE("pooling gradients") {
  for (const std::string padding : {"VALID", "SAME"}) {
    for (const IntList& st : {IntList{1, 1}, IntList{2, 2}}) {
      INFO(padding << " stride " << st[0]);
      const AttrMap attrs = PoolAttrs({2, 3}, st, padding);
      CheckGradient("MaxPool", {Ramp({2, 5, 5, 2}, 51)}, attrs);
      CheckGradient("AvgPool", {Rand({2, 5, 5, 2}, -1, 1, 52)}, attrs);
      const Tensor y = RunOp("AvgPool", {Rand({2, 5, 5, 2})}, attrs)[0];
      CheckGradient("AvgPoolGrad", {T<int32_t>({2, 5, 5, 2}), Rand(y.shape().dims(), -1, 1, 53)}, attrs);
    }
  }
}

TEST_CASE("pool shape errors") {
  ExpectOpError("MaxPool", {Rand({4, 4})}, PoolAttrs({2, 2}, {2, 2}, "VALID"), Code::kInvalidArgument, "rank 4");
  ExpectOpError("AvgPool", {Rand({1, 4, 4, 1})}, PoolAttrs({2, 2}, {2, 2}, "same"), Code::kInvalidArgument,
                "\"same\"");
  ExpectOpError("MaxPool", {Rand({1, 4, 4, 1})}, PoolAttrs({2}, {2, 2}, "VALID"), Code::kInvalidArgument, "ksize");
  ExpectOpError("MaxPool", {Rand({1, 4, 4, 1})}, PoolAttrs({2, 2}, {2, 0}, "VALID"), Code::kInvalidArgument,
                "strides");
  ExpectOpError("MaxPool", {Rand({1, 4, 4, 1})}, PoolAttrs({6, 2}, {1, 1}, "VALID"), Code::kInvalidArgument,
                "input dim 4");
}

// ---------------------------------------------------------------- batch norm

struct BnRef {
  Tensor y, mean, var;
};
BnRef RefBatchNorm(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean_in,
                   const Tensor& var_in, double eps, bool training) {
  const int64_t C = x.dim(x.rank() - 1), M = x.num_elements() / C;
  const std::vector<double> xv = V(x);
  std::vector<double> mean = V(mean_in), var = V(var_in);
  if (training) {
    for (int64_t c = 0; c < C; ++c) {
      double s = 0, q = 0;
      for (int64_t m = 0; m < M; ++m) s += xv[m * C + c];
      mean[c] = s / M;
      for (int64_t m = 0; m < M; ++m) q += (xv[m * C + c] - mean[c]) * (xv[m * C + c] - mean[c]);
      var[c] = q / M;
    }
  }
  std::vector<double> y(xv.size());
  for (int64_t i = 0; i < static_cast<int64_t>(xv.size()); ++i) {
    const int64_t c = i % C;
    y[i] = (xv[i] - mean[c]) / std::sqrt(var[c] + eps) * V(scale)[c] + V(offset)[c];
  }
  return {Make(x.dtype(), y, x.shape()), Make(x.dtype(), mean, TensorShape({C})), Make(x.dtype(), var, TensorShape({C}))};
}

TEST_CASE("FusedBatchNorm in training and inference mode matches the reference") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    for (bool training : {true, false}) {
      // The larger shapes span several of the kernel's reduction blocks; their values sit far
      // from zero (mean 10), where E[x^2] - mean^2 in float would lose digits.
      for (const auto& [dims, lo, hi] : std::vector<std::tuple<std::vector<int64_t>, double, double>>{
               {{3, 4, 5, 3}, -2, 4}, {{3, 24, 24, 16}, 8, 12}, {{2, 40, 30, 5}, 9, 11}}) {
        INFO(DTypeName(dt) << " training " << training << " x " << TensorShape(dims).ToString());
        const int64_t C = dims.back();
        const Tensor x = Cast(Rand(dims, lo, hi, 61), dt);
        const Tensor scale = Cast(Rand({C}, 0.5, 2, 62), dt), offset = Cast(Rand({C}, -1, 1, 63), dt);
        const Tensor mean = Cast(Rand({C}, -0.5, 0.5, 64), dt), var = Cast(Rand({C}, 0.5, 1.5, 65), dt);
        const AttrMap attrs = {{"epsilon", 0.01}, {"is_training", training}};
        auto out = RunOp("FusedBatchNorm", {x, scale, offset, mean, var}, attrs);
        const BnRef ref = RefBatchNorm(x, scale, offset, mean, var, 0.01, training);
        ExpectNear(out[0], ref.y, 1e-4, 1e-4);
        ExpectNear(out[1], ref.mean, 1e-5, 1e-5);
        ExpectNear(out[2], ref.var, 1e-5, 1e-4);
      }
    }
  }
  // Channels last on a [N, C] input too; default epsilon 1e-3 and training mode.
  const Tensor x2 = T<double>({1, 10, 3, 20}, {2, 2});
  auto out = RunOp("FusedBatchNorm", {x2, T<double>({1, 1}), T<double>({0, 0}), T<double>({0, 0}), T<double>({1, 1})});
  const double a = 1 / std::sqrt(1.001), b = 5 / std::sqrt(25.001);
  ExpectNear(out[0], T<double>({-a, -b, a, b}, {2, 2}));
  ExpectNear(out[2], T<double>({1, 25}));
}

TEST_CASE("FusedBatchNorm gradients (through y and through the returned statistics)") {
  const Tensor x = Rand({2, 3, 3, 2}, -1, 2, 71);
  const std::vector<Tensor> in = {x, Rand({2}, 0.5, 2, 72), Rand({2}, -1, 1, 73), Rand({2}, -0.3, 0.3, 74),
                                  Rand({2}, 0.5, 1.5, 75)};
  CheckGradient("FusedBatchNorm", in, {{"epsilon", 0.01}, {"is_training", true}}, {0, 1, 2}, 1e-5);
  CheckGradient("FusedBatchNorm", in, {{"epsilon", 0.01}, {"is_training", false}}, {}, 1e-5);
}

TEST_CASE("FusedBatchNorm channel errors") {
  ExpectOpError("FusedBatchNorm", {Rand({1, 2, 2, 3}), Rand({3}), Rand({4}), Rand({3}), Rand({3})}, {},
                Code::kInvalidArgument, "offset must have shape [3]");
  ExpectOpError("FusedBatchNorm", {Rand({3}), Rand({3}), Rand({3}), Rand({3}), Rand({3})}, {},
                Code::kInvalidArgument, "rank at least 2");
}

// ---------------------------------------------------------------- graphs with unknown batch

TEST_CASE("shape inference keeps an unknown batch and the CNN trains with a fed batch") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat32, TensorShape({-1, 28, 28, 1}));
  Output labels = ops::Placeholder(s, DType::kInt64, TensorShape({-1}));
  Output w = ops::Const(s, Cast(Rand({3, 3, 1, 4}, -0.3, 0.3, 81), DType::kFloat32));
  Output b = ops::Const(s, Cast(Rand({4}, -0.1, 0.1, 82), DType::kFloat32));
  Output conv = ops::Conv2D(s, x, w);
  CHECK(conv.shape() == TensorShape({-1, 26, 26, 4}));
  CHECK(ops::Conv2D(s, x, w, {2, 2}, "SAME").shape() == TensorShape({-1, 14, 14, 4}));
  CHECK(ops::Conv2D(s, x, w, {1, 1}, "VALID", {2, 2}).shape() == TensorShape({-1, 24, 24, 4}));
  CHECK(ops::DepthwiseConv2D(s, x, w).shape() == TensorShape({-1, 26, 26, 4}));
  Output h = ops::Relu(s, ops::BiasAdd(s, conv, b));
  Output pool = ops::MaxPool(s, h, {2, 2}, {2, 2});
  CHECK(pool.shape() == TensorShape({-1, 13, 13, 4}));
  CHECK(ops::AvgPool(s, h, {3, 3}, {2, 2}, "SAME").shape() == TensorShape({-1, 13, 13, 4}));
  auto bn = ops::FusedBatchNorm(s, pool, ops::Const(s, T<float>({1, 1, 1, 1})), ops::Const(s, T<float>({0, 0, 0, 0})),
                                ops::Const(s, T<float>({0, 0, 0, 0})), ops::Const(s, T<float>({1, 1, 1, 1})));
  CHECK(bn[0].shape() == TensorShape({-1, 13, 13, 4}));
  Output flat = ops::Reshape(s, bn[0], IntList{-1, 13 * 13 * 4});
  Output dense = ops::Const(s, Cast(Rand({13 * 13 * 4, 10}, -0.05, 0.05, 83), DType::kFloat32));
  Output logits = ops::MatMul(s, flat, dense);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, labels);
  CHECK(xent[0].shape() == TensorShape({-1}));
  CHECK(xent[1].shape() == TensorShape({-1, 10}));
  Output loss = ops::Mean(s, xent[0]);
  std::vector<Output> grads = Gradients(s, {loss}, {w, b, dense});
  REQUIRE(grads.size() == 3);
  CHECK(grads[0].shape().IsCompatibleWith(TensorShape({3, 3, 1, 4})));
  Session sess(&g);
  for (int64_t batch : {1, 3}) {
    auto out = sess.Run({{x, Cast(Rand({batch, 28, 28, 1}, 0, 1, 84), DType::kFloat32)},
                         {labels, T<int64_t>(std::vector<double>(batch, 3.0))}},
                        {loss, grads[0], grads[1], grads[2]});
    CHECK(std::isfinite(out[0].ElementAsDouble(0)));
    CHECK(out[1].shape() == TensorShape({3, 3, 1, 4}));
    CHECK(out[2].shape() == TensorShape({4}));
    double norm = 0;
    for (double v : V(out[1])) norm += v * v;
    CHECK(norm > 0);
  }
}


TEST_CASE("elementwise nn kernels write over an input only when nothing else reads it") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat32);
  Output b = ops::Placeholder(s, DType::kFloat32);
  Output sum = ops::Add(s, x, x);         // a fresh buffer, held by its consumers only
  Output biased = ops::BiasAdd(s, sum, b);  // may take over sum's buffer (sum is not fetched)
  Output relu = ops::Relu(s, biased);       // may take over biased's buffer
  Output dy = ops::Neg(s, relu);
  Output grad = s.Op("ReluGrad", {dy, relu});  // relu is fetched too: only dy's buffer may be reused
  const Tensor xv = T<float>({-1, 2, -3, 4, 5, -6}, {3, 2});
  const Tensor bv = T<float>({0.5f, -0.5f}, {2});
  Session sess(&g);
  const std::vector<std::pair<Output, Tensor>> feeds = {{x, xv}, {b, bv}};
  auto out = sess.Run(feeds, {relu, grad});
  ExpectNear(out[0], T<float>({0, 3.5f, 0, 7.5f, 10.5f, 0}, {3, 2}));
  ExpectNear(out[1], T<float>({0, -3.5f, 0, -7.5f, -10.5f, 0}, {3, 2}));
  // The feeds are untouched, and a fetched intermediate keeps its own values.
  ExpectNear(xv, T<float>({-1, 2, -3, 4, 5, -6}, {3, 2}));
  out = sess.Run(feeds, {sum, biased, relu});
  ExpectNear(out[0], T<float>({-2, 4, -6, 8, 10, -12}, {3, 2}));
  ExpectNear(out[1], T<float>({-1.5f, 3.5f, -5.5f, 7.5f, 10.5f, -12.5f}, {3, 2}));
  ExpectNear(out[2], T<float>({0, 3.5f, 0, 7.5f, 10.5f, 0}, {3, 2}));
  CHECK_FALSE(out[0].SharesBufferWith(out[1]));
  CHECK_FALSE(out[1].SharesBufferWith(out[2]));
  // With nothing in between fetched, the chain runs in one buffer: Relu's output is Add's.
  sess.Run(feeds, {relu});  // compiled before counting
  sess.Run(feeds, {sum, relu});
  const int64_t before = CpuAllocator()->Stats().num_allocs;
  sess.Run(feeds, {relu});
  const int64_t chained = CpuAllocator()->Stats().num_allocs - before;
  const int64_t before2 = CpuAllocator()->Stats().num_allocs;
  sess.Run(feeds, {sum, relu});
  const int64_t with_fetch = CpuAllocator()->Stats().num_allocs - before2;
  CHECK(with_fetch == chained + 1);
}

TEST_CASE("nn ops reject integer inputs, mismatched shapes and wrong ranks") {
  const Code kInvalid = Code::kInvalidArgument;
  for (const char* op : kActivations) ExpectOpError(op, {T<int32_t>({1, -1})}, {}, kInvalid, "int32");
  ExpectOpError("LogSoftmax", {T<int32_t>({1, 2})}, {}, kInvalid, "int32");
  for (const char* op : {"Relu6Grad", "LeakyReluGrad", "EluGrad", "SigmoidGrad", "TanhGrad", "SoftplusGrad"}) {
    ExpectOpError(op, {T<double>({1, 2}), T<double>({1, 2, 3})}, {}, kInvalid, "[3]");
  }
  ExpectOpError("BiasAddGrad", {T<int32_t>({1, 2})}, {}, kInvalid, "int32");
  const AttrMap pool = PoolAttrs({2, 2}, {2, 2}, "VALID");
  ExpectOpError("AvgPoolGrad", {T<int32_t>({1, 4, 4}), Rand({1, 2, 2, 1})}, pool, kInvalid, "rank 4");
  ExpectOpError("MaxPoolGrad", {Rand({1, 4, 4, 1}), Rand({1, 2, 2, 1}), Rand({1, 3, 3, 1})}, pool, kInvalid,
                "[1,3,3,1]");
  const AttrMap conv = ConvAttrs({1, 1}, "VALID");
  ExpectOpError("Conv2DBackpropFilter", {Rand({1, 4, 4, 2}), T<int32_t>({2, 2, 3, 1}), Rand({1, 3, 3, 1})}, conv,
                kInvalid, "[2,2,3,1]");
  ExpectOpError("DepthwiseConv2DBackpropFilter", {Rand({1, 4, 4, 2}), T<int32_t>({2, 2, 3, 1}), Rand({1, 3, 3, 2})},
                conv, kInvalid, "[2,2,3,1]");
  ExpectOpError("DepthwiseConv2DBackpropInput", {T<int32_t>({1, 4, 4}), Rand({2, 2, 2, 1}), Rand({1, 3, 3, 2})},
                conv, kInvalid, "rank 4");
}

TEST_CASE("FusedBatchNormGrad in training mode: TF's closed form") {
  // x [M, C] with its batch statistics; dx = scale * inv / M * (M dy - sum(dy) - xhat sum(dy xhat)),
  // dscale = sum(dy xhat), doffset = sum(dy), inv = 1 / sqrt(var + eps), xhat = (x - mean) inv.
  // The larger shapes span several of the kernel's reduction blocks, with C not a vector width.
  for (const auto& [m, c] : std::vector<std::pair<int64_t, int64_t>>{{4, 2}, {1500, 17}, {3000, 16}}) {
    INFO("x [" << m << ", " << c << "]");
    const Tensor x = Rand({m, c}, -1, 3, 31), dy = Rand({m, c}, -1, 1, 32);
    const Tensor scale = Rand({c}, 0.5, 2, 33);
    const double eps = 1e-3;
    std::vector<double> mean(c, 0), var(c, 0), dx(m * c), dscale(c, 0), doffset(c, 0), sdy(c, 0), sdyx(c, 0);
    const std::vector<double> xv = V(x), dyv = V(dy);
    for (int64_t i = 0; i < m * c; ++i) mean[i % c] += xv[i] / m;
    for (int64_t i = 0; i < m * c; ++i) var[i % c] += (xv[i] - mean[i % c]) * (xv[i] - mean[i % c]) / m;
    auto xhat = [&](int64_t i) { return (xv[i] - mean[i % c]) / std::sqrt(var[i % c] + eps); };
    for (int64_t i = 0; i < m * c; ++i) sdy[i % c] += dyv[i], sdyx[i % c] += dyv[i] * xhat(i);
    for (int64_t i = 0; i < m * c; ++i) {
      dx[i] = V(scale)[i % c] / std::sqrt(var[i % c] + eps) / m * (m * dyv[i] - sdy[i % c] - xhat(i) * sdyx[i % c]);
    }
    const Tensor zeros = T<double>(std::vector<double>(c, 0.0));
    const auto out = RunOp("FusedBatchNormGrad", {dy, x, scale, T<double>(mean), T<double>(var), zeros, zeros},
                           {{"epsilon", eps}, {"is_training", true}});
    ExpectNear(out[0], T<double>(dx, {m, c}), 1e-9, 1e-9);
    ExpectNear(out[1], T<double>(sdyx), 1e-9, 1e-9);
    ExpectNear(out[2], T<double>(sdy), 1e-9, 1e-9);
    // float32: the same sums, accumulated in double by the kernel.
    const auto out32 = RunOp("FusedBatchNormGrad",
                             {Cast(dy, DType::kFloat32), Cast(x, DType::kFloat32), Cast(scale, DType::kFloat32),
                              Cast(T<double>(mean), DType::kFloat32), Cast(T<double>(var), DType::kFloat32),
                              Cast(zeros, DType::kFloat32), Cast(zeros, DType::kFloat32)},
                             {{"epsilon", eps}, {"is_training", true}});
    ExpectNear(out32[0], Cast(T<double>(dx, {m, c}), DType::kFloat32), 1e-4, 1e-3);
    ExpectNear(out32[1], Cast(T<double>(sdyx), DType::kFloat32), 1e-3, 1e-4);
    ExpectNear(out32[2], Cast(T<double>(sdy), DType::kFloat32), 1e-3, 1e-4);
  }
  const Tensor x = Rand({4, 2}), dy = Rand({4, 2}), zeros = T<double>({0, 0});
  ExpectOpError("FusedBatchNormGrad", {dy, x, T<double>({1, 2, 3}), T<double>({0, 0}), T<double>({1, 1}), zeros, zeros},
                {}, Code::kInvalidArgument, "[3]");
}

}  // namespace
}  // namespace weft
