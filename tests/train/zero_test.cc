// Sharded optimizer state (train/zero.h) in one process, MirroredStrategy over 2-4 CPU devices:
// stages 1 and 2 train to the unsharded strategy's weights and slots (SGD with momentum, Adam;
// replica counts that do not divide the parameter count); each replica holds 1/R of the slots,
// measured from the variables and from the device's allocator; checkpoints hold the full slots and
// a restored run continues as the uninterrupted one; bad stages and unsupported options are errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>

#include "data/datasets.h"
#include "train/checkpoint.h"
#include "train/model.h"
#include "train/strategy.h"
#include "train/zero.h"

using namespace weft;
using namespace weft::train;

namespace {

constexpr int64_t kBatch = 24;  // divides by 2, 3 and 4 replicas

const data::ArrayData& Data() {
  static const data::ArrayData d = data::Synthetic(kBatch * 8, {12}, 5, 3);
  return d;
}

// 12 -> 7 -> 5: 131 parameters, which 2, 3 and 4 do not divide (the last shard is padded).
std::unique_ptr<Model> Build(const Strategy& strategy, const Optimizer& opt, int64_t width = 7,
                             int64_t memory_limit = 0) {
  auto scope = strategy.scope();
  auto m = std::make_unique<Sequential>(
      TensorShape{12}, std::vector<LayerPtr>{Dense(width, {.activation = "tanh"}), Dense(5)}, "mlp");
  CompileOptions o;
  o.loss = SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = opt;
  o.session.inter_op_threads = o.session.intra_op_threads = 1;
  o.session.device_memory_limit = memory_limit;
  o.seed = 7;
  m->Compile(o);
  return m;
}

void Train(Model& m, int steps, int initial_epoch = 0) {
  FitOptions f;
  f.batch_size = kBatch;
  f.epochs = initial_epoch + 1;
  f.initial_epoch = initial_epoch;
  f.steps_per_epoch = steps;
  f.shuffle_seed = 5;
  f.verbose = 0;
  m.Fit(Data().x, Data().y, f);
}

Tensor Value(Model& m, const std::string& name) {
  REQUIRE_MESSAGE(m.graph()->FindNode(name) != nullptr, name);
  return m.session()->Run({}, {m.graph()->FindOutput(name)})[0];
}

// |a - b| / max|a|, the largest over the elements.
double MaxRelativeDifference(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double worst = 0, scale = 1e-6;
  for (int64_t i = 0; i < a.num_elements(); ++i) scale = std::max(scale, std::abs(a.ElementAsDouble(i)));
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    worst = std::max(worst, std::abs(a.ElementAsDouble(i) - b.ElementAsDouble(i)) / scale);
  }
  return worst;
}

const std::vector<std::string> kWeights = {"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"};

std::string TempDir(const std::string& name) {
  const std::filesystem::path d = std::filesystem::temp_directory_path() / fmt::format("weft-zero-{}-{}", name, getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

}  // namespace

TEST_CASE("sharded optimizer state: the layout covers every element once, padded evenly") {
  const ShardLayout l = PlanShards({TensorShape({12, 7}), TensorShape({7}), TensorShape({7, 5}), TensorShape({5})}, 3);
  CHECK(l.total == 131);
  CHECK(l.shard == 44);  // ceil(131 / 3)
  std::vector<int> seen(131, 0);
  for (int r = 0; r < 3; ++r) {
    int64_t at = r * l.shard, held = 0;
    for (const ShardLayout::Piece& p : l.Pieces(r)) {
      for (int64_t i = 0; i < p.length; ++i) seen[static_cast<size_t>(l.offsets[p.var] + p.begin + i)]++;
      CHECK(l.offsets[p.var] + p.begin == at);  // contiguous, in flat order
      at += p.length;
      held += p.length;
    }
    CHECK(held + l.Padding(r) == l.shard);
  }
  CHECK(l.Padding(2) == 3 * 44 - 131);
  CHECK(std::count(seen.begin(), seen.end(), 1) == 131);
  // Fewer elements than shards: the last shards are all padding.
  const ShardLayout tiny = PlanShards({TensorShape({2})}, 4);
  CHECK(tiny.shard == 1);
  CHECK(tiny.Pieces(3).empty());
  CHECK(tiny.Padding(3) == 1);
  // The host's shard and split are inverse to each other.
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})), b = Tensor::FromVector<float>({7, 8});
  const ShardLayout two = PlanShards({a.shape(), b.shape()}, 3);  // S = 3
  Tensor flat(DType::kFloat32, TensorShape({9}));
  for (int r = 0; r < 3; ++r) {
    Tensor s = ShardOf(two, r, {a, b}, "test");
    std::memcpy(flat.data<float>() + r * 3, s.data<float>(), 3 * sizeof(float));
  }
  CHECK(flat.ToVector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 0});
  const std::vector<Tensor> back = SplitFlat(two, flat, {a.shape(), b.shape()});
  CHECK(back[0].ToVector<float>() == a.ToVector<float>());
  CHECK(back[1].ToVector<float>() == b.ToVector<float>());
  CHECK_THROWS_WITH(ShardOf(two, 0, {a}, "checkpoint 'x'"), doctest::Contains("checkpoint 'x': 1 tensors for 2"));
}

