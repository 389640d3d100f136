// FusedCausalAttention and its gradient op against a naive reference written from the definition
// (per batch and head: scores, causal mask, softmax, weighted sum, in double), with odd shapes
// (T != S both ways, head and key sizes that fill no vector, T past one query block of 32); the
// forward op's gradient (out and lse) by finite differences in float64; the gradient op's dlse
// input; results independent of the number of threads; bad input; the CUDA kernels against the
// CPU's where a GPU exists.
#include <algorithm>
#include <cmath>

#include "graph/session.h"
#include "ops/attention.h"
#include "ops/framework.h"
#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

struct Dims {
  int64_t B, T, S, H, K, V;
};

// {out [B, T, H, V], lse [B, H, T]} in double from q [B, T, H, K], k [B, S, H, K], v [B, S, H, V].
std::vector<Tensor> RefAttention(const Dims& d, const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                                 DType dtype) {
  auto at = [](const Tensor& x, int64_t N, int64_t H, int64_t D, int64_t b, int64_t i, int64_t h, int64_t c) {
    const int64_t idx = ((b * N + i) * H + h) * D + c;
    return x.dtype() == DType::kFloat32 ? double{x.data<float>()[idx]} : x.data<double>()[idx];
  };
  std::vector<double> out(d.B * d.T * d.H * d.V), lse(d.B * d.H * d.T);
  for (int64_t b = 0; b < d.B; ++b) {
    for (int64_t h = 0; h < d.H; ++h) {
      for (int64_t i = 0; i < d.T; ++i) {
        const int64_t n = std::min(i + 1, d.S);  // keys j <= i
        std::vector<double> s(n);
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t c = 0; c < d.K; ++c) s[j] += at(q, d.T, d.H, d.K, b, i, h, c) * at(k, d.S, d.H, d.K, b, j, h, c);
          s[j] *= scale;
        }
        const double m = *std::max_element(s.begin(), s.end());
        double sum = 0;
        for (double x : s) sum += std::exp(x - m);
        lse[(b * d.H + h) * d.T + i] = m + std::log(sum);
        for (int64_t c = 0; c < d.V; ++c) {
          double o = 0;
          for (int64_t j = 0; j < n; ++j) o += std::exp(s[j] - m) / sum * at(v, d.S, d.H, d.V, b, j, h, c);
          out[((b * d.T + i) * d.H + h) * d.V + c] = o;
        }
      }
    }
  }
  auto make = [&](const std::vector<double>& x, TensorShape shape) {
    return dtype == DType::kFloat32 ? T_<float>(x, shape) : T_<double>(x, shape);
  };
  return {make(out, TensorShape({d.B, d.T, d.H, d.V})), make(lse, TensorShape({d.B, d.H, d.T}))};
}

std::vector<Tensor> Inputs(const Dims& d, DType dtype, uint64_t seed) {
  return {Rand({d.B, d.T, d.H, d.K}, -1.5, 1.5, seed, dtype), Rand({d.B, d.S, d.H, d.K}, -1.5, 1.5, seed + 1, dtype),
          Rand({d.B, d.S, d.H, d.V}, -1, 1, seed + 2, dtype)};
}

TEST_CASE("FusedCausalAttention matches the reference: odd shapes, T != S, several query blocks") {
  const std::vector<Dims> cases = {{2, 5, 5, 3, 3, 2}, {1, 7, 4, 2, 5, 3}, {2, 3, 6, 1, 2, 4},
                                   {1, 1, 1, 1, 1, 1}, {1, 70, 70, 2, 7, 5}, {2, 33, 33, 3, 32, 32}};
  for (const Dims& d : cases) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      CAPTURE(d.T);
      CAPTURE(d.S);
      const std::vector<Tensor> in = Inputs(d, dtype, 11);
      for (double scale : {0.0, 0.7}) {
        const double resolved = scale != 0 ? scale : 1 / std::sqrt(static_cast<double>(d.K));
        const auto out = RunOp("FusedCausalAttention", in, {{"scale", scale}});
        const auto ref = RefAttention(d, in[0], in[1], in[2], resolved, dtype);
        const double tol = dtype == DType::kFloat32 ? 2e-5 : 1e-12;
        ExpectNear(out[0], ref[0], tol, tol);
        ExpectNear(out[1], ref[1], tol, tol);
      }
    }
  }
}

TEST_CASE("FusedCausalAttention gradients against finite differences (out and lse)") {
  for (const Dims& d : std::vector<Dims>{{2, 4, 4, 2, 3, 2}, {1, 5, 3, 1, 2, 3}, {1, 3, 5, 2, 1, 2}, {1, 35, 35, 1, 2, 1}}) {
    CAPTURE(d.T);
    CheckGradient("FusedCausalAttention", Inputs(d, DType::kFloat64, 5), {{"scale", 0.9}});
  }
}

