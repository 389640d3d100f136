#include "zoo/commands.h"

#include <cstdlib>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include <sys/resource.h>

#include "core/gpu.h"
#include "data/fortunes.h"
#include "train/pipeline.h"
#include "train/strategy.h"
#include "graph/graph_io.h"
#include "graph/step_trace.h"
#include "train/callbacks.h"
#include "train/checkpoint.h"
#include "data/text.h"
#include "zoo/commands_dist.h"
#include "zoo/models.h"

namespace weft::zoo {
namespace {

using data::ArrayData;
using train::Model;

// ---- Flags -------------------------------------------------------------------------------

const std::set<std::string> kTrainFlags = {"data", "epochs", "batch-size", "optimizer", "lr", "schedule",
                                           "warmup-steps", "steps-per-epoch", "threads", "seed",
                                           "checkpoint-dir", "summary", "strategy", "devices", "trace",
                                           "hosts", "hostfile", "base-port", "collective-timeout", "device", "ps-mode",
                                           "trace-events", "dump-trace", "device-memory-limit", "gradient-accumulation-steps", "micro-batches",
                                           "boundaries", "recompute", "zero", "replicas", "balance"};

// --schedule names a learning-rate schedule or, with --strategy pipeline, a pipeline schedule:
// the values are disjoint.
bool IsPipelineSchedule(const std::string& s) { return s == "gpipe" || s == "1f1b"; }

// True when this process is a task of a cluster: TF_CONFIG is set (weft-zoo launch sets it).
bool InCluster() {
  const char* tf_config = std::getenv("TF_CONFIG");
  return tf_config != nullptr && *tf_config != '\0';
}

// --strategy none|one_device|mirrored|central_storage and --devices N (N > 1 alone means mirrored).
// layer_costs: PipelineOptions::layer_costs (--balance measured).
std::unique_ptr<Strategy> NewStrategy(const Flags& f, std::vector<double> layer_costs = {}) {
  const int devices = static_cast<int>(f.Int("devices", 1, 1));
  const std::string name = f.Str("strategy", devices > 1 ? "mirrored" : "none");
  if (name != "pipeline" && (f.Has("micro-batches") || f.Has("boundaries") || f.Has("replicas") || f.Has("balance") ||
                             IsPipelineSchedule(f.Str("schedule", "")))) {
    throw UsageError("--micro-batches, --boundaries, --replicas, --balance and --schedule gpipe|1f1b need --strategy "
                     "pipeline");
  }
  const int zero = static_cast<int>(f.Int("zero", 0, 0));  // sharded optimizer state: 0, 1, 2
  if (f.Has("zero") && name != "mirrored" && name != "multi_worker") {
    throw UsageError("--zero needs --strategy mirrored or multi_worker (it shards the optimizer state of their replicas)");
  }
  if (name == "none") {
    if (devices > 1) throw UsageError("--devices > 1 needs a strategy (mirrored, central_storage, pipeline)");
    return nullptr;
  }
  if (name == "one_device") return std::make_unique<OneDeviceStrategy>("/device:CPU:0");
  if (name == "mirrored") return std::make_unique<MirroredStrategy>(devices, zero);
  if (name == "central_storage") return std::make_unique<CentralStorageStrategy>(devices);
  if (name == "pipeline") {
    const std::string schedule = f.Str("schedule", "gpipe");
    std::vector<std::string> boundaries;
    std::stringstream list(f.Str("boundaries", ""));  // L1,L2,...
    for (std::string b; std::getline(list, b, ',');) {
      if (!b.empty()) boundaries.push_back(b);
    }
    PipelineOptions options{.num_stages = devices,
                            .micro_batches = static_cast<int>(f.Int("micro-batches", 4, 1)),
                            .schedule = ParsePipelineSchedule(IsPipelineSchedule(schedule) ? schedule : "gpipe"),
                            .boundaries = std::move(boundaries),
                            .layer_costs = std::move(layer_costs),
                            .replicas = static_cast<int>(f.Int("replicas", 1, 1))};
    if (InCluster()) {  // under weft-zoo launch: a stage per task (--devices N: the first N tasks)
#ifdef WEFT_HAVE_UCX
      if (!f.Has("devices")) options.num_stages = 0;
      return MakeClusterPipelineStrategy(options);
#else
      throw Error(errors::FailedPrecondition("--strategy pipeline across processes (TF_CONFIG is set) needs a "
                                             "build with UCX"));
#endif
    }
    return std::make_unique<PipelineStrategy>(options);
  }
  if (name == "multi_worker") return MakeMultiWorkerStrategy(f, devices, zero);
#ifdef WEFT_HAVE_UCX
  if (name == "parameter_server") return MakeParameterServerStrategy(f.Str("ps-mode", "sync"));  // TF_CONFIG: a client
#endif
  throw UsageError(fmt::format(
      "--strategy must be none, one_device, mirrored, central_storage, pipeline, multi_worker or parameter_server, "
      "got '{}'",
      name));
}

// NewStrategy's, writing its status board to $WEFT_STATUS_FILE when `weft-zoo launch --status`
// set it (zoo/launch.h).
std::unique_ptr<Strategy> MakeStrategy(const Flags& f, std::vector<double> layer_costs = {}) {
  // Before any work: --dump-trace would fail only at the end of the run.
  const std::string strategy = f.Str("strategy", "");
  if (f.Has("trace-events") && strategy != "multi_worker") {
    throw UsageError("--trace-events needs --strategy multi_worker (its always-on trace)");
  }
  if (f.Has("dump-trace") && strategy != "multi_worker" && strategy != "parameter_server") {
    throw UsageError("--dump-trace needs --strategy multi_worker or parameter_server (their always-on trace)");
  }
  std::unique_ptr<Strategy> s = NewStrategy(f, std::move(layer_costs));
  const char* status_file = std::getenv("WEFT_STATUS_FILE");
  if (s != nullptr && status_file != nullptr && *status_file != '\0') s->set_status_file(status_file);
  return s;
}

// Rows [begin, end) of an [N, ...] tensor, copied.
Tensor Rows(const Tensor& t, int64_t begin, int64_t end) {
  std::vector<int64_t> dims = {end - begin};
  for (int i = 1; i < t.shape().rank(); ++i) dims.push_back(t.shape().dim(i));
  Tensor out(t.dtype(), TensorShape(dims));
  const size_t row = t.shape().dim(0) > 0 ? t.bytes() / static_cast<size_t>(t.shape().dim(0)) : 0;
  std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + row * static_cast<size_t>(begin), out.bytes());
  return out;
}

// lstm_text's data: which of ten fortune files (the largest, on different topics) a quote came
// from, its first 128 characters (lstm_text's input).
ArrayData FortuneRows(bool train) {
  static const std::vector<std::string> kFiles = {"people",   "definitions", "cookie", "computers", "songs-poems",
                                                  "politics", "work",        "science", "men-women", "zippy"};
  return data::FortunesByFile(data::kFortunesDir, kFiles, 128, train);
}

TensorShape ExampleShape(const Tensor& x) {
  std::vector<int64_t> dims;
  for (int i = 1; i < x.shape().rank(); ++i) dims.push_back(x.shape().dim(i));
  return TensorShape(dims);
}

// The per-example shape of zm's inputs for a --data value: the model's own for synthetic data and
// for text models (their character ids), else 28x28x1 images.
TensorShape ExampleFor(const ZooModel& zm, const std::string& data) {
  return data == "synthetic" || zm.takes_ids() ? zm.synthetic_shape : TensorShape({28, 28, 1});
}

// n synthetic examples for zm: class-pattern images (data::Synthetic); for a next-character model
// uniform random ids as inputs and labels; for a text classifier uniform random character ids
// (CharVocab's and its pad id) and classes (a speed test's data: only the shapes matter).
ArrayData SyntheticFor(const ZooModel& zm, const TensorShape& example, int64_t n, uint64_t seed) {
  if (!zm.takes_ids()) return data::Synthetic(n, example, zm.num_classes, seed);
  std::mt19937_64 rng(seed);
  if (!zm.text()) {
    std::uniform_int_distribution<int32_t> id(0, data::CharVocab::kSize), label(0, zm.num_classes - 1);
    std::vector<int64_t> dims = {n};
    for (int i = 0; i < example.rank(); ++i) dims.push_back(example.dim(i));
    Tensor x(DType::kInt32, TensorShape(dims)), y(DType::kInt32, TensorShape({n}));
    for (int64_t i = 0; i < x.num_elements(); ++i) x.data<int32_t>()[i] = id(rng);
    for (int64_t i = 0; i < n; ++i) y.data<int32_t>()[i] = label(rng);
    return {x, y};
  }
  std::uniform_int_distribution<int32_t> id(0, zm.num_classes - 1);
  std::vector<int32_t> ids(static_cast<size_t>(n * example.num_elements() + 1));
  for (int32_t& v : ids) v = id(rng);
  return data::NextCharWindows(ids, example.num_elements(), 0, ids.size());
}

int DefaultThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

// --threads N and --device auto|cpu|gpu (auto: the GPUs when there are any; docs/cuda.md).
SessionOptions Threads(const Flags& f) {
  const int threads = static_cast<int>(f.Int("threads", DefaultThreads(), 1));
  SessionOptions o;
  o.inter_op_threads = threads;
  o.intra_op_threads = threads;
  const std::string device = f.Str("device", "auto");
  if (device != "auto" && device != "cpu" && device != "gpu") {
    throw UsageError(fmt::format("--device must be auto, cpu or gpu, got '{}'", device));
  }
  if (device == "gpu" && ProbeGpus().count == 0) throw Error(errors::FailedPrecondition("{}", NoGpuMessage()));
  o.use_gpus = device != "cpu";
  o.device_memory_limit = f.Int("device-memory-limit", 0, 0);  // bytes per device; 0: none
  return o;
}

// After training with --device-memory-limit: each device's peak bytes in the last step.
void PrintDeviceMemory(Model& model) {
  for (const auto& [device, stats] : model.session()->DeviceMemory()) {
    std::printf("device memory: %s peak %.1f MiB of the last step (%.1f MiB in use after it)\n", device.c_str(),
                static_cast<double>(stats.peak_bytes_in_use) / (1 << 20),
                static_cast<double>(stats.bytes_in_use) / (1 << 20));
  }
}

// Under a mirrored strategy: the optimizer state one replica holds (sharded or not) and this
// process's peak resident memory.
void PrintOptimizerState(Model& model, const Strategy& strategy) {
  const int stage = model.optimizer_state_sharded() ? strategy.shard_optimizer_state() : 0;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const std::string how = stage == 0 ? "not sharded"
                                     : fmt::format("zero stage {}: the slots of 1/{} of the parameters",
                                                   stage, strategy.num_replicas_in_sync());
  std::printf("optimizer state: %.3f MiB per replica (%s); peak RSS of this process: %.1f MiB\n",
              static_cast<double>(model.OptimizerStateBytes()) / (1 << 20), how.c_str(),
              static_cast<double>(usage.ru_maxrss) / 1024);
}

train::Optimizer MakeOptimizer(const Flags& f, int64_t total_steps) {
  const std::string name = f.Str("optimizer", "momentum");
  if (name != "sgd" && name != "momentum" && name != "adam") {
    throw UsageError(fmt::format("--optimizer must be sgd, momentum or adam, got '{}'", name));
  }
  const double lr = f.Float("lr", name == "adam" ? 0.001 : 0.05);
  std::string schedule = f.Str("schedule", "constant");
  if (IsPipelineSchedule(schedule)) schedule = "constant";  // the pipeline's (NewStrategy)
  const int64_t warmup = f.Int("warmup-steps", 0);
  train::Schedule s;
  if (schedule == "constant") {
    s = train::ConstantLR(lr);
  } else if (schedule == "cosine") {
    s = train::CosineDecay(lr, std::max<int64_t>(1, total_steps - warmup));
  } else if (schedule == "step") {  // x0.1 at 50% and 75% of training, as the ResNet papers do
    s = train::StepDecay(lr, std::max<int64_t>(1, (total_steps - warmup) / 2), 0.1);
  } else {
    throw UsageError(fmt::format("--schedule must be constant, cosine or step, got '{}'", schedule));
  }
  if (warmup > 0) s = train::LinearWarmup(s, warmup);
  train::Optimizer o = name == "adam" ? train::Adam(s) : train::SGD(s, name == "momentum" ? 0.9 : 0.0);
  o.gradient_accumulation_steps = static_cast<int>(f.Int("gradient-accumulation-steps", 0, 0));
  return o;
}

std::unique_ptr<Model> BuildCompiled(const ZooModel& zm, const TensorShape& example, const train::Optimizer& opt,
                                     const SessionOptions& session, int64_t seed, const Strategy* strategy = nullptr,
                                     int64_t bucket_bytes = -1, const std::string& recompute = "") {
  std::optional<Strategy::ScopeGuard> scope;
  if (strategy != nullptr) scope.emplace(strategy);
  std::unique_ptr<Model> model = zm.build(example, zm.num_classes);
  // --recompute all | NAME,NAME...: the layers whose activations the step recomputes.
  std::vector<std::string> recomputed;
  if (recompute == "all") {
    for (const train::LayerPtr& l : model->layers()) recomputed.push_back(l->name());
  } else {
    for (size_t at = 0; at < recompute.size();) {
      const size_t comma = std::min(recompute.find(',', at), recompute.size());
      if (comma > at) recomputed.push_back(recompute.substr(at, comma - at));
      at = comma + 1;
    }
  }
  train::CompileOptions co;
  co.loss = train::SparseCategoricalCrossentropy(/*from_logits=*/true);
  co.optimizer = opt;
  co.metrics = {"accuracy"};
  co.session = session;
  co.seed = seed;
  co.all_reduce_bucket_bytes = bucket_bytes;
  co.recompute = recomputed;
  model->Compile(co);
  return model;
}

// --balance measured: the model trained on one device for 3 steps of the first `batch` examples,
// the third traced; each layer's kernel microseconds in it (LayerCostsFromTrace).
std::vector<double> MeasureLayerCosts(const ZooModel& zm, const ArrayData& data, int64_t batch,
                                      const SessionOptions& session, int64_t seed, bool quiet) {
  std::unique_ptr<Model> model = BuildCompiled(zm, ExampleShape(data.x), train::SGD(0.0), session, seed);
  const int64_t n = std::min<int64_t>(batch, data.x.shape().dim(0));
  auto first_rows = [n](const Tensor& t) {  // rows [0, n) of t
    TensorShape shape = t.shape();
    shape.set_dim(0, n);
    Tensor out(t.dtype(), shape);
    std::memcpy(out.raw_data(), t.raw_data(), out.bytes());
    return out;
  };
  const Tensor x = first_rows(data.x), y = first_rows(data.y);
  StepTrace trace;
  for (int step = 0; step < 3; ++step) {
    if (step == 2) model->TraceNextStep(&trace);
    model->TrainOnBatch(x, y);
  }
  std::vector<double> costs = LayerCostsFromTrace(trace, model->layers());
  if (!quiet) {
    std::string text;
    for (size_t i = 0; i < costs.size(); ++i) {
      text += fmt::format("{}{} {:.0f}", i ? ", " : "", model->layers()[i]->name(), costs[i]);
    }
    std::printf("measured layer costs (us of kernels in one step on one device): %s\n", text.c_str());
  }
  return costs;
}

// ---- Ctrl-C: the first one stops training after the current step ---------------------------

std::atomic<Model*> g_interruptible{nullptr};

void OnSigint(int) {
  Model* m = g_interruptible.load();
  if (m != nullptr) m->StopTraining();
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the program
}

// Saves a checkpoint named by step after every epoch and keeps the last three. An empty `dir`:
// a worker that is not the chief, which only takes part in gathering sharded optimizer state.
class EpochCheckpoint : public train::Callback {
 public:
  explicit EpochCheckpoint(std::string dir) : dir_(std::move(dir)) {}
  void OnEpochEnd(Model& model, int epoch, const train::Logs& logs) override {
    if (dir_.empty()) {
      model.SaveWeights("");
      return;
    }
    model.SaveWeights(train::CheckpointPath(dir_, model.step()));
    train::PruneCheckpoints(dir_, 3);
  }

