// Pipeline parallelism (train/pipeline.h): stage assignment, the schedules' orders, and training
// under GPipe and 1F1B equal to single-device training over the same global batches (1e-5); bad
// input names what was wrong; a model over one device's memory budget trains in two stages.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "train/model.h"
#include "train/pipeline.h"
#include "tests/train/pipeline_fixtures.h"

using namespace weft;
using namespace weft::train;

namespace {

CompileOptions Options(Optimizer opt = SGD(0.2, 0.9)) { return test::PipelineCompileOptions(std::move(opt), 2); }
std::unique_ptr<Model> Mlp() { return test::PipelineMlp(); }
void Data(int64_t n, Tensor* x, Tensor* y) { test::PipelineData(n, x, y); }
using test::MaxDiff;
using test::Named;
using test::Weights;

// A functional model whose skip connection (d1 -> add) crosses the stage boundary at d2.
std::unique_ptr<Model> Skip() {
  Sym x = Input(TensorShape({6}));
  Sym a = Named(Dense(8, {.activation = "tanh"}), "d1")(x);
  Sym b = Named(Dense(8, {.activation = "tanh"}), "d2")(a);
  Sym c = Named(Dense(8, {.activation = "tanh"}), "d3")(b);
  Sym sum = Named(Add(), "add")({a, c});
  return std::make_unique<Model>(std::vector<Sym>{x}, std::vector<Sym>{Named(Dense(3), "out")(sum)}, "skip");
}

// `make()` trained under `pipeline` and on one device: the largest weight difference.
double PipelineVsSingle(const std::function<std::unique_ptr<Model>()>& make, PipelineOptions pipeline,
                        Optimizer opt = SGD(0.2, 0.9)) {
  return test::TrainedLikeOneDevice(PipelineStrategy(std::move(pipeline)), make, [&] { return Options(opt); });
}

}  // namespace

TEST_CASE("pipeline: GPipe and 1F1B training equal single-device training (1e-5)") {
  CHECK(PipelineVsSingle(Mlp, {.num_stages = 2, .micro_batches = 4}) < 1e-5);
  CHECK(PipelineVsSingle(Mlp, {.num_stages = 2, .micro_batches = 4, .schedule = PipelineSchedule::k1F1B}) < 1e-5);
  CHECK(PipelineVsSingle(Mlp, {.num_stages = 3, .micro_batches = 2, .schedule = PipelineSchedule::k1F1B}) < 1e-5);
  // Adam's slots live on each weight's stage too.
  CHECK(PipelineVsSingle(Mlp, {.num_stages = 2, .micro_batches = 2}, Adam(0.01)) < 1e-5);
}

