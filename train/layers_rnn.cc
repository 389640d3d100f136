// LSTM, GRU, SimpleRNN (one fused sequence op each: ops/rnn.h), Bidirectional and
// TimeDistributed. Keras' semantics: the initial state is zeros, return_sequences picks every
// step's output or the last, go_backwards runs from the last step and keeps the outputs in run
// order (Bidirectional puts its backward sequence back in time order, as Keras' does).
#include "train/layers_rnn.h"

#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "ops/rnn.h"
#include "train/layers_noise.h"

namespace weft::train {
namespace {

class RnnLayer : public Layer {
 public:
  RnnLayer(RnnCell cell, int64_t units, RNNOptions o)
      : Layer(cell == RnnCell::kLSTM ? "LSTM" : cell == RnnCell::kGRU ? "GRU" : "SimpleRNN"),
        cell_(cell), units_(units), o_(std::move(o)) {
    WEFT_REQUIRE(units > 0, "{}: units must be positive, got {}", type(), units);
    ParseRnnActivation(o_.activation, "activation");
    if (cell_ != RnnCell::kSimple) ParseRnnActivation(o_.recurrent_activation, "recurrent_activation");
    WEFT_REQUIRE(o_.dropout >= 0.0 && o_.dropout < 1.0, "{}: dropout must be in [0, 1), got {}", type(), o_.dropout);
    WEFT_REQUIRE(o_.recurrent_dropout == 0.0,
                 "{}: recurrent_dropout {} is not supported (the fused sequence op has no mask on h); use 0",
                 type(), o_.recurrent_dropout);
  }

  const RNNOptions& options() const { return o_; }
  RNNOptions& mutable_options() { return o_; }
  int64_t units() const { return units_; }
  RnnCell cell() const { return cell_; }
  size_t num_states() const { return cell_ == RnnCell::kLSTM ? 2 : 1; }

  bool accepts_inputs(size_t n) const override { return n == 1 || n == 1 + num_states(); }
  std::string expected_inputs() const override {
    return cell_ == RnnCell::kLSTM ? "1 (the sequence) or 3 (the sequence and initial_state [h, c])"
                                   : "1 (the sequence) or 2 (the sequence and initial_state [h])";
  }

  void Build(const std::vector<TensorShape>& in) override {
    const TensorShape& x = in[0];
    // A sequence (an RNN call), or one step's inputs (batch, features) (the cell called by itself).
    WEFT_REQUIRE((x.rank() == 3 || x.rank() == 2) && x.dim(x.rank() - 1) > 0,
                 "{}: expects inputs ({}) with known features, got {}", Describe(),
                 o_.time_major ? "time, batch, features" : "batch, time, features", x.ToString());
    const int64_t gh = RnnGates(cell_) * units_;
    AddWeight("kernel", {x.dim(x.rank() - 1), gh}, o_.kernel_initializer);
    AddWeight("recurrent_kernel", {units_, gh}, o_.recurrent_initializer);
    if (!o_.use_bias) return;
    if (cell_ == RnnCell::kGRU && o_.reset_after) {
      AddWeight("bias", {2, gh}, o_.bias_initializer);
    } else if (cell_ == RnnCell::kLSTM && o_.unit_forget_bias) {
      AddWeight("bias", {gh}, ForgetBiasInit());
    } else {
      AddWeight("bias", {gh}, o_.bias_initializer);
    }
  }

  Output Call(CallContext& ctx, const std::vector<Output>& in) const override { return CallOutputs(ctx, in)[0]; }