 private:
  std::string dir_;
};

// Records the training step with index `target` (counting from 0; later than the first, which
// compiles) and writes it as a Chrome trace.
class TraceOneStep : public train::Callback {
 public:
  TraceOneStep(std::string path, int64_t target) : path_(std::move(path)), target_(target) {}
  void OnBatchEnd(Model& model, int64_t batch, const train::Logs& logs) override {
    if (done_) return;
    if (batch + 1 == target_) model.TraceNextStep(&trace_);
    if (batch == target_) {
      trace_.Write(path_);
      std::printf("\ntrace of step %lld (%zu kernels) written to %s\n", static_cast<long long>(batch + 1),
                  trace_.events().size(), path_.c_str());
      done_ = true;
    }
  }

 private:
  std::string path_;
  int64_t target_;
  StepTrace trace_;
  bool done_ = false;
};

// Under a pipeline: records the training step with index `target` (after the first, which
// compiles) and measures its bubble (train/pipeline.h, MeasuredBubble) for Report.
class MeasurePipelineBubble : public train::Callback {
 public:
  MeasurePipelineBubble(const PipelineStrategy& pipeline, int64_t target) : pipeline_(pipeline), target_(target) {}
  void OnBatchEnd(Model& model, int64_t batch, const train::Logs& logs) override {
    if (batch + 1 == target_) model.TraceNextStep(&trace_);
    if (batch == target_) measured_ = MeasuredBubble(trace_, pipeline_, &stages_);
  }
  // "pipeline bubble: measured 0.312 (stage 0: 0.250, stage 1: 0.374) in step 3; ideal 0.200".
  void Report() const {
    if (measured_ == -2) return;  // the traced step never came
    std::string per_stage;
    for (size_t s = 0; s < stages_.size(); ++s) {
      per_stage += fmt::format("{}stage {}: {}", s ? ", " : "", s,
                               stages_[s] < 0 ? std::string("not traced (another process)") : fmt::format("{:.3f}", stages_[s]));
    }
    if (measured_ < 0) {
      std::printf("pipeline bubble: ideal %.3f; not measured (no stage ran in this process's trace)\n",
                  pipeline_.bubble_fraction());
      return;
    }
    std::printf("pipeline bubble: measured %.3f (%s) in step %lld; ideal %.3f\n", measured_, per_stage.c_str(),
                static_cast<long long>(target_ + 1), pipeline_.bubble_fraction());
  }