TEST_CASE("pipeline: stages x replicas (2 x 2 CPU devices, gradients all-reduced per stage) equal single-device training") {
  CHECK(PipelineVsSingle(Mlp, {.num_stages = 2, .micro_batches = 2, .replicas = 2}) < 1e-5);
  CHECK(PipelineVsSingle(Mlp, {.num_stages = 2, .micro_batches = 2, .schedule = PipelineSchedule::k1F1B,
                               .replicas = 2}) < 1e-5);
  CHECK(PipelineVsSingle(Skip, {.num_stages = 2, .micro_batches = 4, .schedule = PipelineSchedule::k1F1B,
                                .boundaries = {"d2"}, .replicas = 2}, Adam(0.01)) < 1e-5);
  CHECK(PipelineVsSingle(Mlp, {.num_stages = 3, .micro_batches = 1, .replicas = 2}, Adam(0.01)) < 1e-5);
  // Each replica's copy of a stage's weights and slots is on its own device and stays identical.
  PipelineStrategy strategy({.num_stages = 2, .micro_batches = 2, .boundaries = {"d3"}, .replicas = 2});
  CHECK(strategy.num_replicas_in_sync() == 4);
  std::unique_ptr<Model> m;
  {
    auto scope = strategy.scope();
    m = Mlp();
    m->Compile(Options());
  }
  std::map<std::string, std::string> holder;
  for (const auto& [device, g] : m->TrainStepPartitions()) {
    for (const Node* n : g->nodes()) {
      if (n->op() == "Variable") holder[n->name()] = device;
    }
  }
  CHECK(holder.at("d1/kernel").find("CPU:0") != std::string::npos);
  CHECK(holder.at("d3/kernel").find("CPU:1") != std::string::npos);
  CHECK(holder.at("d1/kernel/replica_1").find("CPU:2") != std::string::npos);
  CHECK(holder.at("out/kernel/replica_1/momentum").find("CPU:3") != std::string::npos);
  Tensor x, y;
  Data(32, &x, &y);
  m->Fit(x, y, {.batch_size = 16, .epochs = 1, .shuffle = false, .verbose = 0});
  for (const auto& [first, copy] : std::vector<std::pair<std::string, std::string>>{
           {"d1/kernel", "d1/kernel/replica_1"}, {"d3/bias", "d3/bias/replica_1"},
           {"out/kernel/momentum", "out/kernel/replica_1/momentum"}}) {
    CAPTURE(copy);
    const std::vector<Tensor> both = m->session()->Run({}, {first, copy}, {});
    CHECK(MaxDiff({both[0]}, {both[1]}) == 0.0);
  }
  Data(10, &x, &y);
  CHECK_THROWS_WITH_AS(m->TrainOnBatch(x, y),
                       doctest::Contains("2 replicas x 2 micro-batches do not divide the batch of 10 examples"), Error);
}

TEST_CASE("pipeline: a skip connection across stages, at user-given boundaries") {
  CHECK(PipelineVsSingle(Skip, {.num_stages = 2, .micro_batches = 4, .boundaries = {"d2"}}) < 1e-5);
  CHECK(PipelineVsSingle(Skip, {.num_stages = 3, .micro_batches = 4, .schedule = PipelineSchedule::k1F1B,
                                .boundaries = {"d2", "d3"}}) < 1e-5);
}

TEST_CASE("pipeline: with gradient accumulation, k pipelined steps equal one single-device step of k batches") {
  Optimizer accumulating = SGD(0.2);
  accumulating.gradient_accumulation_steps = 3;
  Tensor x, y;
  Data(48, &x, &y);
  auto single = Mlp();
  single->Compile(Options(SGD(0.2)));
  PipelineStrategy strategy({.num_stages = 2, .micro_batches = 2});
  std::unique_ptr<Model> piped;
  {
    auto scope = strategy.scope();
    piped = Mlp();
    piped->Compile(Options(accumulating));
  }
  single->Fit(x, y, {.batch_size = 48, .epochs = 1, .shuffle = false, .verbose = 0});
  piped->Fit(x, y, {.batch_size = 16, .epochs = 1, .shuffle = false, .verbose = 0});
  CHECK(MaxDiff(Weights(*single), Weights(*piped)) < 1e-5);
}

TEST_CASE("pipeline: each stage's weights, slots and work are on its device") {
  PipelineStrategy strategy({.num_stages = 2, .micro_batches = 2, .boundaries = {"d3"}});
  std::unique_ptr<Model> m;
  {
    auto scope = strategy.scope();
    m = Mlp();
    m->Compile(Options());
  }
  const std::vector<int> stages = strategy.AssignStages(m->layers(), m->name());
  CHECK(stages == std::vector<int>{0, 0, 1, 1});
  std::map<std::string, std::string> holder;  // variable -> the partition that holds it
  for (const auto& [device, g] : m->TrainStepPartitions()) {
    for (const Node* n : g->nodes()) {
      if (n->op() == "Variable") holder[n->name()] = device;
    }
  }
  CHECK(holder.at("d1/kernel").find("CPU:0") != std::string::npos);
  CHECK(holder.at("d2/bias/momentum").find("CPU:0") != std::string::npos);
  CHECK(holder.at("d3/kernel").find("CPU:1") != std::string::npos);
  CHECK(holder.at("out/kernel/momentum").find("CPU:1") != std::string::npos);
}

