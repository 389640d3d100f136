// LSTMSequence, GRUSequence, SimpleRNNSequence and their gradient ops against a naive per-step
// reference written from Keras' cell formulas (below), with odd shapes (batch 1, one step, zero
// steps), go_backwards and every activation; the forward ops' gradients by finite differences;
// the gradient ops' outputs against finite differences of the reference; and bad input.
#include <algorithm>
#include <cmath>
#include <string>

#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

constexpr Code kInvalid = Code::kInvalidArgument;

struct Setup {
  std::string op;
  int64_t B, T, I, H;
  AttrMap attrs;
};

bool IsLstm(const std::string& op) { return op.starts_with("LSTM"); }
bool IsGru(const std::string& op) { return op.starts_with("GRU"); }
int Gates(const std::string& op) { return IsLstm(op) ? 4 : IsGru(op) ? 3 : 1; }

std::string AttrOr(const AttrMap& a, const char* name, const char* dflt) {
  auto it = a.find(name);
  return it == a.end() ? dflt : std::get<std::string>(it->second);
}
bool BoolOr(const AttrMap& a, const char* name, bool dflt) {
  auto it = a.find(name);
  return it == a.end() ? dflt : std::get<bool>(it->second);
}

double ActRef(const std::string& a, double x) {
  if (a == "tanh") return std::tanh(x);
  if (a == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (a == "relu") return x > 0 ? x : 0.0;
  if (a == "hard_sigmoid") return std::min(1.0, std::max(0.0, (x + 3.0) / 6.0));
  return x;
}

// The op's inputs, float64, from fixed seeds: x, h0, (c0), kernel, recurrent_kernel, bias.
std::vector<Tensor> Inputs(const Setup& s) {
  const int64_t g = Gates(s.op) * s.H;
  std::vector<Tensor> in = {Rand({s.B, s.T, s.I}, -1, 1, 11), Rand({s.B, s.H}, -0.5, 0.5, 12)};
  if (IsLstm(s.op)) in.push_back(Rand({s.B, s.H}, -0.5, 0.5, 13));
  in.push_back(Rand({s.I, g}, -0.7, 0.7, 14));
  in.push_back(Rand({s.H, g}, -0.7, 0.7, 15));
  const bool two = IsGru(s.op) && BoolOr(s.attrs, "reset_after", true);
  in.push_back(two ? Rand({2, g}, -0.3, 0.3, 16) : Rand({g}, -0.3, 0.3, 16));
  return in;
}

// Keras' cells, step by step, one batch row at a time, with plain loops.
std::vector<Tensor> Reference(const Setup& s, const std::vector<Tensor>& in) {
  const int64_t B = s.B, Tn = s.T, I = s.I, H = s.H, G = Gates(s.op);
  const bool lstm = IsLstm(s.op), gru = IsGru(s.op);
  const std::string act = AttrOr(s.attrs, "activation", "tanh"), ract = AttrOr(s.attrs, "recurrent_activation", "sigmoid");
  const bool back = BoolOr(s.attrs, "go_backwards", false), reset_after = BoolOr(s.attrs, "reset_after", true);
  const int w = lstm ? 3 : 2;
  const double* x = in[0].data<double>();
  const double* W = in[w].data<double>();
  const double* U = in[w + 1].data<double>();
  const double* bias = in[w + 2].data<double>();
  std::vector<double> y(B * Tn * H), hl(B * H), cl(B * H), cs(B * Tn * H), gates(B * Tn * G * H), hrec(B * Tn * H);
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> h(in[1].data<double>() + b * H, in[1].data<double>() + (b + 1) * H), c(H);
    if (lstm) c.assign(in[2].data<double>() + b * H, in[2].data<double>() + (b + 1) * H);
    for (int64_t st = 0; st < Tn; ++st) {
      const int64_t t = back ? Tn - 1 - st : st;
      std::vector<double> xw(G * H, 0.0), hu(G * H, 0.0);
      for (int64_t k = 0; k < G * H; ++k) {
        for (int64_t i = 0; i < I; ++i) xw[k] += x[(b * Tn + t) * I + i] * W[i * G * H + k];
        for (int64_t j = 0; j < H; ++j) hu[k] += h[j] * U[j * G * H + k];
      }
      std::vector<double> hn(H), g(G * H);
      const int64_t row = b * Tn + st, saved = st * B + b;  // y's row; the saved tensors' (step-major)
      for (int64_t j = 0; j < H; ++j) {
        if (lstm) {
          auto pre = [&](int k) { return xw[k * H + j] + hu[k * H + j] + bias[k * H + j]; };
          const double ig = ActRef(ract, pre(0)), fg = ActRef(ract, pre(1)), gg = ActRef(act, pre(2)),
                       og = ActRef(ract, pre(3));
          c[j] = fg * c[j] + ig * gg;
          hn[j] = og * ActRef(act, c[j]);
          cs[saved * H + j] = c[j];
          g[j] = ig, g[H + j] = fg, g[2 * H + j] = gg, g[3 * H + j] = og;
        } else if (!gru) {
          hn[j] = ActRef(act, xw[j] + hu[j] + bias[j]);
        }
      }
      if (gru) {
        const double* bi = bias;
        const double* br = reset_after ? bias + G * H : nullptr;
        std::vector<double> z(H), r(H), hr(H);
        for (int64_t j = 0; j < H; ++j) {
          z[j] = ActRef(ract, xw[j] + bi[j] + hu[j] + (br ? br[j] : 0.0));
          r[j] = ActRef(ract, xw[H + j] + bi[H + j] + hu[H + j] + (br ? br[H + j] : 0.0));
        }
        for (int64_t j = 0; j < H; ++j) {
          if (reset_after) {
            hr[j] = hu[2 * H + j] + br[2 * H + j];
          } else {
            hr[j] = 0.0;
            for (int64_t m = 0; m < H; ++m) hr[j] += r[m] * h[m] * U[m * G * H + 2 * H + j];
          }
          const double hh = ActRef(act, xw[2 * H + j] + bi[2 * H + j] + (reset_after ? r[j] * hr[j] : hr[j]));
          hn[j] = z[j] * h[j] + (1 - z[j]) * hh;
          g[j] = z[j], g[H + j] = r[j], g[2 * H + j] = hh;
          hrec[saved * H + j] = hr[j];
        }
      }
      h = hn;
      std::copy(hn.begin(), hn.end(), y.begin() + row * H);
      std::copy(g.begin(), g.end(), gates.begin() + saved * G * H);
    }
    std::copy(h.begin(), h.end(), hl.begin() + b * H);
    std::copy(c.begin(), c.end(), cl.begin() + b * H);
  }
  std::vector<Tensor> out = {T<double>(y, {B, Tn, H}), T<double>(hl, {B, H})};
  if (lstm) {
    out.push_back(T<double>(cl, {B, H}));
    out.push_back(T<double>(cs, {Tn, B, H}));
    out.push_back(T<double>(gates, {Tn, B, G * H}));
  } else if (gru) {
    out.push_back(T<double>(gates, {Tn, B, G * H}));
    out.push_back(T<double>(hrec, {Tn, B, H}));
  }
  return out;
}

