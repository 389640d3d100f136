// The recurrent layers (train/layers_rnn.h) against Keras: outputs, states and gradients of
// LSTM, GRU (reset_after both ways), SimpleRNN and Bidirectional with the same weights, as
// TensorFlow 2.21 computed them (tests/train/golden/rnn_tf.json, made by make_rnn_golden.py
// beside it); TimeDistributed against its closed form; shapes, parameter counts and bad
// arguments.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/rnn.h"
#include "train/layers_rnn.h"
#include "train/model.h"

using namespace weft;
using namespace weft::train;

namespace {

constexpr int64_t B = 2, T = 5, I = 3, H = 4;  // the golden file's sizes

const std::string& Golden() {
  static const std::string json = [] {
    const char* dir = std::getenv("WEFT_SOURCE_DIR");
    const std::filesystem::path root =
        dir ? std::filesystem::path(dir)
            : std::filesystem::canonical("/proc/self/exe").parent_path().parent_path().parent_path();
    std::ifstream f(root / "tests/train/golden/rnn_tf.json");
    REQUIRE(f.good());
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }();
  return json;
}

// The float32 tensor stored under "case.key", reshaped to dims (sizes must agree).
Tensor Stored(const std::string& key, std::vector<int64_t> dims) {
  const std::string& json = Golden();
  const std::string tag = "\"" + key + "\": [";
  const size_t at = json.find(tag);
  INFO("golden key " << key);
  REQUIRE(at != std::string::npos);
  std::istringstream in(json.substr(at + tag.size(), json.find(']', at) - at - tag.size()));
  std::vector<float> v;
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::stof(item));
  REQUIRE(static_cast<int64_t>(v.size()) == TensorShape(dims).num_elements());
  return Tensor::FromVector<float>(v, TensorShape(dims));
}

void ExpectClose(const Tensor& got, const Tensor& want, const std::string& what, double tol = 2e-5) {
  INFO(what << ": got " << got.shape().ToString() << ", want " << want.shape().ToString());
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    INFO(what << " element " << i);
    CHECK(got.data<float>()[i] == doctest::Approx(want.data<float>()[i]).epsilon(tol).scale(1.0));
  }
}

// Builds `layer` for x (B, T, I), sets the golden weights of `name`, and checks y and the gradients
// of sum(y * r) for x and every weight against TensorFlow's.
void CheckAgainstKeras(const std::string& name, const LayerPtr& layer, std::vector<int64_t> y_dims) {
  CAPTURE(name);
  (*layer)(Input({T, I}));
  Graph g;
  Scope s = Scope::Root(&g);
  std::vector<Output> phs = {ops::Placeholder(s, DType::kFloat32, TensorShape({B, T, I}))};
  std::vector<Tensor> values = {Stored(name + ".x", {B, T, I})};
  for (size_t k = 0; k < layer->weights().size(); ++k) {
    const TensorShape& shape = layer->weights()[k].shape;
    phs.push_back(ops::Placeholder(s, DType::kFloat32, shape));
    values.push_back(Stored(name + ".w" + std::to_string(k), shape.dims()));
  }
  CallContext ctx{s.NewSubScope("layer"), false, {phs.begin() + 1, phs.end()}, nullptr};
  Output y = layer->Call(ctx, {phs[0]});
  Output loss = ops::Sum(s, ops::Mul(s, y, ops::Const(s, Stored(name + ".r", y_dims))));
  std::vector<Output> fetch = {y};
  for (const Output& d : Gradients(s, {loss}, phs)) fetch.push_back(d);
  Session sess(&g);
  std::vector<std::pair<Output, Tensor>> feeds;
  for (size_t k = 0; k < phs.size(); ++k) feeds.emplace_back(phs[k], values[k]);
  const std::vector<Tensor> got = sess.Run(feeds, fetch);
  ExpectClose(got[0], Stored(name + ".y", y_dims), "y");
  ExpectClose(got[1], Stored(name + ".d_x", {B, T, I}), "d_x");
  for (size_t k = 0; k < layer->weights().size(); ++k) {
    ExpectClose(got[k + 2], Stored(name + ".d_w" + std::to_string(k), layer->weights()[k].shape.dims()),
                "d_w" + std::to_string(k) + " (" + layer->weights()[k].name + ")");
  }
}