 private:
  const PipelineStrategy& pipeline_;
  int64_t target_;
  StepTrace trace_;
  double measured_ = -2;
  std::vector<double> stages_;
};

std::string JsonNumber(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : "null"; }

// ---- Commands ----------------------------------------------------------------------------

int List() {
  for (const ZooModel& m : ZooModels()) std::printf("%-10s %s\n", m.name.c_str(), m.description.c_str());
  return 0;
}

int Describe(const std::vector<std::string>& args) {
  Flags f(args, {"data"}, {});
  if (f.positional().size() != 1) throw UsageError("describe takes one MODEL");
  const ZooModel& zm = FindZooModel(f.positional()[0]);
  const TensorShape example = ExampleFor(zm, f.Str("data", zm.default_data));
  std::printf("%s: %s\n", zm.name.c_str(), zm.description.c_str());
  zm.build(example, zm.num_classes)->Summary(std::cout);
  return 0;
}

int Train(const std::vector<std::string>& args) {
  Flags f(args, kTrainFlags, {"resume", "quiet"});
  if (f.positional().size() != 1) throw UsageError("train takes one MODEL");
  const auto wall_start = std::chrono::steady_clock::now();
  const ZooModel& zm = FindZooModel(f.positional()[0]);
  const int epochs = static_cast<int>(f.Int("epochs", 1, 1));
  const int64_t batch = f.Int("batch-size", 64, 1);
  const int64_t seed = f.Int("seed", 1, 1);
  const bool quiet = f.Has("quiet");
  const std::string ckpt_dir = f.Str("checkpoint-dir", "");
  if (f.Has("resume") && ckpt_dir.empty()) throw UsageError("--resume needs --checkpoint-dir");
  if (f.Has("ps-mode") && f.Str("strategy", "") != "parameter_server") {
    throw UsageError("--ps-mode needs --strategy parameter_server");
  }
#ifdef WEFT_HAVE_UCX
  if (f.Str("strategy", "") == "parameter_server") {  // every task runs this command: ps tasks serve
    const int served = ServeParameterServerTask(f.Str("ps-mode", "sync"));
    if (served >= 0) return served;
  }
  if (f.Str("strategy", "") == "pipeline" && InCluster()) {  // every task runs it: stages 1.. serve
    const int served = ServePipelineStage();
    if (served >= 0) return served;
  }
#endif

  ArrayData train_data, test_data;
  LoadZooData(f.Str("data", zm.default_data), zm, &train_data, &test_data);
  std::vector<double> layer_costs;
  if (const std::string balance = f.Str("balance", "parameters"); balance == "measured") {
    layer_costs = MeasureLayerCosts(zm, train_data, batch, Threads(f), seed, quiet);
  } else if (balance != "parameters") {
    throw UsageError(fmt::format("--balance must be parameters or measured, got '{}'", balance));
  }
  std::unique_ptr<Strategy> strategy = MakeStrategy(f, std::move(layer_costs));
  // Async parameter servers: each worker trains on its shard of the rows (Fit takes them).
  const auto [shard, shards] = strategy ? strategy->input_shard() : std::pair<int, int>{0, 1};
  const int64_t n = (train_data.x.shape().dim(0) - shard + shards - 1) / shards;
  int64_t steps_per_epoch = (n + batch - 1) / batch;
  if (f.Has("steps-per-epoch")) steps_per_epoch = std::min(steps_per_epoch, f.Int("steps-per-epoch", 0, 1));

  const train::Optimizer opt = MakeOptimizer(f, steps_per_epoch * epochs);
  std::unique_ptr<Model> model = BuildCompiled(zm, ExampleShape(train_data.x), opt, Threads(f), seed, strategy.get(),
                                               -1, f.Str("recompute", ""));
  const bool chief = strategy == nullptr || strategy->is_chief();  // the chief alone writes files
  if (!quiet && strategy && strategy->pipeline() != nullptr) {
    const PipelineStrategy& p = *strategy->pipeline();
    std::string stages;
    const std::vector<int> of = p.AssignStages(model->layers(), model->name());
    for (size_t i = 0; i < of.size(); ++i) stages += fmt::format("{}{}:{}", i ? " " : "", model->layers()[i]->name(), of[i]);
    std::string devices, replicas;
    for (size_t k = 0; k < p.devices().size(); ++k) devices += fmt::format("{}{}", k ? " " : "", p.devices()[k]);
    if (p.replicas() > 1) replicas = fmt::format(" x {} replicas", p.replicas());
    std::printf("PipelineStrategy: %d stages%s x %d micro-batches of %lld (%s), ideal bubble fraction %.3f\nstages: %s\n"
                "stage devices: %s\n", p.num_stages(), replicas.c_str(), p.micro_batches(),
                static_cast<long long>(batch / p.batch_parts()), PipelineScheduleName(p.schedule()).c_str(),
                p.bubble_fraction(), stages.c_str(), devices.c_str());
  } else if (!quiet && strategy) {
    std::printf("%s over %d replicas (global batch %lld)\n", strategy->name().c_str(), strategy->num_replicas_in_sync(),
                static_cast<long long>(batch));
  }
  if (!quiet) model->Summary(std::cout);

  int initial_epoch = 0;
  if (f.Has("resume")) {
    const std::string latest = train::LatestCheckpoint(ckpt_dir);
    const bool shared = strategy && strategy->chief_initializes_variables();  // async ps: one global step
    if (shared && !chief) {
      std::printf("the chief restores the shared variables\n");
    } else if (latest.empty()) {
      std::printf("no checkpoint in %s: starting from scratch\n", ckpt_dir.c_str());
    } else if (shared) {
      model->LoadWeights(latest);
      initial_epoch = static_cast<int>(model->step() / shards / steps_per_epoch);
      std::printf("resumed from %s (global step %lld, epoch %d)\n", latest.c_str(),
                  static_cast<long long>(model->step()), initial_epoch);
    } else {
      model->LoadWeights(latest);
      if (model->step() % steps_per_epoch != 0) {
        throw Error(errors::FailedPrecondition(
            "checkpoint {} is at step {}, not at an epoch boundary of {} steps (was --batch-size or "
            "--steps-per-epoch changed?)",
            latest, model->step(), steps_per_epoch));
      }
      initial_epoch = static_cast<int>(model->step() / steps_per_epoch);
      std::printf("resumed from %s (step %lld, epoch %d)\n", latest.c_str(), static_cast<long long>(model->step()),
                  initial_epoch);
    }
  }
  train::FitOptions fo;
  fo.batch_size = batch;
  fo.epochs = epochs;
  fo.initial_epoch = initial_epoch;
  fo.steps_per_epoch = f.Has("steps-per-epoch") ? steps_per_epoch : -1;
  fo.shuffle_seed = static_cast<uint64_t>(seed);
  fo.verbose = quiet ? 0 : 1;
  if (!ckpt_dir.empty() && chief) {
    std::filesystem::create_directories(ckpt_dir);
    fo.callbacks.push_back(std::make_shared<EpochCheckpoint>(ckpt_dir));
  } else if (!ckpt_dir.empty() && model->optimizer_state_sharded()) {
    fo.callbacks.push_back(std::make_shared<EpochCheckpoint>(""));  // the chief's save gathers every shard
  }
  const int64_t trace_step = std::min<int64_t>(9, steps_per_epoch - 1);
  if (f.Has("trace")) fo.callbacks.push_back(std::make_shared<TraceOneStep>(f.Str("trace", ""), trace_step));
  std::shared_ptr<MeasurePipelineBubble> bubble;
  const int64_t bubble_step = std::min<int64_t>(2, steps_per_epoch - 1);  // the third: warmed up
  if (strategy && strategy->pipeline() != nullptr && !(f.Has("trace") && trace_step == bubble_step)) {
    bubble = std::make_shared<MeasurePipelineBubble>(*strategy->pipeline(), bubble_step);
    fo.callbacks.push_back(bubble);
  }
  g_interruptible = model.get();
  std::signal(SIGINT, OnSigint);
  const int64_t step_before = model->step();
  const auto train_start = std::chrono::steady_clock::now();
  train::History h = model->Fit(train_data.x, train_data.y, fo);
  const double train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - train_start).count();
  g_interruptible = nullptr;
  std::signal(SIGINT, SIG_DFL);
  const int64_t steps_done = model->step() - step_before;
  const int64_t images = steps_done / steps_per_epoch * std::min(n, steps_per_epoch * batch) +
                         steps_done % steps_per_epoch * batch;