  // [output, final states...]: the final states only with return_state.
  std::vector<Output> CallOutputs(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    Output x = in[0];
    if (x.shape().rank() == 2) return Step(ctx, in);
    WEFT_REQUIRE(x.shape().rank() == 3, "{}: expects rank-3 inputs, got {}", Describe(), x.shape().ToString());
    if (o_.time_major) x = ops::Transpose(s, x, {1, 0, 2});
    if (ctx.training && o_.dropout > 0.0) x = SpatialDropout1D(o_.dropout, o_.seed)->Call(ctx, {x});
    const DType dt = x.dtype();
    // The initial state: Keras' initial_state when given, else the empty [0] tensor, which the
    // sequence ops read as zeros [batch, units].
    Output zeros = ops::Const(s, Tensor::Zeros(dt, TensorShape({0})));
    auto state = [&](size_t i) {
      if (in.size() == 1) return zeros;
      const Output& st = in[1 + i];
      WEFT_REQUIRE(st.shape().rank() == 2 && (st.shape().dim(1) < 0 || st.shape().dim(1) == units_),
                   "{}: initial_state[{}] must be (batch, units={}), got {}", Describe(), i, units_,
                   st.shape().ToString());
      return st;
    };
    const Output mask = ctx.mask(0);
    if (mask.valid()) {
      WEFT_REQUIRE(!o_.time_major, "{}: a Keras mask with time_major=True is not supported", Describe());
      return MaskedOutputs(ctx, x, mask, in.size() == 1 ? std::vector<Output>{} : std::vector<Output>(in.begin() + 1, in.end()));
    }
    const int64_t gh = RnnGates(cell_) * units_;
    Output bias = o_.use_bias ? ctx.weights[2] : ops::Const(s, Tensor::Zeros(dt, cell_ == RnnCell::kGRU && o_.reset_after ? TensorShape({2, gh}) : TensorShape({gh})));
    ops::RnnSequenceAttrs a{o_.activation, o_.recurrent_activation, o_.go_backwards, o_.reset_after};
    std::vector<Output> out;
    switch (cell_) {
      case RnnCell::kLSTM:
        out = ops::LSTMSequence(s, x, state(0), state(1), ctx.weights[0], ctx.weights[1], bias, a);
        break;
      case RnnCell::kGRU: out = ops::GRUSequence(s, x, state(0), ctx.weights[0], ctx.weights[1], bias, a); break;
      case RnnCell::kSimple:
        out = ops::SimpleRNNSequence(s, x, state(0), ctx.weights[0], ctx.weights[1], bias, a);
        break;
    }
    return Results(s, out);
  }

  // Keras' mask: the sequence output keeps it (return_sequences); the states have none.
  std::vector<Output> OutputMasks(CallContext& ctx, const std::vector<Output>& in,
                                  const std::vector<Output>& outputs) const override {
    std::vector<Output> masks(outputs.size());
    if (o_.return_sequences && in[0].shape().rank() == 3) masks[0] = ctx.mask(0);
    return masks;
  }

  // "LSTMCell 'lstm_cell'" for the messages of a step.
  std::string DescribeCell() const {
    return fmt::format("{}Cell '{}'", type(), name().empty() ? DefaultLayerName(type() + "Cell") : name());
  }

