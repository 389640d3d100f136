// The recurrent sequence ops: LSTMSequence, GRUSequence, SimpleRNNSequence and their gradient ops
// (ops/rnn.h). Each forward op saves what its gradient op needs as extra outputs (cell states,
// gates after their activations), as TF's BlockLSTM does; unlike BlockLSTM's, the gradient takes
// the gradients of those outputs too, so every output is differentiable.
//
// Shape key: B = batch, T = time steps, I = input features, H = units, G = gates per unit.
#include "ops/rnn.h"

#include "ops/all_ops.h"
#include "ops/framework.h"
#include "ops/op_def.h"

namespace weft {
namespace {

const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat64};

// Dims a and b must agree where both are known; returns the known one.
int64_t Agree(int64_t a, int64_t b, const char* what, const TensorShape& sa, const TensorShape& sb) {
  WEFT_REQUIRE(a < 0 || b < 0 || a == b, "{}: {} vs {} ({} vs {})", what, a, b, sa.ToString(), sb.ToString());
  return a >= 0 ? a : b;
}

void Rank(const TensorShape& s, int rank, const char* what) {
  WEFT_REQUIRE(s.unknown_rank() || s.rank() == rank, "{} must have rank {}, got shape {}", what, rank, s.ToString());
}

int64_t Dim(const TensorShape& s, int i) { return s.unknown_rank() ? -1 : s.dim(i); }

// The empty [0] tensor given for an initial state: zeros.
bool IsNoState(const TensorShape& s) { return s.rank() == 1 && s.dim(0) == 0; }

bool Gru(const InferenceContext& c) { return c.node().op() == "GRUSequence"; }
RnnCell CellOf(std::string_view op) {
  if (op == "LSTMSequence") return RnnCell::kLSTM;
  if (op == "GRUSequence") return RnnCell::kGRU;
  return RnnCell::kSimple;
}

// Every sequence op: outputs y [B, T, H], h [B, H], then the cell's saved tensors.
void SequenceShape(InferenceContext& c) {
  const RnnCell cell = CellOf(c.node().op());
  const bool lstm = cell == RnnCell::kLSTM;
  const bool reset_after = Gru(c) && c.attr<bool>("reset_after");
  ParseRnnActivation(c.attr<std::string>("activation"), "activation");
  if (cell != RnnCell::kSimple) ParseRnnActivation(c.attr<std::string>("recurrent_activation"), "recurrent_activation");
  const int w = lstm ? 3 : 2;  // index of kernel
  const TensorShape c0 = lstm ? c.input(2) : TensorShape();
  const RnnDims d = CheckRnnShapes(cell, reset_after, c.input(0), c.input(1), lstm ? &c0 : nullptr, c.input(w),
                                   c.input(w + 1), c.input(w + 2));
  const int64_t g = RnnGates(cell);
  c.set_output(0, TensorShape({d.batch, d.time, d.units}));
  c.set_output(1, TensorShape({d.batch, d.units}));
  // The saved tensors are step-major [T, B, .]: one step's rows contiguous (ops/kernels/cpu/rnn.cc).
  const TensorShape saved({d.time, d.batch, d.units});
  const TensorShape saved_gates({d.time, d.batch, d.units < 0 ? -1 : g * d.units});
  if (lstm) {
    c.set_output(2, TensorShape({d.batch, d.units}));
    c.set_output(3, saved);
    c.set_output(4, saved_gates);
  } else if (cell == RnnCell::kGRU) {
    c.set_output(2, saved_gates);
    c.set_output(3, saved);
  }
}

// A gradient op's outputs: one per forward input, of that input's shape (its first inputs).
void SequenceGradShape(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, c.input(i));
}

// The gradient op of every sequence op takes (forward inputs, forward outputs, their gradients)
// and returns one gradient per forward input; ops/kernels/cpu/rnn.cc has the formulas.
std::vector<Output> SequenceGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  std::vector<Output> in;
  for (int i = 0; i < op.num_inputs(); ++i) in.push_back(op.input(i));
  for (int i = 0; i < op.num_outputs(); ++i) in.emplace_back(const_cast<Node*>(&op), i);
  for (int i = 0; i < op.num_outputs(); ++i) {
    // A sequence output nothing reads gets the zeros Gradients fills in: pass an empty [0]
    // tensor instead, which the kernel reads as zeros (no [B, T, G*H] fill, no reads of it).
    const bool unused = dy[i].node != nullptr && dy[i].node->op() == "ZerosLike";
    in.push_back(unused && dy[i].shape().rank() == 3 ? ops::Const(s, Tensor::Zeros(dy[i].dtype(), TensorShape({0})))
                                                     : dy[i]);
  }
  AttrMap attrs = op.attrs();
  Node* g = s.AddNode(op.op() + "Grad", std::move(in), std::move(attrs));
  std::vector<Output> dx;
  for (int i = 0; i < g->num_outputs(); ++i) dx.emplace_back(g, i);
  return dx;
}