TEST_CASE("pipeline: balanced stages by parameter count") {
  // Parameters (+1 each): d1 6*16+16 = 112 (113), d2 272 (273), d3 204 (205), out 39 (40).
  PipelineStrategy two({.num_stages = 2, .micro_batches = 1});
  auto m = Mlp();
  CHECK(two.AssignStages(m->layers(), "mlp") == std::vector<int>{0, 0, 1, 1});  // 386 | 245
  PipelineStrategy three({.num_stages = 3, .micro_batches = 1});
  CHECK(three.AssignStages(m->layers(), "mlp") == std::vector<int>{0, 1, 2, 2});  // 113 | 273 | 245
  PipelineStrategy five({.num_stages = 5, .micro_batches = 1});
  CHECK_THROWS_WITH_AS(five.AssignStages(m->layers(), "mlp"),
                       doctest::Contains("model 'mlp' has 4 layers, fewer than its 5 stages"), Error);
}

TEST_CASE("pipeline: the schedules' orders") {
  auto str = [](const std::vector<PipelineSegment>& order) {
    std::string s;
    for (const PipelineSegment& p : order) s += (p.backward ? "B" : "F") + std::to_string(p.micro_batch) + " ";
    return s;
  };
  PipelineStrategy gpipe({.num_stages = 2, .micro_batches = 3});
  CHECK(str(gpipe.StageOrder(0)) == "F0 F1 F2 B0 B1 B2 ");
  CHECK(gpipe.bubble_fraction() == doctest::Approx(1.0 / 4.0));
  PipelineStrategy one({.num_stages = 3, .micro_batches = 4, .schedule = PipelineSchedule::k1F1B});
  CHECK(str(one.StageOrder(0)) == "F0 F1 F2 B0 F3 B1 B2 B3 ");
  CHECK(str(one.StageOrder(1)) == "F0 F1 B0 F2 B1 F3 B2 B3 ");
  CHECK(str(one.StageOrder(2)) == "F0 B0 F1 B1 F2 B2 F3 B3 ");
  CHECK(one.bubble_fraction() == doctest::Approx(2.0 / 6.0));
}

TEST_CASE("pipeline: bad input names what was wrong") {
  {
    PipelineStrategy strategy({.num_stages = 2, .micro_batches = 2, .boundaries = {"dense_9"}});
    auto scope = strategy.scope();
    auto m = Mlp();
    CHECK_THROWS_WITH_AS(m->Compile(Options()),
                         doctest::Contains("stage boundary 'dense_9' is not a layer of model 'mlp' (its layers: d1, d2, "
                                           "d3, out)"),
                         Error);
  }
  {
    PipelineStrategy strategy({.num_stages = 3, .micro_batches = 2, .boundaries = {"d3", "d2"}});
    auto scope = strategy.scope();
    auto m = Mlp();
    CHECK_THROWS_WITH_AS(m->Compile(Options()), doctest::Contains("stage boundary 'd2'"), Error);
  }
  CHECK_THROWS_WITH_AS(PipelineStrategy({.num_stages = 3, .micro_batches = 2, .boundaries = {"d2"}}),
                       doctest::Contains("3 stages need 2 boundaries"), Error);
  CHECK_THROWS_WITH_AS(PipelineStrategy({.num_stages = 2, .micro_batches = 0}),
                       doctest::Contains("micro_batches must be >= 1, got 0"), Error);
  PipelineStrategy strategy({.num_stages = 2, .micro_batches = 3});
  std::unique_ptr<Model> m;
  {
    auto scope = strategy.scope();
    m = Mlp();
    m->Compile(Options());
  }
  Tensor x, y;
  Data(16, &x, &y);
  CHECK_THROWS_WITH_AS(m->TrainOnBatch(x, y), doctest::Contains("3 micro-batches do not divide the batch of 16 examples"),
                       Error);
}