 private:
  // Keras' cell call, one step: in = {x (batch, features), h, (c)}; returns {output, new h,
  // (new c)} (the output is the new h). Built from MatMul, BiasAdd and the activations, with the
  // sequence ops' weights and gate order (ops/rnn.h), so a cell and the RNN(cell) wrapping it
  // compute the same step. Keras' dropout on the inputs in training.
  std::vector<Output> Step(CallContext& ctx, const std::vector<Output>& in) const {
    const Scope s = ctx.scope.NewSubScope("cell");
    const std::string states = cell_ == RnnCell::kLSTM ? "2 states [h, c]" : "1 state [h]";
    WEFT_REQUIRE(in.size() > 1, "{}: expects inputs (batch, time, features), got {}; an input (batch, features) is one "
                 "step of the cell, whose call takes the states too: {}Cell(inputs, states) with {}", Describe(),
                 in[0].shape().ToString(), type(), states);
    WEFT_REQUIRE(in.size() == 1 + num_states(), "{}: a call takes (inputs, states) with {} of shape (batch, {}), got {} "
                 "state(s)", DescribeCell(), states, units_, in.size() - 1);
    Output x = in[0];
    const TensorShape& kernel = ctx.weights[0].shape();
    WEFT_REQUIRE(x.shape().dim(1) < 0 || x.shape().dim(1) == kernel.dim(0),
                 "{}: inputs must be (batch, {}) (the features it was built for), got {}", DescribeCell(),
                 kernel.dim(0), x.shape().ToString());
    for (size_t i = 0; i < num_states(); ++i) {
      const TensorShape& st = in[1 + i].shape();
      const int64_t b = x.shape().dim(0), sb = st.rank() == 2 ? st.dim(0) : -1;
      WEFT_REQUIRE(st.rank() == 2 && (st.dim(1) < 0 || st.dim(1) == units_) && (b < 0 || sb < 0 || b == sb),
                   "{}: states[{}] must be (batch, units) = ({}, {}), got {}", DescribeCell(), i,
                   b < 0 ? "None" : std::to_string(b), units_, st.ToString());
    }
    if (ctx.training && o_.dropout > 0.0) x = Dropout(o_.dropout, o_.seed)->Call(ctx, {x});
    auto act = [&](Output v) { return ApplyActivation(s, o_.activation, v); };
    auto gate = [&](Output v) { return ApplyActivation(s, o_.recurrent_activation, v); };
    const Output& h = in[1];
    Output zx = ops::MatMul(s, x, ctx.weights[0]);
    const bool biased = o_.use_bias;
    if (cell_ == RnnCell::kSimple) {  // h = act(x K + b + h R)
      if (biased) zx = ops::BiasAdd(s, zx, ctx.weights[2]);
      Output y = act(ops::Add(s, zx, ops::MatMul(s, h, ctx.weights[1])));
      return {y, y};
    }
    if (cell_ == RnnCell::kLSTM) {  // gates i, f, c, o; c' = f c + i act(z_c); h' = o act(c')
      Output z = ops::Add(s, zx, ops::MatMul(s, h, ctx.weights[1]));
      if (biased) z = ops::BiasAdd(s, z, ctx.weights[2]);
      std::vector<Output> g = ops::Split(s, z, 1, 4);
      Output c = ops::Add(s, ops::Mul(s, gate(g[1]), in[2]), ops::Mul(s, gate(g[0]), act(g[2])));
      Output y = ops::Mul(s, gate(g[3]), act(c));
      return {y, y, c};
    }
    // GRU, gates z, r, h; h' = z h + (1 - z) hh.
    const int64_t u = units_;
    Output zh = ops::MatMul(s, h, ctx.weights[1]);
    if (biased && o_.reset_after) {  // bias (2, 3u): row 0 with the input, row 1 with the recurrent product
      std::vector<Output> b = ops::Split(s, ctx.weights[2], 0, 2);
      zx = ops::BiasAdd(s, zx, ops::Reshape(s, b[0], std::vector<int64_t>{3 * u}));
      zh = ops::BiasAdd(s, zh, ops::Reshape(s, b[1], std::vector<int64_t>{3 * u}));
    } else if (biased) {
      zx = ops::BiasAdd(s, zx, ctx.weights[2]);
    }
    std::vector<Output> gx = ops::Split(s, zx, 1, 3);
    Output hh;
    Output z, r;
    if (o_.reset_after) {  // hh = act(x_h + r (h R_h + b_h))
      std::vector<Output> gh = ops::Split(s, zh, 1, 3);
      z = gate(ops::Add(s, gx[0], gh[0]));
      r = gate(ops::Add(s, gx[1], gh[1]));
      hh = act(ops::Add(s, gx[2], ops::Mul(s, r, gh[2])));
    } else {  // hh = act(x_h + (r h) R_h)
      const Output& rk = ctx.weights[1];
      Output zr = ops::MatMul(s, h, ops::Slice(s, rk, {0, 0}, {u, 2 * u}));
      std::vector<Output> gh = ops::Split(s, zr, 1, 2);
      z = gate(ops::Add(s, gx[0], gh[0]));
      r = gate(ops::Add(s, gx[1], gh[1]));
      hh = act(ops::Add(s, gx[2], ops::MatMul(s, ops::Mul(s, r, h), ops::Slice(s, rk, {0, 2 * u}, {u, u}))));
    }
    Output one = ops::ScalarLike(s, x.dtype(), 1.0);
    Output y = ops::Add(s, ops::Mul(s, z, h), ops::Mul(s, ops::Sub(s, one, z), hh));
    return {y, y};
  }