Tensor ToFloat(const Tensor& t) {
  std::vector<double> v(t.data<double>(), t.data<double>() + t.num_elements());
  return T<float>(v, t.shape().dims());
}

const std::vector<Setup>& Setups() {
  static const std::vector<Setup> s = {
      {"LSTMSequence", 2, 3, 2, 3, {}},
      {"LSTMSequence", 1, 1, 3, 2, {{"go_backwards", true}}},
      {"LSTMSequence", 3, 4, 1, 1, {{"go_backwards", true}, {"activation", "relu"}, {"recurrent_activation", "hard_sigmoid"}}},
      {"GRUSequence", 2, 3, 2, 3, {}},
      {"GRUSequence", 2, 3, 2, 3, {{"reset_after", false}}},
      {"GRUSequence", 1, 2, 3, 2, {{"reset_after", false}, {"go_backwards", true}}},
      {"GRUSequence", 3, 1, 1, 2, {{"go_backwards", true}, {"activation", "linear"}}},
      {"SimpleRNNSequence", 2, 3, 2, 3, {}},
      {"SimpleRNNSequence", 1, 4, 1, 2, {{"go_backwards", true}, {"activation", "relu"}}},
      // Several chunks of steps (the last one shorter): the kernels fold each chunk's gradients
      // into the weight gradients before the next.
      {"LSTMSequence", 2, 5, 2, 3, {{"chunk_steps", int64_t{2}}}},
      {"LSTMSequence", 2, 4, 2, 3, {{"go_backwards", true}, {"chunk_steps", int64_t{3}}}},
      {"GRUSequence", 2, 5, 2, 3, {{"chunk_steps", int64_t{2}}}},
      {"GRUSequence", 2, 5, 2, 3, {{"reset_after", false}, {"go_backwards", true}, {"chunk_steps", int64_t{2}}}},
      {"SimpleRNNSequence", 2, 3, 2, 3, {{"chunk_steps", int64_t{1}}}},
      // Several blocks of batch rows (32 rows a block below batch 256, the last one shorter): each
      // sums its own weight gradients.
      {"LSTMSequence", 33, 3, 2, 2, {{"chunk_steps", int64_t{2}}}},
      {"GRUSequence", 33, 2, 2, 2, {}},
      {"GRUSequence", 33, 2, 1, 2, {{"reset_after", false}, {"go_backwards", true}}},
      {"SimpleRNNSequence", 33, 2, 2, 2, {}},
  };
  return s;
}