TEST_CASE("pipeline: the measured bubble of a traced step is each stage's idle share of the step") {
  PipelineStrategy p({.num_stages = 2, .micro_batches = 2});
  StepTrace trace;
  auto add = [&](int stage, const char* op, int64_t start, int64_t end) {
    trace.Add({.name = op, .op = op, .device = p.stage_device(stage), .start_us = start, .end_us = end});
  };
  // Stage 0 works in [0, 20) (two kernels overlapping on two threads) and [60, 70); stage 1 in
  // [20, 60); their Recvs wait (not work); a feed with no device widens the step to [0, 80).
  add(0, "MatMul", 0, 15);
  add(0, "Tanh", 5, 20);
  add(0, "_Recv", 20, 60);
  add(0, "AddN", 60, 70);
  add(1, "_Recv", 0, 20);
  add(1, "MatMul", 20, 60);
  trace.Add({.name = "x", .op = "_Arg", .device = "", .start_us = 0, .end_us = 80});
  std::vector<double> stages;
  // Stage 0 busy 30 of 80, stage 1 busy 40 of 80.
  CHECK(MeasuredBubble(trace, p, &stages) == doctest::Approx((50.0 / 80 + 40.0 / 80) / 2));
  REQUIRE(stages.size() == 2);
  CHECK(stages[0] == doctest::Approx(50.0 / 80));
  CHECK(stages[1] == doctest::Approx(0.5));
  // A stage with no event (another process's) is -1 and left out of the mean.
  StepTrace one;
  one.Add({.name = "m", .op = "MatMul", .device = p.stage_device(0), .start_us = 0, .end_us = 10});
  one.Add({.name = "r", .op = "_Recv", .device = p.stage_device(0), .start_us = 10, .end_us = 40});
  CHECK(MeasuredBubble(one, p, &stages) == doctest::Approx(0.75));
  CHECK(stages[1] == -1);
  CHECK(MeasuredBubble(StepTrace(), p) == -1);
}

TEST_CASE("pipeline: stages balanced by measured layer costs") {
  auto m = Mlp();
  // A trace's kernels, by node name: forward ops under the layer's name, their gradients under
  // gradients/; the optimizer's count for no layer.
  StepTrace trace;
  auto add = [&](const char* name, int64_t us) { trace.Add({.name = name, .op = "X", .start_us = 0, .end_us = us}); };
  add("d1/MatMul", 10);
  add("gradients/d1/MatMul_grad/MatMul", 20);
  add("d2/Tanh", 5);
  add("d3/MatMul", 100);
  add("gradients/d3/MatMul_grad/MatMul_1", 200);
  add("out/BiasAdd", 7);
  add("optimizer/ApplyGradientDescent", 1000);
  add("d10/MatMul", 1000);  // no such layer
  const std::vector<double> costs = LayerCostsFromTrace(trace, m->layers());
  CHECK(costs == std::vector<double>{30, 5, 300, 7});
  // By parameters the cut is after d2 (386 | 245); by these costs d3 alone is the heaviest, so
  // stage 1 starts at d3 either way with 2 stages, and with 3 stages d3 gets a stage of its own:
  // (31 + 6) | 301 | 8 instead of the parameters' 113 | 273 | 245.
  PipelineStrategy three({.num_stages = 3, .micro_batches = 1, .layer_costs = costs});
  CHECK(three.AssignStages(m->layers(), "mlp") == std::vector<int>{0, 0, 1, 2});
  PipelineStrategy by_params({.num_stages = 3, .micro_batches = 1});
  CHECK(by_params.AssignStages(m->layers(), "mlp") == std::vector<int>{0, 1, 2, 2});
  PipelineStrategy wrong({.num_stages = 2, .micro_batches = 1, .layer_costs = {1, 2}});
  CHECK_THROWS_WITH_AS(wrong.AssignStages(m->layers(), "mlp"),
                       doctest::Contains("2 layer costs for the 4 layers of model 'mlp'"), Error);
}