  // The fused op's outputs [y, h, (c), ...] as the layer returns them.
  std::vector<Output> Results(const Scope& s, const std::vector<Output>& out) const {
    std::vector<Output> result;
    if (!o_.return_sequences) {
      result.push_back(out[1]);
    } else {
      result.push_back(o_.time_major ? ops::Transpose(s, out[0], {1, 0, 2}) : out[0]);
    }
    if (o_.return_state) {
      for (size_t i = 0; i < num_states(); ++i) result.push_back(out[1 + i]);  // h, then c (the ops' outputs 1, 2)
    }
    return result;
  }

  // The fused op over the given attributes (the initial states: the empty [0] tensor for zeros).
  std::vector<Output> RunOp(const Scope& s, CallContext& ctx, Output x, const std::vector<Output>& states,
                            bool go_backwards) const {
    const DType dt = x.dtype();
    const int64_t gh = RnnGates(cell_) * units_;
    Output bias = o_.use_bias ? ctx.weights[2]
                              : ops::Const(s, Tensor::Zeros(dt, cell_ == RnnCell::kGRU && o_.reset_after
                                                                    ? TensorShape({2, gh})
                                                                    : TensorShape({gh})));
    ops::RnnSequenceAttrs a{o_.activation, o_.recurrent_activation, go_backwards, o_.reset_after};
    switch (cell_) {
      case RnnCell::kLSTM: return ops::LSTMSequence(s, x, states[0], states[1], ctx.weights[0], ctx.weights[1], bias, a);
      case RnnCell::kGRU: return ops::GRUSequence(s, x, states[0], ctx.weights[0], ctx.weights[1], bias, a);
      case RnnCell::kSimple: break;
    }
    return ops::SimpleRNNSequence(s, x, states[0], ctx.weights[0], ctx.weights[1], bias, a);
  }

  // Keras' masked recurrence: a masked step keeps the previous states, and its output is the
  // previous step's output (zeros before the first kept step). Exact for any mask without a
  // masked kernel: the kept steps of each sequence, moved to the front in order (a stable sort
  // of the mask), run through the fused op; the output at step t is then the compacted output
  // k(t) - 1 (k: kept steps up to t), and the final states those after the last kept step (the
  // initial ones when none is kept). go_backwards reverses the steps and the mask first, as
  // Keras. Gradients flow through the gathers and the op as usual.
  std::vector<Output> MaskedOutputs(CallContext& ctx, Output x, Output mask, const std::vector<Output>& given) const {
    const Scope s = ctx.scope.NewSubScope("masked");
    const DType dt = x.dtype();
    Output m = ops::Cast(s, mask, dt);
    if (o_.go_backwards) {
      x = ReverseSteps(s, x);
      m = ReverseSteps(s, m);
    }
    Node* sort = s.AddNode("TopK", {m}, {{"k", int64_t{-1}}});  // kept steps first, in order
    Output order(sort, 1);
    std::vector<Output> zero_states, init;
    Output zeros = ops::Const(s, Tensor::Zeros(dt, TensorShape({0})));
    for (size_t i = 0; i < num_states(); ++i) zero_states.push_back(given.empty() ? zeros : given[i]);
    std::vector<Output> out = RunOp(s, ctx, BatchGather(s, x, order), zero_states, /*go_backwards=*/false);
    // k(t) and the kept count per sequence.
    Output kept = s.Op("Cumsum", {m}, {{"axis", int64_t{1}}});
    Output total = ops::Sum(s, m, {1}, /*keep_dims=*/true);  // [B, 1]
    auto f = [&](double v) { return ops::ScalarLike(s, dt, v); };
    auto index = [&](Output k) {  // max(k - 1, 0) as int32
      return ops::Cast(s, ops::Maximum(s, ops::Sub(s, k, f(1.0)), f(0.0)), DType::kInt32);
    };
    Output any = ops::Cast(s, ops::Greater(s, total, f(0.0)), dt);  // [B, 1]
    auto last = [&](Output seq) {  // seq [B, T, H] at the last kept step: [B, H]
      return ops::Mul(s, ops::Squeeze(s, BatchGather(s, seq, index(total)), {1}), any);
    };
    std::vector<Output> result;
    if (!o_.return_sequences) {
      result.push_back(last(out[0]));
    } else {
      // Zero before the first kept step (Keras' initial previous output), or at every masked step.
      Output seen = o_.zero_output_for_mask ? m : ops::Cast(s, ops::Greater(s, kept, f(0.0)), dt);
      result.push_back(ops::Mul(s, BatchGather(s, out[0], index(kept)), ops::ExpandDims(s, seen, -1)));
    }
    if (o_.return_state) {
      // h from y, c from the op's per-step cell states (output 3, step-major [T, B, H]); the initial
      // state where nothing was kept.
      const std::vector<Output> seqs = cell_ == RnnCell::kLSTM
                                           ? std::vector<Output>{out[0], ops::Transpose(s, out[3], {1, 0, 2})}
                                           : std::vector<Output>{out[0]};
      for (size_t i = 0; i < num_states(); ++i) {
        Output st = last(seqs[i]);
        if (!given.empty()) st = ops::Add(s, st, ops::Mul(s, given[i], ops::Sub(s, f(1.0), any)));
        result.push_back(st);
      }
    }
    return result;
  }