TEST_CASE("recurrent sequence ops match the naive per-step reference in float64 and float32") {
  for (const Setup& s : Setups()) {
    CAPTURE(s.op);
    CAPTURE(s.B);
    CAPTURE(s.T);
    const std::vector<Tensor> in = Inputs(s);
    const std::vector<Tensor> want = Reference(s, in);
    const std::vector<Tensor> got = RunOp(s.op, in, s.attrs);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k) ExpectNear(got[k], want[k], 1e-12, 1e-10);
    std::vector<Tensor> in32;
    for (const Tensor& t : in) in32.push_back(ToFloat(t));
    const std::vector<Tensor> got32 = RunOp(s.op, in32, s.attrs);
    for (size_t k = 0; k < got32.size(); ++k) ExpectNear(got32[k], ToFloat(want[k]), 1e-5, 1e-5);
  }
}

TEST_CASE("recurrent sequence ops: zero steps return the initial state; empty batch and zero units") {
  for (const char* op : {"LSTMSequence", "GRUSequence", "SimpleRNNSequence"}) {
    CAPTURE(op);
    for (const Setup& s : {Setup{op, 2, 0, 3, 2, {}}, Setup{op, 0, 3, 2, 2, {}}, Setup{op, 2, 3, 2, 0, {}}}) {
      const std::vector<Tensor> in = Inputs(s);
      const std::vector<Tensor> got = RunOp(op, in, s.attrs);
      const std::vector<Tensor> want = Reference(s, in);
      for (size_t k = 0; k < got.size(); ++k) ExpectNear(got[k], want[k], 1e-12, 1e-12);
      if (s.T == 0) ExpectNear(got[1], in[1], 0, 0);
    }
  }
}

TEST_CASE("recurrent sequence ops: gradients of every output by finite differences") {
  for (const Setup& s : Setups()) {
    // relu and hard_sigmoid have kinks a central difference may straddle: smooth activations only.
    if (AttrOr(s.attrs, "activation", "tanh") == "relu") continue;
    CAPTURE(s.op);
    CAPTURE(s.B);
    CAPTURE(s.T);
    CheckGradient(s.op, Inputs(s), s.attrs, {}, 1e-6);
  }
}

