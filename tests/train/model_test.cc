// Models end to end: Compile/Fit/Evaluate/Predict, optimizers and schedules, losses, weights
// save/load, resume, callbacks and the errors of misuse.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ops/framework.h"
#include "ops/kernel.h"
#include "train/callbacks.h"
#include "data/dataset.h"
#include "data/datasets.h"
#include "train/model.h"

using namespace weft;
using namespace weft::train;
using namespace weft::data;

namespace {

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("weft_model_test_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

CompileOptions Options(Optimizer opt, std::vector<Metric> metrics = {"accuracy"}) {
  CompileOptions o;
  o.loss = SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = std::move(opt);
  o.metrics = std::move(metrics);
  o.session.inter_op_threads = 1;  // one thread: bit-reproducible runs
  o.session.intra_op_threads = 1;
  o.seed = 3;
  return o;
}

std::unique_ptr<Model> SmallMlp(double l2 = 0.0) {
  return std::make_unique<Sequential>(
      TensorShape({32}),
      std::vector<LayerPtr>{Dense(16, {.activation = "relu", .kernel_l2 = l2}), Dense(4)}, "small");
}

// A variable's value fetched through the session: on the host wherever the variable lives (a GPU
// variable's buffer is device memory, which the test cannot read directly).
Tensor VarValue(Model& m, const std::string& name) {
  REQUIRE(m.session()->vars().Find(name) != nullptr);
  return m.session()->Run({}, {m.session()->graph()->FindOutput(name)})[0];
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0;
}

const ArrayData& Data() {
  static const ArrayData d = Synthetic(1200, {32}, 4, 11);
  return d;
}

}  // namespace

TEST_CASE("model: fit learns, history and evaluate agree, predict matches") {
  auto m = SmallMlp();
  m->Compile(Options(SGD(0.1, 0.9)));
  FitOptions fo;
  fo.batch_size = 32;
  fo.epochs = 4;
  fo.verbose = 0;
  History h = m->Fit(Data().x, Data().y, fo);
  REQUIRE(h.history["loss"].size() == 4);
  CHECK(h.history["loss"].back() < h.history["loss"].front());
  CHECK(h.history["accuracy"].back() > 0.9);
  CHECK(m->step() == 4 * 38);  // ceil(1200 / 32) steps per epoch

  // The weighted mean over batches does not depend on the batch size.
  Logs whole = m->Evaluate(Data().x, Data().y, 1200);
  Logs batched = m->Evaluate(Data().x, Data().y, 7);
  CHECK(batched["loss"] == doctest::Approx(whole["loss"]).epsilon(1e-4));
  CHECK(batched["accuracy"] == doctest::Approx(whole["accuracy"]).epsilon(1e-6));

  Tensor p = m->Predict(Data().x, 50);
  REQUIRE(p.shape() == TensorShape({1200, 4}));
  int correct = 0;
  for (int64_t i = 0; i < 1200; ++i) {
    int best = 0;
    for (int k = 1; k < 4; ++k) best = p.matrix<float>()(i, k) > p.matrix<float>()(i, best) ? k : best;
    correct += best == Data().y.flat<int32_t>()(i);
  }
  CHECK(correct / 1200.0 == doctest::Approx(whole["accuracy"]).epsilon(1e-6));
}

TEST_CASE("model: adam and nesterov learn; steps_per_epoch; validation logs") {
  for (Optimizer opt : {Adam(0.01), SGD(0.05, 0.9, /*nesterov=*/true), SGD(LinearWarmup(CosineDecay(0.2, 100), 10))}) {
    CAPTURE(opt.ToString());
    auto m = SmallMlp();
    m->Compile(Options(opt));
    FitOptions fo;
    fo.batch_size = 40;
    fo.epochs = 3;
    fo.steps_per_epoch = 10;
    fo.verbose = 0;
    fo.validation_x = &Data().x;
    fo.validation_y = &Data().y;
    History h = m->Fit(Data().x, Data().y, fo);
    CHECK(m->step() == 30);
    CHECK(h.history.count("val_loss") == 1);
    CHECK(h.history["val_accuracy"].back() > 0.8);
  }
}

TEST_CASE("model: fit prints its epoch headings and progress to progress_out, and nothing to stdout") {
  auto m = SmallMlp();
  m->Compile(Options(SGD(0.1)));
  const std::string dir = TempDir("progress");
  const std::string progress_path = dir + "/progress.txt", stdout_path = dir + "/stdout.txt";
  std::FILE* progress = std::fopen(progress_path.c_str(), "w");
  REQUIRE(progress != nullptr);
  FitOptions fo;
  fo.batch_size = 40;
  fo.epochs = 2;
  fo.steps_per_epoch = 5;
  fo.progress_out = progress;
  {
    // File descriptor 1 goes to a file while Fit runs, to see that Fit writes nothing there.
    struct Redirect {
      int saved = -1;
      explicit Redirect(const std::string& path) {
        std::fflush(stdout);
        const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) return;
        saved = dup(1);
        dup2(fd, 1);
        close(fd);
      }
      ~Redirect() {
        std::fflush(stdout);
        if (saved >= 0) {
          dup2(saved, 1);
          close(saved);
        }
      }
    } redirect(stdout_path);
    REQUIRE(redirect.saved >= 0);
    m->Fit(Data().x, Data().y, fo);
  }
  std::fclose(progress);

  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string out = read(progress_path);
  CAPTURE(out);
  const size_t e1 = out.find("Epoch 1/2\n"), e2 = out.find("Epoch 2/2\n");
  REQUIRE(e1 != std::string::npos);
  REQUIRE(e2 != std::string::npos);
  CHECK(e1 < e2);
  // Each epoch's heading comes before its final bar line.
  const size_t bar1 = out.find("5/5 [==============================]"), bar2 = out.rfind("5/5 [");
  CHECK((e1 < bar1 && bar1 < e2 && e2 < bar2));
  CHECK(out.find(" - loss: ") != std::string::npos);
  CHECK(read(stdout_path).empty());