  if (bubble) bubble->Report();
  if (!quiet || f.Has("zero")) PrintDeviceMemory(*model);
  if ((!quiet || f.Has("zero")) && strategy && strategy->mirrored()) PrintOptimizerState(*model, *strategy);
  train::Logs test = model->Evaluate(test_data.x, test_data.y, 256);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double ips = train_seconds > 0 ? static_cast<double>(images) / train_seconds : 0.0;
  std::printf("test_loss: %.4f - test_accuracy: %.4f - %.0f img/s training - %.1f s\n", test["loss"],
              test["accuracy"], ips, wall);
  if (zm.text() && chief) {
    const double train_loss = h.history.count("loss") ? h.history["loss"].back() : NAN;
    std::printf("per-character loss: train %.4f, test %.4f nats (%.3f bits); %.0f characters/s training\n",
                train_loss, test["loss"], test["loss"] / std::log(2.0), ips * static_cast<double>(zm.synthetic_shape.dim(0)));
    std::printf("sample: %s\n", SampleText(*model, zm, "The ", 120, 0.8, static_cast<uint64_t>(seed)).c_str());
  }
  if (model->stop_requested()) std::printf("training stopped early (interrupted)\n");
  if (f.Has("dump-trace")) {
    const std::string path = f.Str("dump-trace", "");
    std::printf("trace of the last %zu events written to %s\n", DumpStrategyTrace(strategy.get(), path), path.c_str());
  }
  if (f.Has("summary") && chief) {
    const std::string path = f.Str("summary", "");
    std::ofstream out(path);
    if (!out) throw Error(errors::NotFound("cannot write the summary file '{}'", path));
    auto last = [&](const char* k) { return h.history.count(k) ? h.history[k].back() : NAN; };
    out << fmt::format(
        "{{\"model\": \"{}\", \"epochs\": {}, \"steps\": {}, \"batch_size\": {}, \"optimizer\": \"{}\", "
        "\"threads\": {}, \"train_loss\": {}, \"train_accuracy\": {}, \"test_loss\": {}, \"test_accuracy\": {}, "
        "\"images_per_second\": {}, \"wall_seconds\": {}}}\n",
        zm.name, model->step() / steps_per_epoch, model->step(), batch, opt.ToString(), Threads(f).intra_op_threads,
        JsonNumber(last("loss")), JsonNumber(last("accuracy")), JsonNumber(test["loss"]),
        JsonNumber(test["accuracy"]), JsonNumber(ips), JsonNumber(wall));
  }
  return 0;
}