TEST_CASE("recurrent gradient ops equal finite differences of the reference") {
  for (const Setup& s : Setups()) {
    if (AttrOr(s.attrs, "activation", "tanh") == "relu") continue;
    CAPTURE(s.op);
    CAPTURE(s.B);
    const std::vector<Tensor> in = Inputs(s);
    const std::vector<Tensor> out = Reference(s, in);
    std::vector<Tensor> weights;  // the gradient of each output: fixed random weights
    for (size_t k = 0; k < out.size(); ++k) weights.push_back(Rand(out[k].shape().dims(), -1, 1, 30 + k));
    auto loss = [&](const std::vector<Tensor>& xs) {
      const std::vector<Tensor> o = Reference(s, xs);
      double sum = 0;
      for (size_t k = 0; k < o.size(); ++k) {
        for (int64_t e = 0; e < o[k].num_elements(); ++e) sum += o[k].data<double>()[e] * weights[k].data<double>()[e];
      }
      return sum;
    };
    std::vector<Tensor> want;
    for (const Tensor& x : in) {
      std::vector<double> g(x.num_elements());
      for (int64_t e = 0; e < x.num_elements(); ++e) {
        std::vector<Tensor> plus = in, minus = in;
        plus[&x - in.data()] = x.Clone();
        minus[&x - in.data()] = x.Clone();
        plus[&x - in.data()].data<double>()[e] += 1e-6;
        minus[&x - in.data()].data<double>()[e] -= 1e-6;
        g[e] = (loss(plus) - loss(minus)) / 2e-6;
      }
      want.push_back(T<double>(g, x.shape().dims()));
    }
    std::vector<Tensor> grad_in = in;
    grad_in.insert(grad_in.end(), out.begin(), out.end());
    grad_in.insert(grad_in.end(), weights.begin(), weights.end());
    const std::vector<Tensor> got = RunOp(s.op + "Grad", grad_in, s.attrs);
    REQUIRE(got.size() == in.size());
    for (size_t k = 0; k < got.size(); ++k) {
      CAPTURE(k);
      ExpectNear(got[k], want[k], 1e-6, 1e-6);
    }
  }
}

TEST_CASE("recurrent gradient ops read an empty [0] gradient of a sequence output as zeros") {
  for (const Setup& s : Setups()) {
    if (AttrOr(s.attrs, "activation", "tanh") == "relu") continue;
    CAPTURE(s.op);
    const std::vector<Tensor> in = Inputs(s);
    const std::vector<Tensor> out = Reference(s, in);
    // Only the last h (output 1) and, for an LSTM, the last c have a gradient: the case of
    // return_sequences=False, where Gradients fills the sequences' gradients with zeros.
    const Tensor dh = Rand(out[1].shape().dims(), -1, 1, 40);
    const Tensor dc = IsLstm(s.op) ? Rand(out[2].shape().dims(), -1, 1, 41) : Tensor();
    auto loss = [&](const std::vector<Tensor>& xs) {
      const std::vector<Tensor> o = Reference(s, xs);
      double sum = 0;
      for (int64_t e = 0; e < dh.num_elements(); ++e) sum += o[1].data<double>()[e] * dh.data<double>()[e];
      for (int64_t e = 0; IsLstm(s.op) && e < dc.num_elements(); ++e) {
        sum += o[2].data<double>()[e] * dc.data<double>()[e];
      }
      return sum;
    };
    std::vector<Tensor> grad_in = in;
    grad_in.insert(grad_in.end(), out.begin(), out.end());
    for (size_t k = 0; k < out.size(); ++k) {
      grad_in.push_back(k == 1 ? dh : IsLstm(s.op) && k == 2 ? dc : T<double>({}, {0}));
    }
    const std::vector<Tensor> got = RunOp(s.op + "Grad", grad_in, s.attrs);
    for (size_t i = 0; i < in.size(); ++i) {
      CAPTURE(i);
      std::vector<double> g(in[i].num_elements());
      for (int64_t e = 0; e < in[i].num_elements(); ++e) {
        std::vector<Tensor> plus = in, minus = in;
        plus[i] = in[i].Clone();
        minus[i] = in[i].Clone();
        plus[i].data<double>()[e] += 1e-6;
        minus[i].data<double>()[e] -= 1e-6;
        g[e] = (loss(plus) - loss(minus)) / 2e-6;
      }
      ExpectNear(got[i], T<double>(g, in[i].shape().dims()), 1e-6, 1e-6);
    }
  }
}