// The gradient op alone, against central differences of the reference's sum(w * out + u * lse):
// checks its dlse input (an explicit tensor) and its empty-[0] (zeros) form.
TEST_CASE("FusedCausalAttentionGrad with and without dlse") {
  const Dims d{1, 6, 6, 2, 3, 2};
  const double scale = 0.8, h = 1e-6;
  std::vector<Tensor> in = Inputs(d, DType::kFloat64, 21);
  const Tensor w = Rand({d.B, d.T, d.H, d.V}, -1, 1, 31), u = Rand({d.B, d.H, d.T}, -1, 1, 32);
  for (bool with_dlse : {true, false}) {
    auto loss = [&](const std::vector<Tensor>& x) {
      const auto r = RefAttention(d, x[0], x[1], x[2], scale, DType::kFloat64);
      double l = 0;
      for (int64_t i = 0; i < r[0].num_elements(); ++i) l += w.data<double>()[i] * r[0].data<double>()[i];
      if (with_dlse) {
        for (int64_t i = 0; i < r[1].num_elements(); ++i) l += u.data<double>()[i] * r[1].data<double>()[i];
      }
      return l;
    };
    const auto fwd = RefAttention(d, in[0], in[1], in[2], scale, DType::kFloat64);
    const Tensor dlse = with_dlse ? u : Tensor::Zeros(DType::kFloat64, TensorShape({0}));
    const auto g = RunOp("FusedCausalAttentionGrad", {w, in[0], in[1], in[2], fwd[0], fwd[1], dlse}, {{"scale", scale}});
    for (int x = 0; x < 3; ++x) {
      std::vector<double> num(in[x].num_elements());
      for (int64_t e = 0; e < in[x].num_elements(); ++e) {
        double& val = in[x].data<double>()[e];
        const double keep = val;
        val = keep + h;
        const double up = loss(in);
        val = keep - h;
        num[e] = (up - loss(in)) / (2 * h);
        val = keep;
      }
      ExpectNear(g[x], T_<double>(num, in[x].shape()), 1e-6, 1e-5);
    }
  }
}

TEST_CASE("FusedCausalAttention: the same bits on 1 and 3 intra-op threads, forward and backward") {
  Graph g;
  Scope s = Scope::Root(&g);
  const Dims d{3, 45, 45, 4, 8, 8};
  const std::vector<Tensor> in = Inputs(d, DType::kFloat32, 41);
  const Output q = ops::Const(s, in[0]), k = ops::Const(s, in[1]), v = ops::Const(s, in[2]);
  const auto att = ops::FusedCausalAttention(s, q, k, v);
  const Output dout = ops::Const(s, Rand({d.B, d.T, d.H, d.V}, -1, 1, 43, DType::kFloat32));
  Node* grad = s.AddNode("FusedCausalAttentionGrad",
                         {dout, q, k, v, att[0], att[1], ops::Const(s, Tensor::Zeros(DType::kFloat32, TensorShape({0})))},
                         {{"scale", 0.0}});
  const std::vector<Output> fetch = {att[0], att[1], Output(grad, 0), Output(grad, 1), Output(grad, 2)};
  SessionOptions one, three;
  one.intra_op_threads = 1;
  three.intra_op_threads = 3;
  Session a(&g, one), b(&g, three);
  const auto ra = a.Run({}, fetch), rb = b.Run({}, fetch);
  for (size_t i = 0; i < fetch.size(); ++i) ExpectEqual(rb[i], ra[i]);
}

TEST_CASE("FusedCausalAttention: bad input names the inputs and shapes") {
  constexpr Code kInvalid = Code::kInvalidArgument;
  ExpectOpError("FusedCausalAttention", {Rand({2, 3, 4}), Rand({2, 3, 1, 4}), Rand({2, 3, 1, 4})}, {}, kInvalid,
                "q must have rank 4");
  ExpectOpError("FusedCausalAttention", {Rand({2, 3, 2, 4}), Rand({2, 3, 3, 4}), Rand({2, 3, 3, 4})}, {}, kInvalid,
                "head counts differ: q [2,3,2,4], k [2,3,3,4]");
  ExpectOpError("FusedCausalAttention", {Rand({2, 3, 2, 4}), Rand({2, 3, 2, 5}), Rand({2, 3, 2, 4})}, {}, kInvalid,
                "key_dim");
  ExpectOpError("FusedCausalAttention", {Rand({2, 3, 2, 4}), Rand({2, 3, 2, 4}), Rand({2, 4, 2, 4})}, {}, kInvalid,
                "key and value steps differ");
  ExpectOpError("FusedCausalAttention", {Rand({1, 3, 2, 4}), Rand({1, 0, 2, 4}), Rand({1, 0, 2, 4})}, {}, kInvalid,
                "at least one key step for its 3 query steps");
  const std::vector<Tensor> in = Inputs({1, 3, 3, 2, 2, 2}, DType::kFloat64, 3);
  ExpectOpError("FusedCausalAttentionGrad", {Rand({1, 3, 2, 2}), in[0], in[1], in[2], Rand({1, 3, 2, 2}), Rand({1, 2, 4}),
                                             Rand({0})}, {}, kInvalid, "lse must have shape [1,2,3]");
  ExpectOpError("FusedCausalAttentionGrad", {Rand({1, 3, 2, 2}), in[0], in[1], in[2], Rand({1, 3, 2, 2}), Rand({1, 2, 3}),
                                             Rand({2, 3})}, {}, kInvalid, "dlse must have lse's shape");
  ExpectOpError("FusedCausalAttentionGrad", {Rand({1, 3, 2, 3}), in[0], in[1], in[2], Rand({1, 3, 2, 2}), Rand({1, 2, 3}),
                                             Rand({0})}, {}, kInvalid, "dout");
}

}  // namespace
}  // namespace weft::test