// Declares a sequence op and its gradient op. `inputs` and `outputs` are the forward op's.
void RegisterSequence(OpRegistry& r, const std::string& name, const std::vector<std::string>& inputs,
                      const std::vector<std::string>& outputs, bool gates, const std::string& doc) {
  auto attrs = [&](OpDefBuilder& b) {
    // chunk_steps: the steps the CPU kernels run per chunk (0: chosen from the sizes); a tuning
    // knob that does not change results beyond float rounding of the weight-gradient sums.
    b.TypeAttr("T", kFloats).Attr("activation", "tanh").Attr("go_backwards", false).Attr("chunk_steps", 0);
    if (gates) b.Attr("recurrent_activation", "sigmoid");
    if (name == "GRUSequence") b.Attr("reset_after", true);
  };
  OpDefBuilder f = r.Register(name);
  for (const std::string& in : inputs) f.Input(in, "T");
  for (const std::string& out : outputs) f.Output(out, "T");
  attrs(f);
  f.Shape(SequenceShape).Grad(SequenceGrad).Doc(doc);

  OpDefBuilder g = r.Register(name + "Grad");
  for (const std::string& in : inputs) g.Input(in, "T");
  for (const std::string& out : outputs) g.Input(out, "T");
  for (const std::string& out : outputs) g.Input(out + "_backprop", "T");
  for (const std::string& in : inputs) g.Output(in + "_backprop", "T");
  attrs(g);
  g.Shape(SequenceGradShape)
      .Doc("Gradient of " + name + ": takes its inputs, its outputs and their gradients, returns the gradient of "
           "each input. The gradient of a sequence output (rank 3) may be an empty [0] tensor, read as zeros. Not "
           "differentiable itself (TF defines no gradient for BlockLSTMGrad either).");
}

}  // namespace

int RnnGates(RnnCell cell) { return cell == RnnCell::kLSTM ? 4 : cell == RnnCell::kGRU ? 3 : 1; }

RnnActivation ParseRnnActivation(const std::string& name, const char* attr) {
  if (name == "tanh") return RnnActivation::kTanh;
  if (name == "sigmoid") return RnnActivation::kSigmoid;
  if (name == "relu") return RnnActivation::kRelu;
  if (name == "linear" || name.empty()) return RnnActivation::kLinear;
  if (name == "hard_sigmoid") return RnnActivation::kHardSigmoid;
  throw Error(Status(Code::kInvalidArgument,
                     fmt::format("{} '{}' is not supported by the recurrent ops; use tanh, sigmoid, relu, linear "
                                 "or hard_sigmoid",
                                 attr, name)));
}

RnnDims CheckRnnShapes(RnnCell cell, bool reset_after, const TensorShape& x, const TensorShape& h0,
                       const TensorShape* c0, const TensorShape& kernel, const TensorShape& recurrent_kernel,
                       const TensorShape& bias) {
  Rank(x, 3, "x [batch, time, features]");
  if (!IsNoState(h0)) Rank(h0, 2, "initial h [batch, units]");
  Rank(kernel, 2, "kernel [input, gates * units]");
  Rank(recurrent_kernel, 2, "recurrent_kernel [units, gates * units]");
  const bool two_biases = cell == RnnCell::kGRU && reset_after;
  Rank(bias, two_biases ? 2 : 1, two_biases ? "bias [2, 3 * units] (GRU with reset_after)" : "bias [gates * units]");
  const int64_t g = RnnGates(cell);
  RnnDims d{Dim(x, 0), Dim(x, 1), Dim(x, 2), Dim(recurrent_kernel, 0)};
  if (!IsNoState(h0)) {
    d.units = Agree(d.units, Dim(h0, 1), "units of recurrent_kernel and initial h", recurrent_kernel, h0);
    d.batch = Agree(d.batch, Dim(h0, 0), "batch of x and initial h", x, h0);
  }
  if (c0 != nullptr && !IsNoState(*c0)) {
    Rank(*c0, 2, "initial c [batch, units]");
    d.batch = Agree(d.batch, Dim(*c0, 0), "batch of x and initial c", x, *c0);
    d.units = Agree(d.units, Dim(*c0, 1), "units of recurrent_kernel and initial c", recurrent_kernel, *c0);
  }
  const int64_t cols = d.units < 0 ? -1 : g * d.units;
  d.input = Agree(d.input, Dim(kernel, 0), "features of x and rows of kernel", x, kernel);
  Agree(cols, Dim(kernel, 1), "gates * units and columns of kernel", recurrent_kernel, kernel);
  Agree(cols, Dim(recurrent_kernel, 1), "gates * units and columns of recurrent_kernel", recurrent_kernel,
        recurrent_kernel);
  if (two_biases) Agree(2, Dim(bias, 0), "rows of a GRU bias with reset_after", bias, bias);
  Agree(cols, Dim(bias, two_biases ? 1 : 0), "gates * units and the bias size", recurrent_kernel, bias);
  return d;
}