  fo.progress_out = nullptr;
  CHECK_THROWS_WITH_AS(m->Fit(Data().x, Data().y, fo), doctest::Contains("progress_out is null"), Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("schedules: warm-up, step and cosine decay") {
  CHECK((*ConstantLR(0.1))(1000) == 0.1);
  Schedule step = StepDecay(1.0, 10, 0.5);
  CHECK((*step)(9) == 1.0);
  CHECK((*step)(10) == 0.5);
  CHECK((*step)(25) == 0.25);
  Schedule cosine = CosineDecay(1.0, 100, 0.1);
  CHECK((*cosine)(0) == doctest::Approx(1.0));
  CHECK((*cosine)(50) == doctest::Approx(0.55));
  CHECK((*cosine)(100) == doctest::Approx(0.1));
  CHECK((*cosine)(500) == doctest::Approx(0.1));
  Schedule warm = LinearWarmup(ConstantLR(0.4), 4);
  CHECK((*warm)(0) == doctest::Approx(0.1));
  CHECK((*warm)(3) == doctest::Approx(0.4));
  CHECK((*warm)(9) == doctest::Approx(0.4));
  CHECK_THROWS_WITH_AS(StepDecay(0.1, 0), doctest::Contains("step_size"), Error);
  CHECK_THROWS_WITH_AS(SGD(0.1, 1.5), doctest::Contains("momentum"), Error);
  CHECK_THROWS_WITH_AS(OptimizerByName("lbfgs"), doctest::Contains("unknown optimizer"), Error);
}

TEST_CASE("losses: values against hand computation") {
  Sym x = Input({3});
  Model id({x}, {Activation("linear")(x)});
  const Tensor pred = Tensor::FromVector<float>({0.7f, 0.2f, 0.1f, 0.1f, 0.1f, 0.8f}, {2, 3});
  const Tensor onehot = Tensor::FromVector<float>({1, 0, 0, 0, 1, 0}, {2, 3});
  const Tensor sparse = Tensor::FromVector<int32_t>({0, 1}, {2});
  const double ce = -(std::log(0.7) + std::log(0.1)) / 2;
  auto eval = [&](Loss loss, const Tensor& y) {
    CompileOptions o;
    o.loss = loss;
    id.Compile(o);
    return id.Evaluate(pred, y)["loss"];
  };
  CHECK(eval(SparseCategoricalCrossentropy(), sparse) == doctest::Approx(ce).epsilon(1e-5));
  CHECK(eval(CategoricalCrossentropy(), onehot) == doctest::Approx(ce).epsilon(1e-5));
  double mse = 0;
  for (int i = 0; i < 6; ++i) mse += std::pow(pred.flat<float>()(i) - onehot.flat<float>()(i), 2);
  CHECK(eval(MeanSquaredError(), onehot) == doctest::Approx(mse / 6).epsilon(1e-5));
  // from_logits: softmax cross-entropy of the logits.
  const double lse0 = std::log(std::exp(0.7) + std::exp(0.2) + std::exp(0.1));
  const double lse1 = std::log(std::exp(0.1) + std::exp(0.1) + std::exp(0.8));
  CHECK(eval(SparseCategoricalCrossentropy(true), sparse) ==
        doctest::Approx(((lse0 - 0.7) + (lse1 - 0.1)) / 2).epsilon(1e-5));
  CHECK_THROWS_WITH_AS(LossByName("focal"), doctest::Contains("unknown loss"), Error);
}

TEST_CASE("model: L2 kernel regularization adds l2 * sum(w^2) to the loss") {
  auto plain = SmallMlp(), reg = SmallMlp(0.01);
  plain->Compile(Options(SGD(0.1)));
  reg->Compile(Options(SGD(0.1)));  // same seed: same initial weights
  Tensor k = VarValue(*reg, "dense/kernel");
  double sq = 0;
  for (int64_t i = 0; i < k.num_elements(); ++i) sq += std::pow(k.flat<float>()(i), 2);
  const double diff = reg->Evaluate(Data().x, Data().y)["loss"] - plain->Evaluate(Data().x, Data().y)["loss"];
  CHECK(diff == doctest::Approx(0.01 * sq).epsilon(1e-3));
}

TEST_CASE("model: batch norm updates its moving averages; dropout only in training") {
  Sequential m({32}, {Dense(16), BatchNormalization(0.5), ReLU(), Dropout(0.3), Dense(4)});
  m.Compile(Options(SGD(0.05, 0.9)));
  CHECK(VarValue(m, "batch_normalization/moving_mean").flat<float>()(0) == 0.0f);
  FitOptions fo;
  fo.epochs = 2;
  fo.verbose = 0;
  History h = m.Fit(Data().x, Data().y, fo);
  CHECK(VarValue(m, "batch_normalization/moving_mean").flat<float>()(0) != 0.0f);
  CHECK(VarValue(m, "batch_normalization/moving_variance").flat<float>()(0) != 1.0f);
  CHECK(m.Evaluate(Data().x, Data().y)["accuracy"] > 0.85);
  // Inference is deterministic (no dropout): two predictions agree exactly.
  CHECK(SameBits(m.Predict(Data().x), m.Predict(Data().x)));
}

TEST_CASE("model: save and load weights; resume equals uninterrupted training") {
  const std::string dir = TempDir("resume");
  FitOptions fo;
  fo.batch_size = 64;
  fo.verbose = 0;
  fo.shuffle_seed = 5;

  auto straight = SmallMlp();
  straight->Compile(Options(SGD(0.05, 0.9)));
  fo.epochs = 2;
  straight->Fit(Data().x, Data().y, fo);

  auto first = SmallMlp();
  first->Compile(Options(SGD(0.05, 0.9)));
  fo.epochs = 1;
  first->Fit(Data().x, Data().y, fo);
  first->SaveWeights(dir + "/ckpt.weft");

  auto resumed = SmallMlp();
  resumed->Compile(Options(SGD(0.05, 0.9)));
  resumed->LoadWeights(dir + "/ckpt.weft");
  CHECK(resumed->step() == first->step());
  CHECK(SameBits(resumed->Predict(Data().x), first->Predict(Data().x)));
  fo.epochs = 2;
  fo.initial_epoch = 1;
  resumed->Fit(Data().x, Data().y, fo);
  CHECK(resumed->step() == straight->step());
  for (const std::string& name : straight->VariableNames()) {
    CAPTURE(name);
    CHECK(SameBits(VarValue(*resumed, name), VarValue(*straight, name)));  // weights and momentum slots
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("model: loading a mismatched or missing checkpoint names the tensor") {
  const std::string dir = TempDir("mismatch");
  auto a = SmallMlp();
  a->Compile(Options(SGD(0.1)));
  a->SaveWeights(dir + "/a.weft");
  Sequential wider({32}, {Dense(17, {.activation = "relu"}), Dense(4)}, "wider");
  wider.Compile(Options(SGD(0.1)));
  CHECK_THROWS_WITH_AS(wider.LoadWeights(dir + "/a.weft"), doctest::Contains("dense/kernel"), Error);
  auto with_slots = SmallMlp();
  with_slots->Compile(Options(SGD(0.1, 0.9)));  // needs momentum slots the file lacks
  try {
    with_slots->LoadWeights(dir + "/a.weft");
    FAIL("expected NotFound");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kNotFound);
    CHECK(std::string(e.what()).find("/momentum") != std::string::npos);
  }
  CHECK_THROWS_AS(a->LoadWeights(dir + "/missing.weft"), Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("callbacks: early stopping, CSV logger, model checkpoint") {
  const std::string dir = TempDir("callbacks");
  auto m = SmallMlp();
  m->Compile(Options(SGD(0.05)));
  // No epoch improves the loss by 100, so training stops after 1 + patience epochs.
  auto stop = std::make_shared<EarlyStopping>("loss", /*patience=*/1, /*min_delta=*/100.0);
  auto csv = std::make_shared<CSVLogger>(dir + "/log.csv");
  auto save = std::make_shared<ModelCheckpoint>(dir + "/epoch-{epoch}.weft", "loss");
  FitOptions fo;
  fo.epochs = 10;
  fo.verbose = 0;
  fo.callbacks = {stop, csv, save};
  History h = m->Fit(Data().x, Data().y, fo);
  CHECK(h.epochs.size() == 3);
  CHECK(stop->stopped_epoch() == 2);
  std::ifstream in(dir + "/log.csv");
  std::string header, line;
  std::getline(in, header);
  CHECK(header == "epoch,accuracy,loss");
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  CHECK(rows == 3);
  CHECK(std::filesystem::exists(dir + "/epoch-3.weft"));
  CHECK(save->last_saved() == dir + "/epoch-3.weft");
  auto bad = std::make_shared<EarlyStopping>("val_loss");
  fo.callbacks = {bad};
  CHECK_THROWS_WITH_AS(m->Fit(Data().x, Data().y, fo), doctest::Contains("validation data"), Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("model: a Dataset as input, sharded") {
  auto m = SmallMlp();
  m->Compile(Options(SGD(0.1, 0.9)));
  Dataset d = Dataset::FromTensors({Data().x, Data().y}).Shard(2, 1).Shuffle(1).Batch(30);
  FitOptions fo;
  fo.epochs = 3;
  fo.verbose = 0;
  m->Fit(d, fo);
  CHECK(m->step() == 3 * 20);  // 600 examples in the shard
  CHECK(m->Evaluate(d)["accuracy"] > 0.9);
}

TEST_CASE("model: misuse gives clear errors") {
  auto m = SmallMlp();
  CHECK_THROWS_WITH_AS(m->Fit(Data().x, Data().y), doctest::Contains("call Compile before Fit"), Error);
  m->Compile(Options(SGD(0.1)));
  Tensor wrong = Tensor::Zeros(DType::kFloat32, {10, 9});  // the model takes 32 features
  CHECK_THROWS_WITH_AS(m->Fit(wrong, Tensor::Zeros(DType::kInt32, {10})), doctest::Contains("[10,9]"), Error);
  CHECK_THROWS_WITH_AS(m->Fit(Data().x, Tensor::Zeros(DType::kInt32, {5})), doctest::Contains("y has shape [5]"),
                       Error);
  CHECK_THROWS_WITH_AS(m->Evaluate(Data().x, Data().y, 0), doctest::Contains("batch_size"), Error);
  // An unknown metric name fails where it is named (CompileOptions' Metric from a string).
  CHECK_THROWS_WITH_AS(Options(SGD(0.1), {"precision@5"}), doctest::Contains("unknown metric"), Error);
  // Integer labels of another width and uint8 images are converted, as Keras does.
  Tensor y64(DType::kInt64, Data().y.shape());
  for (int64_t i = 0; i < y64.num_elements(); ++i) y64.flat<int64_t>()(i) = Data().y.flat<int32_t>()(i);
  CHECK(m->Evaluate(Data().x, y64)["loss"] > 0.0);
}

TEST_CASE("model: Apply builds the forward pass in another graph over that graph's weight tensors") {
  auto m = SmallMlp();
  m->Compile(Options(SGD(0.1)));
  const std::vector<std::string> names = m->LayerWeightNames();
  const std::vector<Tensor> weights = m->session()->Run(std::vector<std::pair<std::string, Tensor>>{}, names, {});
  // The weights as constants of a new graph: Apply must give what Predict gives.
  Graph g;
  Scope s = Scope::Root(&g);
  std::vector<Output> ws;
  for (const Tensor& w : weights) ws.push_back(ops::Const(s, w));
  Output x = ops::Placeholder(s, DType::kFloat32, TensorShape({-1, 32}));
  Output y = m->Apply(s, {x}, /*training=*/false, ws, nullptr, nullptr).at(0);
  CHECK(y.shape() == TensorShape({-1, 4}));
  Session sess(&g);
  const Tensor got = sess.Run({{x, Data().x}}, {y})[0];
  const Tensor want = m->Predict(Data().x, 1200);
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < got.num_elements(); ++i) CHECK(got.flat<float>()(i) == doctest::Approx(want.flat<float>()(i)));
  // A wrong count or shape names the model and the weight.
  CHECK_THROWS_WITH_AS(m->Apply(s, {x}, false, {ws[0]}, nullptr, nullptr), doctest::Contains("needs 'bias'"), Error);
  std::vector<Output> bad = ws;
  bad[1] = ops::Const(s, Tensor(DType::kFloat32, TensorShape({3})));
  CHECK_THROWS_WITH_AS(m->Apply(s, {x}, false, bad, nullptr, nullptr), doctest::Contains("dense/bias"), Error);
}
