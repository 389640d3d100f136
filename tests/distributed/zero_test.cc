// Sharded optimizer state (train/zero.h) across processes: 2 MultiWorkerMirroredStrategy workers
// on 127.0.0.1 (ephemeral ports) with shard_optimizer_state 2 (Adam) and 1 (SGD with momentum)
// train for 8 steps to the weights and full optimizer slots of the unsharded strategy over 2
// replicas (1e-5 relative to each tensor's largest value); each worker holds half of the slots;
// the checkpoint that every worker's collective SaveWeights writes restores into a new sharded
// model that continues as the uninterrupted run. The test binary runs itself as each worker
// (exec of /proc/self/exe --test-case="zero worker child"), bounded in time, and removes its files.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "data/datasets.h"
#include "distributed/multi_worker_strategy.h"
#include "tests/distributed/child_process.h"
#include "train/checkpoint.h"
#include "train/model.h"

using namespace weft;

namespace {

constexpr int64_t kBatch = 32, kSteps = 8;

const data::ArrayData& Data() {
  static const data::ArrayData d = data::Synthetic(kBatch * kSteps, {20}, 6, 3);
  return d;
}

train::Optimizer OptimizerFor(int stage) { return stage == 2 ? train::Adam(0.01) : train::SGD(0.1, 0.9); }

// 20 -> 33 -> 6: 897 parameters (odd: the second shard ends in padding).
std::unique_ptr<train::Model> Build(const Strategy& strategy, int stage) {
  auto scope = strategy.scope();
  auto m = std::make_unique<train::Sequential>(
      TensorShape{20}, std::vector<train::LayerPtr>{train::Dense(33, {.activation = "relu"}), train::Dense(6)}, "mlp");
  train::CompileOptions o;
  o.loss = train::SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = OptimizerFor(stage);
  o.session.inter_op_threads = o.session.intra_op_threads = 1;
  o.seed = 7;
  m->Compile(o);
  return m;
}

void Train(train::Model& m, int64_t steps, int initial_epoch = 0) {
  train::FitOptions f;
  f.batch_size = kBatch;
  f.epochs = initial_epoch + 1;
  f.initial_epoch = initial_epoch;
  f.steps_per_epoch = steps;
  f.shuffle_seed = 5;
  f.verbose = 0;
  m.Fit(Data().x, Data().y, f);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int WaitBounded(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL("worker " << pid << " did not finish within " << limit.count() << " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status;
}

double MaxRelativeDifference(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double worst = 0, scale = 1e-6;
  for (int64_t i = 0; i < a.num_elements(); ++i) scale = std::max(scale, std::abs(b.ElementAsDouble(i)));
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    worst = std::max(worst, std::abs(a.ElementAsDouble(i) - b.ElementAsDouble(i)) / scale);
  }
  return worst;
}

}  // namespace

// The worker side (does nothing unless started by the test below): trains kSteps, saves (every
// worker: the save is collective), then a second model restores the half-way checkpoint and trains
// the second half; each writes what the parent compares.
TEST_CASE("zero worker child") {
  const char* stage_env = std::getenv("WEFT_ZERO_STAGE");
  if (stage_env == nullptr) return;
  const int stage = std::atoi(stage_env);
  const std::string dir = std::getenv("WEFT_ZERO_DIR");
  int index = -1;
  try {
    MultiWorkerOptions o;
    o.collective_timeout = o.connect_timeout = std::chrono::seconds(30);
    o.shard_optimizer_state = stage;
    o.trace_events = 0;
    o.hang_report_dir = dir;
    MultiWorkerMirroredStrategy strategy(o);
    index = strategy.worker_index();
    auto m = Build(strategy, stage);
    WEFT_REQUIRE(m->optimizer_state_sharded(), "the model's optimizer state is not sharded");
    Train(*m, kSteps / 2);
    m->SaveWeights(fmt::format("{}/half{}.weft", dir, index));
    Train(*m, kSteps / 2, 1);
    m->SaveWeights(fmt::format("{}/worker{}.weft", dir, index));
    std::ofstream(fmt::format("{}/state{}.txt", dir, index)) << m->OptimizerStateBytes();
    auto resumed = Build(strategy, stage);
    resumed->LoadWeights(fmt::format("{}/half0.weft", dir));
    Train(*resumed, kSteps / 2, 1);
    resumed->SaveWeights(fmt::format("{}/resumed{}.weft", dir, index));
    ThrowIfError(strategy.Shutdown());
    std::_Exit(0);
  } catch (const Error& e) {
    std::ofstream(fmt::format("{}/error{}.txt", dir, index < 0 ? 9 : index)) << e.what();
    std::_Exit(3);
  }
}

TEST_CASE("sharded optimizer state: 2 workers (stage 2 Adam, stage 1 SGD momentum) equal the unsharded strategy") {
  for (const int stage : {2, 1}) {
    CAPTURE(stage);
    const std::string dir = std::filesystem::temp_directory_path() / fmt::format("weft_zero_{}_{}", getpid(), stage);
    std::filesystem::create_directories(dir);
    const std::vector<int> ports = test::FreeLoopbackPorts(2);
    const ClusterConfig c{ClusterSpec({{"worker", {fmt::format("127.0.0.1:{}", ports[0]),
                                                   fmt::format("127.0.0.1:{}", ports[1])}}}),
                          std::nullopt};
    std::vector<pid_t> pids;
    for (int w = 0; w < 2; ++w) {
      const std::string tf_config = c.ToTfConfig({"worker", w});
      const pid_t pid = fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        setenv("TF_CONFIG", tf_config.c_str(), 1);
        setenv("WEFT_ZERO_STAGE", std::to_string(stage).c_str(), 1);
        setenv("WEFT_ZERO_DIR", dir.c_str(), 1);
        setenv("UCX_TLS", "tcp,self", 1);
        setenv("WEFT_CLUSTER_SECRET", "zero-test-secret", 1);
        alarm(150);  // never outlives the suite
        execl("/proc/self/exe", "test_distributed", "--test-case=zero worker child", "--no-intro", nullptr);
        _exit(127);
      }
      pids.push_back(pid);
    }
    // The reference while the workers run: the unsharded strategy over 2 replicas in this process.
    MirroredStrategy plain(2);
    auto reference = Build(plain, stage);
    Train(*reference, kSteps / 2);
    Train(*reference, kSteps / 2, 1);
    reference->SaveWeights(dir + "/reference.weft");
    for (pid_t p : pids) {
      const int status = WaitBounded(p, std::chrono::seconds(120));
      CHECK_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), "worker failed: ", ReadFile(dir + "/error0.txt"),
                    ReadFile(dir + "/error1.txt"), ReadFile(dir + "/error9.txt"));
    }
    const auto r = train::LoadCheckpoint(dir + "/reference.weft");
    for (const char* run : {"worker0", "worker1", "resumed0", "resumed1"}) {
      const auto w = train::LoadCheckpoint(fmt::format("{}/{}.weft", dir, run));
      CHECK(w.size() == r.size());  // the weights, the step and every full slot
      CHECK(w.at("step").scalar<int64_t>()() == kSteps);
      for (const auto& [name, t] : r) {
        if (t.dtype() != DType::kFloat32) continue;
        CAPTURE(run);
        CAPTURE(name);
        REQUIRE(w.count(name) == 1);
        CHECK(MaxRelativeDifference(w.at(name), t) < 1e-5);
      }
    }
    // Half of the slots per worker: 897 parameters in shards of 449 (stage 2: Adam's m and v).
    const int64_t slots = stage == 2 ? 2 : 1;
    CHECK(ReadFile(dir + "/state0.txt") == std::to_string(slots * 449 * 4));
    CHECK(ReadFile(dir + "/state1.txt") == std::to_string(slots * 449 * 4));
    CHECK(reference->OptimizerStateBytes() == slots * 897 * 4);
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("sharded optimizer state: MultiWorkerMirroredStrategy refuses a stage outside 0..2 before connecting") {
  MultiWorkerOptions o;
  o.cluster = ClusterConfig{ClusterSpec({{"worker", {"127.0.0.1:1", "127.0.0.1:2"}}}), TaskId{"worker", 0}};
  o.shard_optimizer_state = 3;
  o.connect_timeout = std::chrono::milliseconds(100);
  CHECK_THROWS_WITH(MultiWorkerMirroredStrategy{o},
                    doctest::Contains("MultiWorkerMirroredStrategy: shard_optimizer_state must be 0 (off), 1"));
}