TEST_CASE("sharded optimizer state: stages 1 and 2 on 2 and 3 replicas train as the unsharded strategy") {
  for (const Optimizer& opt : {SGD(0.1, 0.9), Adam(0.01)}) {
    for (int replicas : {2, 3}) {
      MirroredStrategy plain(replicas);
      auto reference = Build(plain, opt);
      Train(*reference, 6);
      const std::string dir = TempDir("equal");
      reference->SaveWeights(dir + "/plain.weft");
      const auto full = LoadCheckpoint(dir + "/plain.weft");
      for (int stage : {1, 2}) {
        CAPTURE(opt.ToString());
        CAPTURE(replicas);
        CAPTURE(stage);
        MirroredStrategy sharded(replicas, stage);
        auto m = Build(sharded, opt);
        CHECK(m->optimizer_state_sharded());
        Train(*m, 6);
        CHECK(m->step() == 6);
        for (const std::string& name : kWeights) {
          CAPTURE(name);
          CHECK(MaxRelativeDifference(Value(*reference, name), Value(*m, name)) < 1e-5);
          for (int r = 1; r < replicas; ++r) {  // every replica's copy got the same all-gathered values
            const Tensor a = Value(*m, name), b = Value(*m, name + "/replica_" + std::to_string(r));
            CHECK(std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0);
          }
        }
        // The checkpoint holds the full slots, gathered from the shards, under the unsharded names.
        m->SaveWeights(dir + "/sharded.weft");
        const auto saved = LoadCheckpoint(dir + "/sharded.weft");
        int slots = 0;
        for (const auto& [name, value] : full) {
          CAPTURE(name);
          REQUIRE(saved.count(name) == 1);
          CHECK(MaxRelativeDifference(value, saved.at(name)) < 1e-5);
          slots += name.find("/momentum") != std::string::npos || name.find("/m") != std::string::npos;
        }
        CHECK(slots == 4);  // one momentum or m per weight
      }
      std::filesystem::remove_all(dir);
    }
  }
}