RNNOptions Seq(bool backwards = false) {
  RNNOptions o;
  o.return_sequences = true;
  o.go_backwards = backwards;
  return o;
}

}  // namespace

TEST_CASE("LSTM matches Keras: outputs and gradients, forwards and go_backwards") {
  CheckAgainstKeras("lstm", LSTM(H, Seq()), {B, T, H});
  CheckAgainstKeras("lstm_backwards", LSTM(H, Seq(true)), {B, T, H});
  CheckAgainstKeras("lstm_state", LSTM(H), {B, H});
  RNNOptions back;
  back.go_backwards = true;
  CheckAgainstKeras("lstm_backwards_state", LSTM(H, back), {B, H});
}

TEST_CASE("GRU matches Keras with reset_after true and false; SimpleRNN with tanh and relu") {
  CheckAgainstKeras("gru", GRU(H, Seq()), {B, T, H});
  RNNOptions before = Seq();
  before.reset_after = false;
  CheckAgainstKeras("gru_reset_before", GRU(H, before), {B, T, H});
  RNNOptions back;
  back.go_backwards = true;
  CheckAgainstKeras("gru_backwards_state", GRU(H, back), {B, H});
  CheckAgainstKeras("simple_rnn", SimpleRNN(H, Seq()), {B, T, H});
  RNNOptions relu = back;
  relu.activation = "relu";
  CheckAgainstKeras("simple_rnn_backwards", SimpleRNN(H, relu), {B, H});
}

TEST_CASE("Bidirectional matches Keras: LSTM sequences concatenated, GRU last states summed") {
  CheckAgainstKeras("bidi_lstm_concat", Bidirectional(LSTM(H, Seq())), {B, T, 2 * H});
  CheckAgainstKeras("bidi_gru_sum", Bidirectional(GRU(H), "sum"), {B, H});
}

TEST_CASE("the sequence ops' final states are Keras' return_state values") {
  for (const char* name : {"lstm_state", "lstm_backwards_state", "gru_backwards_state"}) {
    CAPTURE(name);
    const bool lstm = std::string(name).starts_with("lstm");
    Graph g;
    Scope s = Scope::Root(&g);
    Output x = ops::Const(s, Stored(std::string(name) + ".x", {B, T, I}));
    Output zeros = ops::Const(s, Tensor::Zeros(DType::kFloat32, TensorShape({B, H})));
    const int64_t gh = (lstm ? 4 : 3) * H;
    Output w = ops::Const(s, Stored(std::string(name) + ".w0", {I, gh}));
    Output u = ops::Const(s, Stored(std::string(name) + ".w1", {H, gh}));
    ops::RnnSequenceAttrs a;
    a.go_backwards = std::string(name).find("backwards") != std::string::npos;
    std::vector<Output> out =
        lstm ? ops::LSTMSequence(s, x, zeros, zeros, w, u, ops::Const(s, Stored(std::string(name) + ".w2", {gh})), a)
             : ops::GRUSequence(s, x, zeros, w, u, ops::Const(s, Stored(std::string(name) + ".w2", {2, gh})), a);
    Session sess(&g);
    const std::vector<Tensor> got = sess.Run({}, lstm ? std::vector<Output>{out[1], out[2]} : std::vector<Output>{out[1]});
    ExpectClose(got[0], Stored(std::string(name) + ".state0", {B, H}), "h state");
    if (lstm) ExpectClose(got[1], Stored(std::string(name) + ".state1", {B, H}), "c state");
  }
}