void RegisterRnnOps(OpRegistry& r) {
  RegisterSequence(r, "LSTMSequence", {"x", "h0", "c0", "kernel", "recurrent_kernel", "bias"},
                   {"y", "h", "c", "cs", "gates"}, true,
                   "Keras' LSTM over x [B, T, I] from (h0, c0) [B, H] (either may be the empty [0] tensor: "
                   "zeros, as a Keras layer starts): per step z = x_t @ kernel + h @ "
                   "recurrent_kernel + bias, gates i, f, c, o (that column order) with i, f, o = "
                   "recurrent_activation(z), g = activation(z), c = f * c + i * g, h = o * activation(c). "
                   "Returns every step's h (y [B, T, H]), the last h and c, every step's c (cs [T, B, H]) and "
                   "the gates after their activations (gates [T, B, 4H]; the gradient's saved values, "
                   "step-major). go_backwards runs from the last step; the outputs stay in step order.");
  RegisterSequence(r, "GRUSequence", {"x", "h0", "kernel", "recurrent_kernel", "bias"}, {"y", "h", "gates", "hrec"},
                   true,
                   "Keras' GRU over x [B, T, I] from h0 [B, H], gates z, r, h in that column order: z, r = "
                   "recurrent_activation(x_t @ W + b_i + h @ U + b_r) per gate; with reset_after (bias [2, 3H]: "
                   "input and recurrent biases) hh = activation(x_t @ W_h + b_ih + r * (h @ U_h + b_rh)), "
                   "without (bias [3H]) hh = activation(x_t @ W_h + b_h + (r * h) @ U_h); h = z * h + (1 - z) * hh. "
                   "Returns every step's h (y [B, T, H]), the last h, the gates after activation (gates [T, B, "
                   "3H]) and hrec [T, B, H] (the recurrent term r multiplies, or that product's GEMM); the last "
                   "two are the gradient's saved values, step-major.");
  RegisterSequence(r, "SimpleRNNSequence", {"x", "h0", "kernel", "recurrent_kernel", "bias"}, {"y", "h"}, false,
                   "Keras' SimpleRNN over x [B, T, I] from h0 [B, H]: h = activation(x_t @ kernel + h @ "
                   "recurrent_kernel + bias). Returns every step's h and the last one.");
}

namespace ops {
namespace {
std::vector<Output> All(Node* n) {
  std::vector<Output> out;
  for (int i = 0; i < n->num_outputs(); ++i) out.emplace_back(n, i);
  return out;
}
AttrMap Attrs(const RnnSequenceAttrs& a, bool gates, bool gru) {
  AttrMap m = {{"activation", a.activation}, {"go_backwards", a.go_backwards}};
  if (gates) m["recurrent_activation"] = a.recurrent_activation;
  if (gru) m["reset_after"] = a.reset_after;
  return m;
}
}  // namespace

std::vector<Output> LSTMSequence(const Scope& s, Output x, Output h0, Output c0, Output kernel,
                                 Output recurrent_kernel, Output bias, const RnnSequenceAttrs& attrs) {
  return All(s.AddNode("LSTMSequence", {x, h0, c0, kernel, recurrent_kernel, bias}, Attrs(attrs, true, false)));
}
std::vector<Output> GRUSequence(const Scope& s, Output x, Output h0, Output kernel, Output recurrent_kernel,
                                Output bias, const RnnSequenceAttrs& attrs) {
  return All(s.AddNode("GRUSequence", {x, h0, kernel, recurrent_kernel, bias}, Attrs(attrs, true, true)));
}
std::vector<Output> SimpleRNNSequence(const Scope& s, Output x, Output h0, Output kernel, Output recurrent_kernel,
                                      Output bias, const RnnSequenceAttrs& attrs) {
  return All(s.AddNode("SimpleRNNSequence", {x, h0, kernel, recurrent_kernel, bias}, Attrs(attrs, false, false)));
}

}  // namespace ops
}  // namespace weft