  // x [B, T, ...] with the steps reversed (T known or not).
  static Output ReverseSteps(const Scope& s, Output x) {
    if (const int64_t n = x.shape().dim(1); n >= 0) {  // known steps: constant indices keep the static shape
      std::vector<int32_t> idx(static_cast<size_t>(n));
      for (int64_t t = 0; t < n; ++t) idx[static_cast<size_t>(t)] = static_cast<int32_t>(n - 1 - t);
      return ops::Gather(s, x, ops::Const(s, idx, TensorShape({n})), 1);
    }
    Output steps = ops::Reshape(s, ops::Slice(s, ops::Shape(s, x), {1}, {1}), std::vector<int64_t>{});
    Output one = ops::Const(s, int32_t{1});
    Output idx = ops::Sub(s, ops::Sub(s, steps, one), s.Op("Range", {ops::Const(s, int32_t{0}), steps, one}));
    return ops::Gather(s, x, idx, 1);
  }

  // out[b, j] = x[b, idx[b, j]] for x [B, T, ...] and idx [B, J] int32: one Gather on the
  // flattened rows (its gradient scatters back into x).
  static Output BatchGather(const Scope& s, Output x, Output idx) {
    Output shape = ops::Shape(s, x);
    Output batch = ops::Reshape(s, ops::Slice(s, shape, {0}, {1}), std::vector<int64_t>{});
    Output steps = ops::Reshape(s, ops::Slice(s, shape, {1}, {1}), std::vector<int64_t>{});
    Output one = ops::Const(s, int32_t{1});
    Output offsets = ops::Mul(s, s.Op("Range", {ops::Const(s, int32_t{0}), batch, one}), steps);  // [B]
    Output flat_idx = ops::Add(s, idx, ops::ExpandDims(s, offsets, 1));
    std::vector<int64_t> rows = {-1};
    for (int i = 2; i < x.shape().rank(); ++i) rows.push_back(x.shape().dim(i));
    return ops::Gather(s, ops::Reshape(s, x, rows), flat_idx);
  }