TEST_CASE("recurrent layers: Keras' weight shapes, parameter counts and output shapes") {
  Sym x = Input({7, 5});
  LayerPtr lstm = LSTM(6, Seq());
  CHECK(lstm(x)->shape == TensorShape({-1, 7, 6}));
  CHECK(lstm->CountParams(true) == 4 * 6 * (5 + 6 + 1));  // Keras' summary: 4 * units * (in + units + 1)
  LayerPtr gru = GRU(6);
  CHECK(gru(x)->shape == TensorShape({-1, 6}));
  CHECK(gru->CountParams(true) == 3 * 6 * (5 + 6 + 2));  // reset_after: two biases
  RNNOptions v1;
  v1.reset_after = false;
  LayerPtr gru1 = GRU(6, v1);
  gru1(x);
  CHECK(gru1->CountParams(true) == 3 * 6 * (5 + 6 + 1));
  LayerPtr simple = SimpleRNN(6);
  simple(x);
  CHECK(simple->CountParams(true) == 6 * (5 + 6 + 1));
  LayerPtr bi = Bidirectional(LSTM(6, Seq()));
  CHECK(bi(x)->shape == TensorShape({-1, 7, 12}));
  CHECK(bi->weights()[0].name == "forward_lstm/kernel");
  CHECK(bi->weights()[3].name == "backward_lstm/kernel");
  RNNOptions tm = Seq();
  tm.time_major = true;
  CHECK(LSTM(3, tm)(Input({7, 5}))->shape == TensorShape({-1, 7, 3}));  // (time, batch) in and out
}

TEST_CASE("LSTM's unit_forget_bias starts the forget gate's bias at 1, the others at bias_initializer") {
  LayerPtr lstm = LSTM(3);
  lstm(Input({4, 2}));
  Graph g;
  Scope s = Scope::Root(&g);
  const Weight& bias = lstm->weights()[2];
  Output v = bias.init.Build(s, bias.shape);
  const Tensor got = Session(&g).Run({}, {v})[0];
  const std::vector<float> want = {0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 12; ++i) CHECK(got.data<float>()[i] == want[i]);
}

TEST_CASE("TimeDistributed(Dense) applies one Dense to every step: y[b, t] = x[b, t] @ W + bias") {
  LayerPtr td = TimeDistributed(Dense(2));
  CHECK(td(Input({3, 4}))->shape == TensorShape({-1, 3, 2}));
  REQUIRE(td->weights().size() == 2);
  Graph g;
  Scope s = Scope::Root(&g);
  std::vector<float> xv(2 * 3 * 4), wv(4 * 2), bv = {0.5f, -0.25f};
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.1f * static_cast<float>(i) - 1.0f;
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.3f - 0.07f * static_cast<float>(i);
  CallContext ctx{s.NewSubScope("td"), false,
                  {ops::Const(s, wv, TensorShape({4, 2})), ops::Const(s, bv, TensorShape({2}))}, nullptr};
  Output y = td->Call(ctx, {ops::Const(s, xv, TensorShape({2, 3, 4}))});
  const Tensor got = Session(&g).Run({}, {y})[0];
  REQUIRE(got.shape() == TensorShape({2, 3, 2}));
  for (int r = 0; r < 6; ++r) {
    for (int j = 0; j < 2; ++j) {
      double want = bv[j];
      for (int k = 0; k < 4; ++k) want += xv[r * 4 + k] * wv[k * 2 + j];
      CHECK(got.data<float>()[r * 2 + j] == doctest::Approx(want).epsilon(1e-5));
    }
  }
}