TEST_CASE("sharded optimizer state: each replica holds 1/R of the slots (variables and allocator)") {
  // 12 -> 300 -> 5: 5405 parameters, Adam's m and v.
  const int64_t p = 12 * 300 + 300 + 300 * 5 + 5;
  MirroredStrategy plain(4), sharded(4, 2);
  auto a = Build(plain, Adam(0.01), 300, int64_t{1} << 30);
  auto b = Build(sharded, Adam(0.01), 300, int64_t{1} << 30);
  Train(*a, 2);
  Train(*b, 2);
  const int64_t shard = (p + 3) / 4;
  CHECK(a->OptimizerStateBytes() == 2 * p * 4);
  CHECK(b->OptimizerStateBytes() == 2 * shard * 4);  // m and v of the shard
  // The allocator of replica 0's device after a step: what it holds (the variables and slots).
  auto in_use = [](Model& m) {
    for (const auto& [device, stats] : m.session()->DeviceMemory()) {
      if (device.find("CPU:0") != std::string::npos) return stats.bytes_in_use;
    }
    FAIL("no CPU:0 in DeviceMemory");
    return int64_t{0};
  };
  const int64_t saved = in_use(*a) - in_use(*b), predicted = (2 * p - 2 * shard) * 4;
  MESSAGE("CPU:0 in use after a step: unsharded " << in_use(*a) << " B, sharded " << in_use(*b) << " B; predicted saving "
                                                  << predicted << " B");
  CHECK(saved >= predicted * 9 / 10);
  CHECK(saved <= predicted * 11 / 10);
  // Every variable's storage on replica 0's device (the parameter shard is set during a step only:
  // between steps it holds nothing; its second Variable node, which shares the storage and would
  // set it when fetched, is skipped).
  auto replica0_variable_bytes = [](Model& m) {
    int64_t bytes = 0;
    for (const Node* n : m.graph()->nodes()) {
      if (n == nullptr || n->op() != "Variable" || n->name().find("replica_") != std::string::npos) continue;
      if (!n->attr<std::string>("shared_name").empty()) continue;
      bytes += static_cast<int64_t>(Value(m, n->name()).bytes());
    }
    return bytes;
  };
  CHECK(replica0_variable_bytes(*a) - replica0_variable_bytes(*b) == (2 * p - 2 * shard) * 4);
}

TEST_CASE("sharded optimizer state: a run restored from a checkpoint continues as the uninterrupted one") {
  const std::string dir = TempDir("resume");
  MirroredStrategy s1(3, 2), s2(3, 2), s3(3, 1);
  auto straight = Build(s1, Adam(0.01));
  Train(*straight, 4);
  Train(*straight, 4, 1);
  auto first = Build(s2, Adam(0.01));
  Train(*first, 4);
  first->SaveWeights(dir + "/ckpt.weft");
  // Restored into a new model (stage 1 this time: the file does not depend on the stage), then on.
  auto resumed = Build(s3, Adam(0.01));
  resumed->LoadWeights(dir + "/ckpt.weft");
  CHECK(resumed->step() == 4);
  Train(*resumed, 4, 1);
  for (const std::string& name : kWeights) {
    CAPTURE(name);
    CHECK(MaxRelativeDifference(Value(*straight, name), Value(*resumed, name)) < 1e-5);
  }
  // A checkpoint without the slots (another optimizer's) is refused, naming the slot.
  MirroredStrategy s4(2, 1), s5(2, 1);
  auto sgd = Build(s4, SGD(0.1));
  sgd->SaveWeights(dir + "/sgd.weft");
  auto adam = Build(s5, Adam(0.01));
  CHECK_THROWS_WITH(adam->LoadWeights(dir + "/sgd.weft"), doctest::Contains("has no optimizer slot 'dense/kernel/"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("sharded optimizer state: bad stages and unsupported options are clear errors") {
  CHECK_THROWS_WITH(MirroredStrategy(2, 3), doctest::Contains("shard_optimizer_state must be 0 (off), 1"));
  CHECK_THROWS_WITH(MirroredStrategy(2, -1), doctest::Contains("got -1"));
  MirroredStrategy sharded(2, 1);
  Optimizer clipped = Adam(0.01);
  clipped.clipnorm = 1.0;
  CHECK_THROWS_WITH(Build(sharded, clipped), doctest::Contains("clipnorm=1 (a norm over each whole gradient) with "
                                                               "shard_optimizer_state=1"));
  Optimizer accumulating = SGD(0.1);
  accumulating.gradient_accumulation_steps = 2;
  CHECK_THROWS_WITH(Build(sharded, accumulating), doctest::Contains("gradient_accumulation_steps=2"));
  // One replica: nothing to shard, the plain step.
  MirroredStrategy one(1, 2);
  auto m = Build(one, Adam(0.01));
  CHECK_FALSE(m->optimizer_state_sharded());
}