int Evaluate(const std::vector<std::string>& args) {
  Flags f(args, {"checkpoint", "data", "batch-size", "threads", "device"}, {});
  if (f.positional().size() != 1) throw UsageError("evaluate takes one MODEL");
  if (!f.Has("checkpoint")) throw UsageError("evaluate needs --checkpoint PATH");
  const ZooModel& zm = FindZooModel(f.positional()[0]);
  ArrayData train_data, test_data;
  LoadZooData(f.Str("data", zm.default_data), zm, &train_data, &test_data);
  std::unique_ptr<Model> model = BuildCompiled(zm, ExampleShape(test_data.x), train::SGD(), Threads(f), 1);
  model->LoadWeights(f.Str("checkpoint", ""));
  train::Logs test = model->Evaluate(test_data.x, test_data.y, f.Int("batch-size", 256, 1));
  std::printf("%s at step %lld: test_loss: %.4f - test_accuracy: %.4f\n", zm.name.c_str(),
              static_cast<long long>(model->step()), test["loss"], test["accuracy"]);
  return 0;
}

int Bench(const std::vector<std::string>& args) {
  Flags f(args, {"batch-size", "threads", "warmup", "seconds", "data", "strategy", "devices", "hosts", "hostfile",
                 "base-port", "collective-timeout", "device", "bucket-bytes", "trace-events", "dump-trace"},
          {"json"});
  if (f.positional().size() != 1) throw UsageError("bench takes one MODEL");
  const int64_t bucket_bytes = f.Int("bucket-bytes", -1, -1);
  const ZooModel& zm = FindZooModel(f.positional()[0]);
  const int64_t batch = f.Int("batch-size", 64, 1);
  const int64_t warmup = f.Int("warmup", 10, 0);
  const double seconds = f.Float("seconds", 3.0);
  const SessionOptions session = Threads(f);
  const TensorShape example = zm.name == "resnet20" ? zm.synthetic_shape : ExampleFor(zm, f.Str("data", ""));
  constexpr int kBatches = 8;
  ArrayData synthetic = SyntheticFor(zm, example, batch * kBatches, 1);
  std::vector<std::pair<Tensor, Tensor>> batches;
  for (int i = 0; i < kBatches; ++i) {
    batches.emplace_back(Rows(synthetic.x, i * batch, (i + 1) * batch), Rows(synthetic.y, i * batch, (i + 1) * batch));
  }
  std::unique_ptr<Strategy> strategy = MakeStrategy(f);
  std::unique_ptr<Model> model =
      BuildCompiled(zm, example, train::SGD(0.01, 0.9), session, 1, strategy.get(), bucket_bytes);
  int64_t step = 0;
  auto run = [&] {
    const auto& [x, y] = batches[static_cast<size_t>(step++ % kBatches)];
    model->TrainOnBatch(x, y);
  };
  for (int64_t i = 0; i < warmup; ++i) run();
  // Windows of at least 0.25 s; the median window is the figure (robust to this machine's drift).
  // cpu_rates: the same windows' images per CPU-second of this process (every thread's), the step's
  // cost on a machine shared with other work, where wall time also counts others' use of the cores.
  std::vector<double> rates, cpu_rates;
  auto cpu_seconds = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  const auto start = std::chrono::steady_clock::now();
  // Across workers every worker must run the same steps: fixed windows of 10 steps, 3 per second asked.
  const bool fixed = strategy != nullptr && strategy->num_workers() > 1;
  const size_t fixed_windows = static_cast<size_t>(std::max(3.0, 3 * seconds));
  while (fixed ? rates.size() < fixed_windows
               : std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds ||
                     rates.size() < 3) {
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    int64_t steps = 0;
    double dt = 0;
    do {
      run();
      ++steps;
      dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    } while (fixed ? steps < 10 : dt < 0.25);
    rates.push_back(static_cast<double>(steps * batch) / dt);
    cpu_rates.push_back(static_cast<double>(steps * batch) / std::max(cpu_seconds() - c0, 1e-9));
  }
  std::sort(rates.begin(), rates.end());
  std::sort(cpu_rates.begin(), cpu_rates.end());
  const double median = rates[rates.size() / 2];
  // --dump-trace: the ring after the run, and its size (docs: bench/README.md, tracing overhead).
  std::string trace_json;
  if (f.Has("dump-trace")) {
    const std::string path = f.Str("dump-trace", "");
    const size_t events = DumpStrategyTrace(strategy.get(), path);
    trace_json = fmt::format(", \"trace_events\": {}, \"trace_bytes\": {}", events, std::filesystem::file_size(path));
  }
  if (f.Has("json")) {
    std::printf("{\"model\": \"%s\", \"batch_size\": %lld, \"threads\": %d, \"strategy\": \"%s\", "
                "\"replicas\": %d, \"images_per_second\": %.1f, \"step_ms\": %.3f, \"windows\": %zu, \"steps\": %lld, "
                "\"cpu_images_per_second\": %.1f%s}\n",
                zm.name.c_str(), static_cast<long long>(batch), session.intra_op_threads,
                strategy ? strategy->name().c_str() : "none", strategy ? strategy->num_replicas_in_sync() : 1, median,
                1000.0 * static_cast<double>(batch) / median, rates.size(), static_cast<long long>(step),
                cpu_rates[cpu_rates.size() / 2], trace_json.c_str());
  } else {
    std::printf("%s: batch %lld, %d threads: %.0f images/s (%.2f ms/step, median of %zu windows)\n",
                zm.name.c_str(), static_cast<long long>(batch), session.intra_op_threads, median,
                1000.0 * static_cast<double>(batch) / median, rates.size());
  }
  return 0;
}