TEST_CASE("recurrent layers: bad arguments and inputs name the layer and what was wrong") {
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message([] { LSTM(0); }).find("LSTM: units must be positive, got 0") != std::string::npos);
  RNNOptions gelu;
  gelu.activation = "gelu";
  CHECK(message([&] { GRU(3, gelu); }).find("activation 'gelu' is not supported") != std::string::npos);
  RNNOptions rd;
  rd.recurrent_dropout = 0.2;
  CHECK(message([&] { SimpleRNN(3, rd); }).find("recurrent_dropout 0.2 is not supported") != std::string::npos);
  CHECK(message([] { LSTM(3)(Input({5})); }).find("expects inputs (batch, time, features)") != std::string::npos);
  CHECK(message([] { Bidirectional(Dense(3)); }).find("wraps an LSTM, GRU or SimpleRNN layer, got Dense") !=
        std::string::npos);
  CHECK(message([] { Bidirectional(LSTM(3), "max"); }).find("merge_mode must be") != std::string::npos);
  RNNOptions rn;
  rn.bias_initializer = RandomNormal();
  CHECK(message([&] { LSTM(3, rn)(Input({4, 2})); }).find("unit_forget_bias needs a constant bias_initializer") !=
        std::string::npos);
}

TEST_CASE("a model with recurrent layers saves its weights and loads them into a fresh model") {
  auto make = [] {
    RNNOptions seq;
    seq.return_sequences = true;
    auto m = std::make_unique<Sequential>(TensorShape({6, 3}), std::vector<LayerPtr>{
        Bidirectional(LSTM(4, seq)), GRU(3, RNNOptions{.return_sequences = true, .reset_after = false}), SimpleRNN(2), Dense(2)});
    CompileOptions o;
    o.optimizer = SGD(0.1);
    o.seed = 7;
    m->Compile(o);
    return m;
  };
  std::vector<float> xv(5 * 6 * 3);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.37f * static_cast<float>(i));
  const Tensor x = Tensor::FromVector<float>(xv, TensorShape({5, 6, 3}));
  const Tensor y = Tensor::FromVector<int32_t>({0, 1, 1, 0, 1}, TensorShape({5}));
  auto a = make();
  a->TrainOnBatch(x, y);  // weights away from their initial values
  const std::string path = (std::filesystem::temp_directory_path() / "weft_rnn_weights.weft").string();
  a->SaveWeights(path);
  auto b = make();
  b->LoadWeights(path);
  std::filesystem::remove(path);
  const Tensor pa = a->Predict(x), pb = b->Predict(x);
  REQUIRE(pa.shape() == TensorShape({5, 2}));
  for (int64_t i = 0; i < pa.num_elements(); ++i) CHECK(pa.data<float>()[i] == pb.data<float>()[i]);
}

