// Distribution strategies with the Keras-style API: MirroredStrategy and CentralStorageStrategy
// on two CPU devices train to the same weights as one device; mirrored copies stay identical.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "train/strategy.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/kernel.h"
#include "ops/math.h"
#include "data/dataset.h"
#include "data/datasets.h"
#include "train/model.h"
#include "zoo/models.h"

using namespace weft;
using namespace weft::train;
using namespace weft::data;

namespace {

CompileOptions Options() {
  CompileOptions o;
  o.loss = SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = SGD(0.05, 0.9);
  o.metrics = {"accuracy"};
  o.session.inter_op_threads = 2;
  o.session.intra_op_threads = 2;
  o.seed = 7;
  return o;
}

std::unique_ptr<Model> TrainCnn(const Strategy* strategy, int steps) {
  static const ArrayData data = Synthetic(128 * 20, {28, 28, 1}, 10, 3);
  std::optional<Strategy::ScopeGuard> scope;
  if (strategy != nullptr) scope.emplace(strategy);
  std::unique_ptr<Model> m = zoo::FindZooModel("mnist_cnn").build({28, 28, 1}, 10);
  m->Compile(Options());
  FitOptions fo;
  fo.batch_size = 128;
  fo.epochs = 1;
  fo.steps_per_epoch = steps;
  fo.shuffle_seed = 11;
  fo.verbose = 0;
  m->Fit(data.x, data.y, fo);
  return m;
}

// A variable's value fetched through the session: on the host wherever the variable lives.
Tensor Value(Model& m, const std::string& name) {
  REQUIRE_MESSAGE(m.session()->vars().Find(name) != nullptr, name);
  return m.session()->Run({}, {m.session()->graph()->FindOutput(name)})[0];
}

double MaxRelativeDifference(const Tensor& a, const Tensor& b) {
  double worst = 0, scale = 1e-6;
  for (int64_t i = 0; i < a.num_elements(); ++i) scale = std::max(scale, std::abs(a.ElementAsDouble(i)));
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    worst = std::max(worst, std::abs(a.ElementAsDouble(i) - b.ElementAsDouble(i)) / scale);
  }
  return worst;
}

// MirroredStrategy that records the kind of step id each Run of its models asks for, as
// MultiWorkerMirroredStrategy's next_step_id is asked across processes.
class StepKindRecorder : public MirroredStrategy {
 public:
  StepKindRecorder() : MirroredStrategy(2) {}
  void ConfigureSession(SessionOptions* o) const override {
    o->next_step_id = [this](bool collective) {
      std::lock_guard<std::mutex> l(mu_);
      asked_.push_back(collective);
      return static_cast<uint64_t>(asked_.size());
    };
  }
  std::vector<bool> asked() const {
    std::lock_guard<std::mutex> l(mu_);
    return asked_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::vector<bool> asked_;
};

}  // namespace

TEST_CASE("strategies: a training step is a collective step on any thread; evaluation is local") {
  StepKindRecorder strategy;
  const ArrayData data = Synthetic(64, {28, 28, 1}, 10, 3);
  std::unique_ptr<Model> m;
  {
    auto scope = strategy.scope();
    m = zoo::FindZooModel("mlp").build({28, 28, 1}, 10);
    m->Compile(Options());  // initializes the variables: local steps (one process: no broadcast)
  }
  const std::vector<bool> compiled = strategy.asked();
  REQUIRE_FALSE(compiled.empty());
  CHECK(std::find(compiled.begin(), compiled.end(), true) == compiled.end());
  // Outside the scope and on a thread that did not compile: the step itself says it is collective.
  std::thread other([&] { m->TrainOnBatch(data.x, data.y); });
  other.join();
  std::vector<bool> asked = strategy.asked();
  REQUIRE(asked.size() == compiled.size() + 1);
  CHECK(asked.back());
  m->Evaluate(data.x, data.y, /*batch_size=*/64);
  asked = strategy.asked();
  REQUIRE(asked.size() == compiled.size() + 2);
  CHECK_FALSE(asked.back());
}

