// Layer calls with several outputs (return_state), models with several inputs and outputs,
// integer model inputs and Keras masks (train/layer.h, train/model.h, train/layers_rnn.h).
// TensorFlow's values for these are checked from Python (tests/python/test_keras_seq2seq.py,
// test_keras_mask.py); here: shapes, the C++ API, errors, and the masking invariant that a
// masked step is skipped (a padded sequence gives what the unpadded one gives).
#include <doctest/doctest.h>

#include <cmath>

#include "ops/rnn.h"
#include "train/layers_rnn.h"
#include "train/model.h"

#include "layer_test_util.h"

using namespace weft;
using namespace weft::train;
using namespace weft::test::layers;

namespace {

Tensor Ids(const std::vector<int32_t>& ids, int64_t rows) {
  return Tensor::FromVector<int32_t>(ids, {rows, static_cast<int64_t>(ids.size()) / rows});
}

std::vector<float> Values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements()); }

}  // namespace

TEST_CASE("a layer call with return_state has the output and the final states") {
  Sym x = Input({5, 3});
  std::vector<Sym> lstm = LSTM(4, {.return_state = true})->Outputs({x});
  REQUIRE(lstm.size() == 3);
  CHECK(ShapeOf(lstm[0]) == "[?,4]");
  CHECK(ShapeOf(lstm[2]) == "[?,4]");
  CHECK(lstm[2]->index == 2);
  CHECK(lstm[2]->call() == lstm[0].get());
  std::vector<Sym> gru = GRU(2, {.return_sequences = true, .return_state = true})->Outputs({x});
  REQUIRE(gru.size() == 2);
  CHECK(ShapeOf(gru[0]) == "[?,5,2]");
  std::vector<Sym> bi = Bidirectional(LSTM(3, {.return_state = true}))->Outputs({x});
  CHECK(bi.size() == 5);  // merged, forward h and c, backward h and c
  CHECK(ShapeOf(bi[0]) == "[?,6]");
  // operator() is for one output; the message names the alternative.
  CHECK(ErrorOf([&] { (*LSTM(4, {.return_state = true}))(x); }).find("take them all with Outputs()") !=
        std::string::npos);
  // initial_state: the states' shapes are checked against units.
  CHECK(ErrorOf([&] { LSTM(4)->Outputs({x, lstm[1]}); }).find("1 (the sequence) or 3") != std::string::npos);
  Sym wrong = Input({3});
  CHECK(ErrorOf([&] { GRU(4)->Outputs({x, wrong}); }).find("initial_state[0] must be (batch, units=4)") !=
        std::string::npos);
}

TEST_CASE("a two-input, two-output model trains through the encoder's final states") {
  Sym enc = Input({4, 3}, "enc"), dec = Input({3, 2}, "dec");
  LayerPtr encoder = LSTM(5, {.return_state = true});
  std::vector<Sym> e = encoder->Outputs({enc});
  Sym d = LSTM(5, {.return_sequences = true})->Outputs({dec, e[1], e[2]})[0];
  Model model({enc, dec}, {Dense(2)(d), e[1]});
  CHECK(model.num_inputs() == 2);
  CHECK(model.num_outputs() == 2);
  model.Compile({.loss = MeanSquaredError(), .optimizer = SGD(0.5), .seed = 3});
  Tensor a = Tensor::Zeros(DType::kFloat32, {8, 4, 3}), b = Tensor::Zeros(DType::kFloat32, {8, 3, 2});
  for (int64_t i = 0; i < a.num_elements(); ++i) a.data<float>()[i] = std::sin(0.7f * static_cast<float>(i));
  for (int64_t i = 0; i < b.num_elements(); ++i) b.data<float>()[i] = std::cos(0.3f * static_cast<float>(i));
  Tensor t1 = Tensor::Zeros(DType::kFloat32, {8, 3, 2}), t2 = Tensor::Zeros(DType::kFloat32, {8, 5});
  std::fill_n(t2.data<float>(), t2.num_elements(), 0.5f);
  const std::vector<Tensor> before = model.PredictAll({a, b});
  REQUIRE(before.size() == 2);
  CHECK(before[0].shape() == TensorShape({8, 3, 2}));
  CHECK(before[1].shape() == TensorShape({8, 5}));
  const double first = model.Evaluate({a, b}, {t1, t2})["loss"];
  model.Fit({a, b}, {t1, t2}, {.batch_size = 4, .epochs = 5, .shuffle = false, .verbose = 0});
  const std::vector<Tensor> after = model.PredictAll({a, b});
  // The loss on the encoder's h (output 1) moved the encoder: its h changed and the loss fell.
  CHECK(Values(after[1]) != Values(before[1]));
  CHECK(model.Evaluate({a, b}, {t1, t2})["loss"] < first);
  CHECK(ErrorOf([&] { model.Predict(a); }).find("use PredictAll") != std::string::npos);
  CHECK(ErrorOf([&] { model.PredictAll({a}); }).find("has 2 input(s), got 1") != std::string::npos);
  CHECK(ErrorOf([&] { model.PredictAll({a, a}); }).find("x[1] (input 'dec') has shape") != std::string::npos);
  CHECK(ErrorOf([&] { model.Fit({a, b}, {t1}); }).find("has 2 output(s), got 1 label array") != std::string::npos);
}