// Keras' cells called by themselves: a (batch, features) input is one step from given states,
// built from MatMul / BiasAdd / activations. Stepped through the golden sequence from zero states
// it gives TensorFlow's outputs; from other states its values and gradients are those of the
// fused sequence op run over that one step.
TEST_CASE("a cell step (batch, features) is one step of the layer's sequence, values and gradients") {
  struct Case {
    const char* name;
    LayerPtr layer;
    size_t states;
  };
  RNNOptions before = Seq();
  before.reset_after = false;
  auto wave = [](std::vector<int64_t> dims, float phase) {  // deterministic values in [-1, 1]
    std::vector<float> v(static_cast<size_t>(TensorShape(dims).num_elements()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.7f * static_cast<float>(i) + phase);
    return Tensor::FromVector<float>(v, TensorShape(dims));
  };
  for (Case c : {Case{"lstm", LSTM(H, Seq()), 2}, Case{"gru", GRU(H, Seq()), 1},
                 Case{"gru_reset_before", GRU(H, before), 1}, Case{"simple_rnn", SimpleRNN(H, Seq()), 1}}) {
    CAPTURE(c.name);
    const std::string name = c.name;
    std::vector<Sym> ins = {Input({I})};
    for (size_t i = 0; i < c.states; ++i) ins.push_back(Input({H}));
    REQUIRE(c.layer->Outputs(ins).size() == 1 + c.states);  // output, then the new states
    Graph g;
    Scope s = Scope::Root(&g);
    std::vector<Output> w;
    std::vector<std::pair<Output, Tensor>> feeds;
    for (size_t k = 0; k < c.layer->weights().size(); ++k) {
      const TensorShape& shape = c.layer->weights()[k].shape;
      w.push_back(ops::Placeholder(s, DType::kFloat32, shape));
      feeds.emplace_back(w.back(), Stored(name + ".w" + std::to_string(k), shape.dims()));
    }
    // Stepped by hand from zeros: each step's output is TensorFlow's.
    Output x = ops::Placeholder(s, DType::kFloat32, TensorShape({B, T, I}));
    feeds.emplace_back(x, Stored(name + ".x", {B, T, I}));
    std::vector<Output> st(c.states, ops::Const(s, Tensor::Zeros(DType::kFloat32, TensorShape({B, H}))));
    std::vector<Output> steps;
    for (int64_t t = 0; t < T; ++t) {
      CallContext ctx{s.NewSubScope("step"), false, w, nullptr};
      std::vector<Output> in = {ops::Reshape(s, ops::Slice(s, x, {0, t, 0}, {B, 1, I}), std::vector<int64_t>{B, I})};
      in.insert(in.end(), st.begin(), st.end());
      const std::vector<Output> out = c.layer->CallOutputs(ctx, in);
      REQUIRE(out.size() == 1 + c.states);
      steps.push_back(ops::ExpandDims(s, out[0], 1));
      st.assign(out.begin() + 1, out.end());
    }
    // One step from other states, as a step and as a one-step sequence; gradients of sum(y * r).
    std::vector<Output> args = {ops::Placeholder(s, DType::kFloat32, TensorShape({B, I}))};
    feeds.emplace_back(args[0], wave({B, I}, 0.1f));
    for (size_t i = 0; i < c.states; ++i) {
      args.push_back(ops::Placeholder(s, DType::kFloat32, TensorShape({B, H})));
      feeds.emplace_back(args.back(), wave({B, H}, 1.0f + static_cast<float>(i)));
    }
    CallContext sc{s.NewSubScope("one"), false, w, nullptr};
    const Output a = c.layer->CallOutputs(sc, args)[0];
    CallContext qc{s.NewSubScope("seq"), false, w, nullptr};
    std::vector<Output> seq = args;
    seq[0] = ops::ExpandDims(s, args[0], 1);
    const Output b = ops::Squeeze(s, c.layer->CallOutputs(qc, seq)[0], {1});
    const Output r = ops::Const(s, wave({B, H}, 2.5f));
    std::vector<Output> wrt = args;
    wrt.insert(wrt.end(), w.begin(), w.end());
    const std::vector<Output> da = Gradients(s, {ops::Sum(s, ops::Mul(s, a, r))}, wrt);
    const std::vector<Output> db = Gradients(s, {ops::Sum(s, ops::Mul(s, b, r))}, wrt);
    std::vector<Output> fetch = {ops::Concat(s, steps, 1), a, b};
    fetch.insert(fetch.end(), da.begin(), da.end());
    fetch.insert(fetch.end(), db.begin(), db.end());
    Session sess(&g);
    const std::vector<Tensor> got = sess.Run(feeds, fetch);
    ExpectClose(got[0], Stored(name + ".y", {B, T, H}), "stepped outputs");
    ExpectClose(got[1], got[2], "one step against the sequence op", 1e-5);
    for (size_t k = 0; k < wrt.size(); ++k) {
      ExpectClose(got[3 + k], got[3 + wrt.size() + k], "gradient " + std::to_string(k), 1e-4);
    }
  }
  // Bad states name the cell, the expected and the given shapes.
  auto message = [](auto f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message([] { LSTM(3)->Outputs({Input({4}), Input({3}), Input({5})}); })
            .find("LSTMCell 'lstm_cell': states[1] must be (batch, units) = (None, 3), got [?,5]") !=
        std::string::npos);
  CHECK(message([] { GRU(3)->Outputs({Input({4})}); }).find("GRUCell(inputs, states) with 1 state [h]") !=
        std::string::npos);
}