TEST_CASE("strategies: mirrored and central storage on 2 devices match one device (mnist_cnn, 20 steps)") {
  OneDeviceStrategy one("/device:CPU:0");
  MirroredStrategy mirrored(2);
  CentralStorageStrategy central(2);
  auto reference = TrainCnn(&one, 20);
  auto m = TrainCnn(&mirrored, 20);
  auto c = TrainCnn(&central, 20);
  CHECK(m->step() == 20);
  for (const std::string& name : reference->VariableNames()) {
    if (name == "step") continue;
    CAPTURE(name);
    CHECK(MaxRelativeDifference(Value(*reference, name), Value(*m, name)) < 1e-5);
    CHECK(MaxRelativeDifference(Value(*reference, name), Value(*c, name)) < 1e-5);
  }
  // The mirrored copies are bit-identical (the all-reduce sums in rank order on both devices).
  for (const char* name : {"conv2d/kernel", "dense/kernel", "dense_1/bias", "dense/kernel/momentum"}) {
    CAPTURE(name);
    Tensor a = Value(*m, name), b = Value(*m, std::string(name).find("momentum") != std::string::npos
                                                  ? "dense/kernel/replica_1/momentum"
                                                  : std::string(name) + "/replica_1");
    CHECK(std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0);
  }
  // The replicated step really runs on both devices, joined by collectives.
  int collectives = 0, devices_used = 0;
  for (Node* n : m->graph()->nodes()) collectives += n->op() == "CollectiveReduce";
  CHECK(collectives == 2 * 6);  // 6 trainable variables, one per replica each
  (void)devices_used;
}

TEST_CASE("strategies: a model created outside the scope cannot be compiled inside it") {
  MirroredStrategy mirrored(2);
  std::unique_ptr<Model> m = zoo::FindZooModel("mlp").build({28, 28, 1}, 10);
  auto scope = mirrored.scope();
  CHECK_THROWS_WITH_AS(m->Compile(Options()), doctest::Contains("created outside MirroredStrategy.scope()"), Error);
}

TEST_CASE("strategies: run, reduce and batch splitting in the graph API") {
  MirroredStrategy s(2);
  CHECK(s.num_replicas_in_sync() == 2);
  Graph g;
  Scope root = Scope::Root(&g);
  Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat32, {});
  std::vector<Output> per = s.Run(root, [&](const Scope& rs, int r) {
    return ops::Mul(rs, x, ops::Const(rs, static_cast<float>(r + 1)));
  });
  Output sum = s.Reduce(root, Strategy::ReduceOp::kSum, per);
  Output mean = s.Reduce(root, Strategy::ReduceOp::kMean, per);
  SessionOptions so;
  so.num_cpu_devices = s.num_cpu_devices();
  Session sess(&g, so);
  auto out = sess.Run({{x, Tensor::Scalar<float>(2)}}, {sum, mean});
  CHECK(out[0].scalar<float>()() == 6.0f);
  CHECK(out[1].scalar<float>()() == 3.0f);
  CHECK(per[1].node->requested_device().find("CPU:1") != std::string::npos);

  auto parts = s.SplitBatch({Tensor::FromVector<float>({0, 1, 2, 3, 4}, {5}), Tensor::FromVector<int32_t>({5, 6, 7, 8, 9}, {5})});
  REQUIRE(parts.size() == 2);
  CHECK(parts[0][0].ToVector<float>() == std::vector<float>{0, 1, 2});
  CHECK(parts[1][1].ToVector<int32_t>() == std::vector<int32_t>{8, 9});
  CHECK_THROWS_WITH_AS(s.SplitBatch({Tensor::FromVector<float>({1}, {1})}), doctest::Contains("cannot be split"),
                       Error);
  CHECK_THROWS_WITH_AS(MirroredStrategy({"/device:CPU:0", "/device:CPU:0"}), doctest::Contains("listed twice"), Error);

  Dataset global = Dataset::FromTensors({Tensor::FromVector<float>({0, 1, 2, 3, 4, 5, 6}, {7})}).Batch(4);
  auto it = s.ExperimentalDistributeDataset(global).MakeIterator();
  Element e;
  REQUIRE(it->Next(&e));
  REQUIRE(e.size() == 2);  // replica 0's part, replica 1's part
  CHECK(e[0].ToVector<float>() == std::vector<float>{0, 1});
  CHECK(e[1].ToVector<float>() == std::vector<float>{2, 3});
  REQUIRE(it->Next(&e));
  CHECK(e[0].ToVector<float>() == std::vector<float>{4, 5});
  CHECK(e[1].ToVector<float>() == std::vector<float>{6});
}