 private:
  // Keras' unit_forget_bias: bias_initializer's value for the i, c, o gates, ones for f. Made as a
  // constant, so for bias initializers with a constant value.
  Initializer ForgetBiasInit() const {
    using K = Initializer::Kind;
    const Initializer& b = o_.bias_initializer;
    WEFT_REQUIRE(b.kind == K::kZeros || b.kind == K::kOnes || b.kind == K::kConstant,
                 "{}: unit_forget_bias needs a constant bias_initializer (zeros, ones, constant), got {}; pass "
                 "unit_forget_bias=False to use it",
                 Describe(), b.ToString());
    const float v = b.kind == K::kZeros ? 0.0f : b.kind == K::kOnes ? 1.0f : static_cast<float>(b.value);
    std::vector<float> values(4 * units_, v);
    std::fill(values.begin() + units_, values.begin() + 2 * units_, 1.0f);
    return FromTensor(Tensor::FromVector<float>(values, TensorShape({4 * units_})));
  }

  RnnCell cell_;
  int64_t units_;
  RNNOptions o_;
};

// The per-example shape of a batch shape (drops dim 0).
TensorShape PerExample(const TensorShape& s) { return TensorShape(std::vector<int64_t>(s.dims().begin() + 1, s.dims().end())); }

// Keras' snake-case names of the recurrent layers ("forward_lstm/kernel" in a Bidirectional).
std::string SnakeType(const std::string& type) {
  return type == "LSTM" ? "lstm" : type == "GRU" ? "gru" : "simple_rnn";
}

// Calls an inner layer with the slice [first, first + n) of the wrapper's weights; every output.
std::vector<Output> CallInner(const Layer& inner, CallContext& ctx, const std::string& scope, size_t first, size_t n,
                              const std::vector<Output>& in) {
  CallContext c{ctx.scope.NewSubScope(scope), ctx.training,
                std::vector<Output>(ctx.weights.begin() + first, ctx.weights.begin() + first + n), ctx.updates,
                ctx.losses, {ctx.mask(0)}};
  return inner.CallOutputs(c, in);
}

class BidirectionalLayer : public Layer {
 public:
  BidirectionalLayer(LayerPtr fwd, std::string merge_mode, LayerPtr bwd)
      : Layer("Bidirectional"), fwd_(std::move(fwd)), bwd_(std::move(bwd)), merge_(std::move(merge_mode)) {
    const auto* f = dynamic_cast<const RnnLayer*>(fwd_.get());
    WEFT_REQUIRE(f != nullptr, "Bidirectional: wraps an LSTM, GRU or SimpleRNN layer, got {}", fwd_ ? fwd_->type() : "null");
    WEFT_REQUIRE(merge_ == "concat" || merge_ == "sum" || merge_ == "mul" || merge_ == "ave",
                 "Bidirectional: merge_mode must be 'concat', 'sum', 'mul' or 'ave', got '{}'", merge_);
    if (!bwd_) {
      RNNOptions o = f->options();
      o.go_backwards = !o.go_backwards;
      bwd_ = std::make_shared<RnnLayer>(f->cell(), f->units(), o);
    }
    const auto* b = dynamic_cast<const RnnLayer*>(bwd_.get());
    WEFT_REQUIRE(b != nullptr, "Bidirectional: backward_layer must be an LSTM, GRU or SimpleRNN, got {}", bwd_->type());
    WEFT_REQUIRE(b->options().return_sequences == f->options().return_sequences,
                 "Bidirectional: the forward and backward layers must agree on return_sequences");
    WEFT_REQUIRE(b->options().return_state == f->options().return_state,
                 "Bidirectional: the forward and backward layers must agree on return_state");
    WEFT_REQUIRE(b->num_states() == f->num_states(),
                 "Bidirectional: the forward and backward layers must have the same states ({} vs {})", f->type(),
                 b->type());
    sequences_ = f->options().return_sequences;
    states_ = f->num_states();
    // Keras' Bidirectional zeroes the masked steps' outputs of both layers (zero_output_for_mask).
    auto with_zero_output = [&](const RnnLayer* l) {
      RNNOptions o = l->options();
      o.zero_output_for_mask = sequences_;
      return std::make_shared<RnnLayer>(l->cell(), l->units(), o);
    };
    fwd_ = with_zero_output(f);
    bwd_ = with_zero_output(b);
  }