TEST_CASE("integer inputs reach Embedding as ids; other layers cast them") {
  Sym ids = Input({3}, "ids", DType::kInt32);
  CHECK(ids->dtype == DType::kInt32);
  Sym emb = Embedding(10, 2)(ids);
  CHECK(emb->dtype == DType::kFloat32);
  Sequential cast({3}, {Dense(1, {.use_bias = false, .kernel_initializer = Ones()})}, "cast", DType::kInt64);
  cast.Compile({.loss = MeanSquaredError()});
  CHECK(Values(cast.Predict(Tensor::FromVector<int64_t>({1, 2, 3}, {1, 3})))[0] == doctest::Approx(6.0));
  CHECK(ErrorOf([] { Input({2}, "x", DType::kFloat64); }).find("dtype must be float32, int32 or int64") !=
        std::string::npos);
}

TEST_CASE("masked steps are skipped: padding anywhere gives the unpadded sequence's outputs") {
  for (RnnCell cell : {RnnCell::kLSTM, RnnCell::kGRU, RnnCell::kSimple}) {
    for (bool backwards : {false, true}) {
      CAPTURE(static_cast<int>(cell));
      CAPTURE(backwards);
      Sym ids = Input({-1}, "ids", DType::kInt32);
      RNNOptions o{.return_state = true, .go_backwards = backwards};
      LayerPtr rnn = cell == RnnCell::kLSTM ? LSTM(3, o) : cell == RnnCell::kGRU ? GRU(3, o) : SimpleRNN(3, o);
      std::vector<Sym> out = rnn->Outputs({Embedding(9, 2, {.mask_zero = true})(ids)});
      Model model({ids}, out);
      model.Compile({.loss = MeanSquaredError(), .seed = 5});
      const std::vector<Tensor> plain = model.PredictAll({Ids({4, 7, 2, 5, 8, 1}, 2)});
      // The same rows padded at the end, at the start and in the middle.
      const std::vector<Tensor> padded = model.PredictAll({Ids({4, 7, 0, 2, 0, 0, 0, 5, 8, 0, 1, 0}, 2)});
      for (size_t i = 0; i < plain.size(); ++i) {
        const std::vector<float> p = Values(plain[i]), q = Values(padded[i]);
        REQUIRE(p.size() == q.size());
        for (size_t k = 0; k < p.size(); ++k) CHECK(q[k] == doctest::Approx(p[k]).epsilon(1e-5));
      }
      // A row with no kept step: the output is zeros and the states are the initial (zero) ones.
      for (const Tensor& t : model.PredictAll({Ids({0, 0, 0}, 1)})) {
        for (float v : Values(t)) CHECK(v == 0.0f);
      }
    }
  }
}