TEST_CASE("strategies: loading weights into a mirrored model fills every copy") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("weft_strategy_" + std::to_string(getpid()) + ".weft")).string();
  auto single = TrainCnn(nullptr, 3);
  single->SaveWeights(path);
  MirroredStrategy mirrored(2);
  std::unique_ptr<Model> m;
  {
    auto scope = mirrored.scope();
    m = zoo::FindZooModel("mnist_cnn").build({28, 28, 1}, 10);
    m->Compile(Options());
  }
  m->LoadWeights(path);
  CHECK(m->step() == 3);
  Tensor a = Value(*single, "dense/kernel"), b = Value(*m, "dense/kernel/replica_1");
  CHECK(std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0);
  std::filesystem::remove(path);
}

TEST_CASE("model parallelism: layers pinned to two devices train like one device") {
  static const ArrayData data = Synthetic(64 * 10, {28, 28, 1}, 10, 5);
  auto build = [](bool pinned) {
    auto on = [&](LayerPtr l, const char* d) { return pinned ? l.OnDevice(d) : l; };
    auto m = std::make_unique<Sequential>(
        TensorShape({28, 28, 1}),
        std::vector<LayerPtr>{on(Conv2D(8, 3, {.activation = "relu"}), "/device:CPU:0"), on(MaxPool2D(2), "/device:CPU:0"),
                              on(Flatten(), "/device:CPU:0"), on(Dense(16, {.activation = "relu"}), "/device:CPU:1"),
                              on(Dense(10), "/device:CPU:1")});
    m->Compile(Options());
    FitOptions fo;
    fo.batch_size = 64;
    fo.verbose = 0;
    m->Fit(data.x, data.y, fo);
    return m;
  };
  auto plain = build(false), pinned = build(true);
  const auto parts = pinned->TrainStepPartitions();
  REQUIRE(parts.size() == 2);
  int sends = 0;
  for (const auto& [d, g] : parts) {
    for (Node* n : g->nodes()) sends += n->op() == "_Send";
  }
  CHECK(sends >= 2);  // activations forward, their gradient back (and the step's control edges)
  CHECK(pinned->session()->vars().Find("dense/kernel") != nullptr);
  for (const std::string& name : plain->VariableNames()) {
    CAPTURE(name);
    CHECK(MaxRelativeDifference(Value(*plain, name), Value(*pinned, name)) < 1e-5);
  }
  MirroredStrategy mirrored(2);
  auto scope = mirrored.scope();
  Sequential mixed({4}, {Dense(2).OnDevice("/device:CPU:1")});
  CHECK_THROWS_WITH_AS(mixed.Compile(Options()), doctest::Contains("do not mix"), Error);
}

TEST_CASE("strategies: the status board counts training steps, their rate and the collectives' time") {
  MirroredStrategy strategy(2);
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "weft_strategy_status_test.txt";
  std::filesystem::remove(file);
  strategy.set_status_file(file.string());
  const ArrayData data = Synthetic(64, {28, 28, 1}, 10, 3);
  std::unique_ptr<Model> m;
  {
    auto scope = strategy.scope();
    m = zoo::FindZooModel("mlp").build({28, 28, 1}, 10);
    m->Compile(Options());
  }
  CHECK(strategy.status().step == 0);
  for (int i = 0; i < 5; ++i) m->TrainOnBatch(data.x, data.y);
  const StrategyStatus st = strategy.status();
  CHECK(st.step == 5);
  CHECK(st.images_per_second > 0);
  // The replicas' gradients are all-reduced every step: some of the step is in collectives.
  CHECK(st.collective_seconds > 0);
  CHECK(st.collective_fraction > 0);
  CHECK(st.collective_fraction <= 1);
  m->Evaluate(data.x, data.y, 64);  // not a training step
  CHECK(strategy.status().step == 5);
  // The first step wrote the file (then at most once a second), whole: a temporary file renamed.
  std::ifstream in(file);
  std::map<std::string, double> values;
  std::string key;
  double value = 0;
  while (in >> key >> value) values[key] = value;
  CHECK(values.size() == 4);
  CHECK(values.count("step") == 1);
  CHECK(values["step"] >= 1);
  for (const char* k : {"images_per_second", "collective_fraction", "collective_seconds"}) CHECK(values.count(k) == 1);
  CHECK_FALSE(std::filesystem::exists(file.string() + ".tmp"));
  std::filesystem::remove(file);
}