  bool accepts_inputs(size_t n) const override { return n == 1 || n == 1 + 2 * states_; }
  std::string expected_inputs() const override {
    return fmt::format("1 (the sequence) or {} (the sequence, then the forward and the backward layer's initial "
                       "states)", 1 + 2 * states_);
  }

  void Build(const std::vector<TensorShape>& in) override {
    for (auto [layer, prefix] : {std::pair{fwd_.get(), "forward"}, std::pair{bwd_.get(), "backward"}}) {
      layer->Outputs({Input(PerExample(in[0]))});
      for (const Weight& w : layer->weights()) {
        AddWeight(std::string(prefix) + "_" + SnakeType(layer->type()) + "/" + w.name, w.shape, w.init, w.trainable, w.l2, w.l1,
                  w.constraint);
      }
    }
  }

  Output Call(CallContext& ctx, const std::vector<Output>& in) const override { return CallOutputs(ctx, in)[0]; }

  std::vector<Output> CallOutputs(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    const size_t nf = fwd_->weights().size();
    std::vector<Output> fin = {in[0]}, bin = {in[0]};
    if (in.size() > 1) {
      fin.insert(fin.end(), in.begin() + 1, in.begin() + 1 + static_cast<std::ptrdiff_t>(states_));
      bin.insert(bin.end(), in.begin() + 1 + static_cast<std::ptrdiff_t>(states_), in.end());
    }
    std::vector<Output> f = CallInner(*fwd_, ctx, "forward", 0, nf, fin);
    std::vector<Output> b = CallInner(*bwd_, ctx, "backward", nf, bwd_->weights().size(), bin);
    Output yf = f[0], yb = b[0];
    if (sequences_) yb = ReverseTime(s, yb);  // Keras flips it whatever the directions
    std::vector<Output> out;
    if (merge_ == "concat") {
      out.push_back(ops::Concat(s, {yf, yb}, -1));
    } else if (merge_ == "sum") {
      out.push_back(ops::Add(s, yf, yb));
    } else if (merge_ == "mul") {
      out.push_back(ops::Mul(s, yf, yb));
    } else {
      out.push_back(ops::Mul(s, ops::Add(s, yf, yb), ops::ScalarLike(s, yf.dtype(), 0.5)));
    }
    out.insert(out.end(), f.begin() + 1, f.end());  // return_state: the forward states, then the backward ones
    out.insert(out.end(), b.begin() + 1, b.end());
    return out;
  }

  std::vector<Output> OutputMasks(CallContext& ctx, const std::vector<Output>&,
                                  const std::vector<Output>& outputs) const override {
    std::vector<Output> masks(outputs.size());
    if (sequences_) masks[0] = ctx.mask(0);
    return masks;
  }

 private:
  // y [batch, time, units] with the time axis reversed (the time dim must be known).
  static Output ReverseTime(const Scope& s, Output y) {
    const int64_t steps = y.shape().dim(1);
    if (steps < 0) {  // variable-length sequences (Input(shape=(None, ...))): steps - 1, ..., 0 at run time
      const Output n = ops::StridedSlice(s, ops::Shape(s, y), {1}, {2}, {1}, 0, 0, /*shrink_axis_mask=*/1);
      const Output one = ops::Const(s, int32_t{1});
      const Output idx = s.Op("Range", {ops::Sub(s, n, one), ops::Const(s, int32_t{-1}), ops::Neg(s, one)});
      return ops::Gather(s, y, idx, 1);
    }
    std::vector<int32_t> idx(steps);
    for (int64_t t = 0; t < steps; ++t) idx[t] = static_cast<int32_t>(steps - 1 - t);
    return ops::Gather(s, y, ops::Const(s, idx, TensorShape({steps})), 1);
  }