// DOT of the model's training step (optionally per device, with the Send/Recv pairs), or a PNG
// drawn by graphviz's `dot`.
int GraphCommand(const std::vector<std::string>& args) {
  Flags f(args, {"devices", "strategy", "o", "data"}, {"partitioned"});
  if (f.positional().size() != 1) throw UsageError("graph takes one MODEL");
  if (!f.Has("o")) throw UsageError("graph needs -o FILE.dot or -o FILE.png");
  const ZooModel& zm = FindZooModel(f.positional()[0]);
  const TensorShape example = ExampleFor(zm, f.Str("data", ""));
  std::unique_ptr<Strategy> strategy = MakeStrategy(f);
  SessionOptions session;
  session.inter_op_threads = session.intra_op_threads = 1;
  std::unique_ptr<Model> model = BuildCompiled(zm, example, train::SGD(0.01, 0.9), session, 1, strategy.get());
  const auto parts = model->TrainStepPartitions();
  std::string dot;
  if (f.Has("partitioned")) {
    dot = PartitionsToDot(parts);
  } else {
    dot = ToDot(*model->graph());
  }
  const std::string out = f.Str("o", "");
  const bool png = out.size() > 4 && out.substr(out.size() - 4) == ".png";
  const std::string dot_path = png ? out + ".dot" : out;
  {
    std::ofstream file(dot_path);
    if (!file) throw Error(errors::NotFound("cannot write '{}'", dot_path));
    file << dot;
  }
  if (png) {
    if (std::system("command -v dot >/dev/null 2>&1") != 0) {
      throw Error(errors::FailedPrecondition("drawing {} needs graphviz's `dot` (apt-get install graphviz); the DOT "
                                             "text is in {}", out, dot_path));
    }
    const std::string cmd = fmt::format("dot -Tpng '{}' -o '{}'", dot_path, out);
    if (std::system(cmd.c_str()) != 0) throw Error(errors::Internal("'{}' failed", cmd));
    std::remove(dot_path.c_str());
  }
  int sends = 0;
  for (const auto& [d, g] : parts) {
    for (Node* n : g->nodes()) sends += n->op() == "_Send";
  }
  std::printf("%s: training step on %zu device(s), %d Send/Recv pair(s) -> %s\n", zm.name.c_str(), parts.size(), sends,
              out.c_str());
  return 0;
}

}  // namespace