TEST_CASE("recurrent sequence ops: bad shapes and attrs name the input and the shapes") {
  const Setup lstm{"LSTMSequence", 2, 3, 2, 3, {}};
  std::vector<Tensor> in = Inputs(lstm);
  in[0] = Rand({2, 3});
  ExpectOpError("LSTMSequence", in, {}, kInvalid, "x [batch, time, features] must have rank 3, got shape [2,3]");
  in = Inputs(lstm);
  in[3] = Rand({5, 12});
  ExpectOpError("LSTMSequence", in, {}, kInvalid, "features of x and rows of kernel: 2 vs 5");
  in = Inputs(lstm);
  in[5] = Rand({11});
  ExpectOpError("LSTMSequence", in, {}, kInvalid, "gates * units and the bias size: 12 vs 11");
  ExpectOpError("LSTMSequence", Inputs(lstm), {{"activation", "gelu"}}, kInvalid, "activation 'gelu' is not supported");
  ExpectOpError("LSTMSequence", Inputs(lstm), {{"chunk_steps", int64_t{-1}}}, kInvalid, "chunk_steps must be >= 0 (0: automatic), got -1");
  const Setup gru{"GRUSequence", 2, 3, 2, 3, {}};
  in = Inputs(gru);
  in[4] = Rand({9});
  ExpectOpError("GRUSequence", in, {}, kInvalid, "bias [2, 3 * units] (GRU with reset_after) must have rank 2");
  in = Inputs(gru);
  in[1] = Rand({4, 3});
  ExpectOpError("GRUSequence", in, {}, kInvalid, "batch of x and initial h: 2 vs 4");
  const Setup simple{"SimpleRNNSequence", 2, 3, 2, 3, {}};
  in = Inputs(simple);
  in[3] = Rand({3, 4});
  ExpectOpError("SimpleRNNSequence", in, {}, kInvalid, "gates * units and columns of recurrent_kernel: 3 vs 4");
  // The gradient ops check the forward outputs and gradients they are given.
  for (const Setup& s : {lstm, gru, simple}) {
    std::vector<Tensor> g = Inputs(s);
    const std::vector<Tensor> out = Reference(s, g);
    g.insert(g.end(), out.begin(), out.end());
    g.insert(g.end(), out.begin(), out.end());
    g[g.size() - out.size()] = Rand({2, 4, 3});  // y_backprop with one step too many
    ExpectOpError(s.op + "Grad", g, {}, kInvalid, "('y_backprop') has shape [2,4,3], expected [2,3,3]");
  }
}

}  // namespace
}  // namespace weft::test

namespace weft::test {
namespace {

TEST_CASE("recurrent sequence ops: an empty [0] initial state is zeros, forwards and in the gradient") {
  for (const Setup& s : Setups()) {
    if (AttrOr(s.attrs, "activation", "tanh") == "relu") continue;
    CAPTURE(s.op);
    std::vector<Tensor> zeros = Inputs(s), empty = Inputs(s);
    const int states = IsLstm(s.op) ? 2 : 1;
    for (int i = 1; i <= states; ++i) {
      zeros[i] = T<double>(std::vector<double>(s.B * s.H, 0.0), {s.B, s.H});
      empty[i] = T<double>({}, {0});
    }
    const std::vector<Tensor> want = Reference(s, zeros);
    const std::vector<Tensor> got = RunOp(s.op, empty, s.attrs);
    for (size_t k = 0; k < got.size(); ++k) ExpectNear(got[k], want[k], 1e-12, 1e-10);
    CheckGradient(s.op, empty, s.attrs, {}, 1e-6);
  }
}

}  // namespace
}  // namespace weft::test