  LayerPtr fwd_, bwd_;
  std::string merge_;
  bool sequences_ = false;
  size_t states_ = 1;  // per direction
};

class TimeDistributedLayer : public Layer {
 public:
  explicit TimeDistributedLayer(LayerPtr inner) : Layer("TimeDistributed"), inner_(std::move(inner)) {
    WEFT_REQUIRE(inner_ != nullptr, "TimeDistributed: needs a layer");
  }
  void Build(const std::vector<TensorShape>& in) override {
    const TensorShape& x = in[0];
    WEFT_REQUIRE(x.rank() >= 3, "{}: expects inputs (batch, time, ...), got {}", Describe(), x.ToString());
    for (int i = 2; i < x.rank(); ++i) {
      WEFT_REQUIRE(x.dim(i) >= 0, "{}: needs known dims after time, got {}", Describe(), x.ToString());
    }
    WEFT_REQUIRE(inner_->Outputs({Input(PerExample(PerExample(x)))}).size() == 1,
                 "{}: the inner layer must have one output", Describe());
    for (const Weight& w : inner_->weights()) {
      AddWeight(w.name, w.shape, w.init, w.trainable, w.l2, w.l1, w.constraint);
    }
  }
  // (batch, time, ...) -> (batch * time, ...) -> the layer -> (batch, time, ...out).
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    const TensorShape& shape = in[0].shape();
    std::vector<int64_t> folded = {-1};
    for (int i = 2; i < shape.rank(); ++i) folded.push_back(shape.dim(i));
    Output y = CallInner(*inner_, ctx, inner_->type(), 0, ctx.weights.size(), {ops::Reshape(s, in[0], folded)})[0];
    const TensorShape& ys = y.shape();
    WEFT_REQUIRE(ys.rank() >= 1, "{}: the inner layer's output has unknown rank", Describe());
    std::vector<int32_t> rest;
    for (int i = 1; i < ys.rank(); ++i) rest.push_back(static_cast<int32_t>(ys.dim(i)));
    if (shape.dim(1) >= 0) {  // a known number of steps: a static shape
      std::vector<int64_t> dims = {-1, shape.dim(1)};
      dims.insert(dims.end(), rest.begin(), rest.end());
      return ops::Reshape(s, y, dims);
    }
    Output bt = ops::Slice(s, ops::Shape(s, in[0]), {0}, {2});
    Output dims = ops::Concat(s, {bt, ops::Const(s, rest, TensorShape({static_cast<int64_t>(rest.size())}))}, 0);
    return ops::Reshape(s, y, dims);
  }

 private:
  LayerPtr inner_;
};

}  // namespace

LayerPtr LSTM(int64_t units, RNNOptions options) { return std::make_shared<RnnLayer>(RnnCell::kLSTM, units, options); }
LayerPtr GRU(int64_t units, RNNOptions options) { return std::make_shared<RnnLayer>(RnnCell::kGRU, units, options); }
LayerPtr SimpleRNN(int64_t units, RNNOptions options) {
  return std::make_shared<RnnLayer>(RnnCell::kSimple, units, options);
}
LayerPtr Bidirectional(LayerPtr layer, std::string merge_mode, LayerPtr backward_layer) {
  return std::make_shared<BidirectionalLayer>(std::move(layer), std::move(merge_mode), std::move(backward_layer));
}
LayerPtr TimeDistributed(LayerPtr layer) { return std::make_shared<TimeDistributedLayer>(std::move(layer)); }

void SetRnnSequenceOptions(Layer& layer, const RNNOptions& sequence) {
  auto* rnn = dynamic_cast<RnnLayer*>(&layer);
  WEFT_REQUIRE(rnn != nullptr, "{} '{}' is not an LSTM, GRU or SimpleRNN", layer.type(), layer.name());
  RNNOptions& o = rnn->mutable_options();
  o.return_sequences = sequence.return_sequences;
  o.return_state = sequence.return_state;
  o.go_backwards = sequence.go_backwards;
  o.time_major = sequence.time_major;
  o.zero_output_for_mask = sequence.zero_output_for_mask;
}

}  // namespace weft::train