void LoadZooData(const std::string& spec, const ZooModel& zm, ArrayData* train_data, ArrayData* test_data) {
  if (zm.takes_ids() && spec != zm.default_data && spec != "synthetic") {
    throw UsageError(fmt::format("--data for {} must be {} or synthetic, got '{}'", zm.name, zm.default_data, spec));
  }
  if (spec == "fortunes-files") {
    if (zm.default_data != spec) {
      throw UsageError(fmt::format("--data fortunes-files is a text classification set: {} does not take it", zm.name));
    }
    *train_data = FortuneRows(true);
    *test_data = FortuneRows(false);
  } else if (spec == "fortunes") {
    if (!zm.text()) throw UsageError(fmt::format("--data fortunes is text: {} takes images", zm.name));
    // The last 5% of the characters are the test set (whole windows on either side).
    const std::vector<int32_t> ids = data::CharVocab().Encode(data::ReadFortunes());
    const size_t split = ids.size() - ids.size() / 20;
    *train_data = data::NextCharWindows(ids, zm.synthetic_shape.dim(0), 0, split);
    *test_data = data::NextCharWindows(ids, zm.synthetic_shape.dim(0), split, ids.size());
  } else if (spec == "fashion-mnist") {
    *train_data = data::FashionMnist(true);
    *test_data = data::FashionMnist(false);
  } else if (spec.rfind("mnist:", 0) == 0 && spec.size() > 6) {
    *train_data = data::Mnist(spec.substr(6), true);
    *test_data = data::Mnist(spec.substr(6), false);
  } else if (spec == "synthetic") {
    const int64_t train = zm.takes_ids() ? 1000 : 10000, test = zm.takes_ids() ? 200 : 2000;
    ArrayData all = SyntheticFor(zm, zm.synthetic_shape, train + test, 1);
    *train_data = {Rows(all.x, 0, train), Rows(all.y, 0, train)};
    *test_data = {Rows(all.x, train, train + test), Rows(all.y, train, train + test)};
  } else {
    throw UsageError(fmt::format("--data must be fashion-mnist, mnist:DIR, synthetic or (text models) fortunes, "
                                 "fortunes-files, got '{}'", spec));
  }
}

int RunCommand(const std::vector<std::string>& args) {
  const std::string& cmd = args.at(0);
  if (cmd == "list") return List();
  if (cmd == "describe") return Describe(args);
  if (cmd == "train") return Train(args);
  if (cmd == "evaluate") return Evaluate(args);
  if (cmd == "bench") return Bench(args);
  if (cmd == "graph") return GraphCommand(args);
  if (cmd == "generate") return GenerateCommand(args);
  if (cmd == "trace") return TraceCommand(args);
#ifdef WEFT_HAVE_UCX
  if (cmd == "launch") return LaunchCommand(args);
  if (cmd == "server") return ServerCommand(args);
#endif
  throw UsageError(fmt::format(
      "unknown command '{}' (commands: list, describe, train, evaluate, bench, graph, generate, launch, server)", cmd));
}

}  // namespace weft::zoo
