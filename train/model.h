// Models: a graph of layer calls from inputs to an output, compiled into one weft graph and
// trained Keras-style.
//
//   using namespace weft::train;
//   Sequential model({28, 28, 1}, {Conv2D(32, 3, {.activation = "relu"}), MaxPool2D(2), Flatten(),
//                                  Dense(64, {.activation = "relu"}), Dense(10)});
//   model.Summary(std::cout);
//   model.Compile({.loss = SparseCategoricalCrossentropy(true), .optimizer = SGD(0.05, 0.9),
//                  .metrics = {"accuracy"}});
//   History h = model.Fit(x_train, y_train, {.batch_size = 64, .epochs = 1});
//   Logs test = model.Evaluate(x_test, y_test);          // {"loss": ..., "accuracy": ...}
//
// Compile builds one graph: the variables with their initializers, the training forward pass,
// the loss (plus L2 terms), Gradients, the optimizer's update ops and the step counter, and an
// inference forward pass sharing the variables (Dropout off, BatchNormalization on its moving
// averages) for Evaluate and Predict. Fit, Evaluate and Predict take one input and one label
// array; Fit and Evaluate also take a Dataset of {x, y} batches.
//
// A model may have several inputs and outputs (Keras' functional models: a seq2seq model on
// {encoder_ids, decoder_ids}, an encoder returning its states): the vector forms of Fit, Evaluate,
// Predict and TrainOnBatch take one array per input and one label array per output, and dataset
// elements are then {x_1..x_k, y_1..y_m[, sample_weight]}. The loss is Keras': the compiled loss
// applied to each output against its labels, summed. Metrics need a single output.
//
// Created inside a distribution strategy's scope (train/strategy.h), the model mirrors its
// variables over the strategy's devices and Compile builds a replicated step: Fit's batch_size
// is then the global batch, split across the replicas. The strategy must outlive the model.
//
// Thread-safety: a Model is used from one thread (Stop may be called from any).
#pragma once

#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "graph/session.h"
#include "train/layer.h"
#include "train/losses.h"
#include "train/metrics.h"
#include "train/optimizers.h"

namespace weft {
class Strategy;
namespace ops {
struct CollectiveGroup;
}
namespace data {
class Dataset;
}
}  // namespace weft

namespace weft::train {

class Callback;
// Fit and Evaluate take the input pipeline's datasets (data/dataset.h).
using data::Dataset;
using Logs = std::map<std::string, double>;

struct CompileOptions {
  Loss loss = SparseCategoricalCrossentropy();
  Optimizer optimizer = SGD();
  std::vector<Metric> metrics;  // names ("accuracy", "mse") or objects (AUC(), Precision(0.5, "prec"))
  SessionOptions session;  // threads
  int64_t seed = 0;        // graph seed: with it, initial weights and dropout are reproducible
  // Mirrored gradients are all-reduced in buckets of this size (train/grad_buckets.h). -1 (auto):
  // 25 MiB when the replicas span processes; in one process each gradient on its own (the
  // shared-memory all-reduce hands tensors over without copies; fusing would add two). 0: off.
  int64_t all_reduce_bucket_bytes = -1;
  // Activation recomputation (graph/recompute.h, as tf.recompute_grad): the layers, by name, whose
  // activations the training step drops after the forward pass and recomputes in the backward pass.
  // Equal gradients, lower peak memory, each named layer's forward run twice. A name the model does
  // not have is an InvalidArgument naming it.
  std::vector<std::string> recompute;
};

struct FitOptions {
  int64_t batch_size = 32;
  int epochs = 1;
  int initial_epoch = 0;         // epochs before it are taken as done (resume)
  int64_t steps_per_epoch = -1;  // -1: the whole data set each epoch
  bool shuffle = true;
  uint64_t shuffle_seed = 0;     // epoch e's order is a function of (shuffle_seed, e)
  const Tensor* validation_x = nullptr;  // not owned; evaluated after each epoch ("val_" logs)
  const Tensor* validation_y = nullptr;
  // Per-example loss weights [N] (float; Keras' sample_weight, and class_weight mapped to the
  // examples by the caller); not owned. The batch loss is sum(w * loss) / batch size, as Keras'
  // default reduction; metrics and validation are unweighted.
  const Tensor* sample_weight = nullptr;
  // Or a Dataset of {x, y} batches (not owned), evaluated after each epoch; validation_steps > 0
  // takes only that many batches of it.
  const Dataset* validation_data = nullptr;
  int64_t validation_steps = -1;
  // The epochs (1-based) after which the validation data is evaluated (Keras' validation_freq);
  // empty: after every epoch.
  std::vector<int> validation_epochs;
  std::vector<std::shared_ptr<Callback>> callbacks;
  int verbose = 1;  // 0 silent, 1 progress bar (plain lines when not a terminal), 2 one line per epoch
  // Where the epoch headings and the progress bar go (not owned, not null; flushed after each line).
  std::FILE* progress_out = stdout;
};

struct History {
  std::vector<int> epochs;
  std::map<std::string, std::vector<double>> history;  // "loss", "accuracy", "val_loss", ...
};

class Model {
 public:
  // A model from symbolic inputs (Input()s) to symbolic outputs (one or more of each).
  Model(std::vector<Sym> inputs, std::vector<Sym> outputs, std::string name = "model");
  virtual ~Model();

  const std::string& name() const { return name_; }
  // The distinct layers in call order (names unique within the model).
  const std::vector<LayerPtr>& layers() const { return layers_; }
  LayerPtr GetLayer(const std::string& name) const;
  TensorShape input_shape() const;   // with the batch dim (input 0's)
  TensorShape output_shape() const;  // with the batch dim (output 0's)
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const std::vector<Sym>& inputs() const { return inputs_; }
  const std::vector<Sym>& outputs() const { return outputs_; }
  int64_t CountParams() const;
  // Keras' summary table: layer (type), output shape, parameter count, and totals.
  void Summary(std::ostream& os) const;

  void Compile(CompileOptions options);
  bool compiled() const { return session_ != nullptr; }

  History Fit(const Tensor& x, const Tensor& y, FitOptions options = {});
  // Batches of {x, y}; an epoch is one pass over `data`. With steps_per_epoch, as Keras: one
  // iterator runs on across epochs (an infinite `data` needs steps_per_epoch); when a finite one
  // runs out, that epoch ends early and the next starts a new pass. An epoch that gets no batch at
  // all (a one-pass stream, such as a Python generator, already used up) stops training with a
  // warning on stderr, as Keras does ("Your input ran out of data"); that epoch is not recorded.
  History Fit(const Dataset& data, FitOptions options = {});
  // Mean loss and metrics over the data, in inference mode. Dataset elements may be {x, y,
  // sample_weight}: the loss is then weighted as in Fit (metrics are not).
  Logs Evaluate(const Tensor& x, const Tensor& y, int64_t batch_size = 32);
  Logs Evaluate(const Dataset& data);
  Tensor Predict(const Tensor& x, int64_t batch_size = 32);
  // Several inputs or outputs: one array per input in, one per output out.
  History Fit(const std::vector<Tensor>& xs, const std::vector<Tensor>& ys, FitOptions options = {});
  Logs Evaluate(const std::vector<Tensor>& xs, const std::vector<Tensor>& ys, int64_t batch_size = 32);
  std::vector<Tensor> PredictAll(const std::vector<Tensor>& xs, int64_t batch_size = 32);
  // The outputs for every batch of `data` whose elements start with the model's inputs.
  std::vector<Tensor> PredictAll(const Dataset& data);
  // The outputs for every batch of `data` (component 0 of each element; others, e.g. labels, are
  // ignored), concatenated along dim 0.
  Tensor Predict(const Dataset& data);
  // One training step on one batch; returns the batch's loss and metrics. x and y are checked
  // and converted as Fit's are; `sample_weight` (float [batch], optional) weights each example's
  // loss as FitOptions::sample_weight.
  Logs TrainOnBatch(const Tensor& x, const Tensor& y, const Tensor* sample_weight = nullptr);
  Logs TrainOnBatch(const std::vector<Tensor>& xs, const std::vector<Tensor>& ys,
                    const Tensor* sample_weight = nullptr);
  // Records the next training step's kernels in `trace` (graph/step_trace.h; not owned).
  void TraceNextStep(StepTrace* trace) { trace_next_ = trace; }

  // Every variable of the compiled model (weights, optimizer slots, the step counter) in one
  // checkpoint file (train/checkpoint.h). Load checks that each is present with its shape.
  // Under sharded optimizer state (Strategy::shard_optimizer_state, train/zero.h) SaveWeights is a
  // collective step that every worker must run: the slots' shards are all-gathered and the file
  // holds every variable's full slots under the unsharded names ("dense/kernel/m"), so sharded and
  // unsharded runs read each other's checkpoints; an empty `path` takes part without writing (a
  // worker that is not the chief). LoadWeights then gives each replica its shard of the slots.
  void SaveWeights(const std::string& path);
  void LoadWeights(const std::string& path);
  bool optimizer_state_sharded() const;
  // Bytes of optimizer state (the optimizer's slots; sharded: its shard's) that this process's
  // first replica holds between steps, measured from the variables' tensors.
  int64_t OptimizerStateBytes();
  // The layers' weights (not optimizer slots or the step), in Keras' get_weights order: layer by
  // layer, each layer's weights in declaration order; names as in VariableNames.
  std::vector<std::string> LayerWeightNames() const;
  // Assigns the named variables (any of VariableNames). Every name and shape is checked before
  // anything is assigned, so on error (InvalidArgument naming the variable and both shapes, or
  // NotFound) the model is unchanged. `source` names where the values came from in messages.
  void SetVariables(const std::map<std::string, Tensor>& values, const std::string& source);
  // Names of the checkpointed variables ("dense/kernel", "dense/kernel/momentum", "step").
  std::vector<std::string> VariableNames() const;

  int64_t step() const { return step_; }  // training steps taken (restored by LoadWeights)
  // The learning rate the next training step uses (the optimizer's schedule at step()).
  double learning_rate() const;
  // Replaces a constant learning rate from the next step on (ReduceLROnPlateau,
  // LearningRateScheduler). FailedPrecondition when the optimizer was compiled with a schedule
  // (as Keras, which refuses to set a rate that a schedule owns).
  void SetLearningRate(double lr);
  // Asks Fit to stop after the current batch (EarlyStopping, Ctrl-C handlers).
  void StopTraining() { stop_training_ = true; }
  bool stop_requested() const { return stop_training_; }
  Session* session() { return session_.get(); }
  // The strategy whose scope the model was created in (null: none).
  const Strategy* strategy() const { return strategy_; }
  // The training step as the session runs it: one placed graph per device, joined by _Send/_Recv
  // pairs (graph/partition.h); for DOT pictures and tools.
  std::vector<std::pair<std::string, const Graph*>> TrainStepPartitions();
  Graph* graph() { return graph_.get(); }

  // The forward pass built in another graph, over that graph's tensors for the weights: custom
  // training steps (a tf.function that calls a Keras model, differentiates and applies an
  // optimizer itself). `weights` holds one tensor per weight of layers(), layer by layer in
  // declaration order (LayerWeightNames' order); the layers' state updates (batch-norm moving
  // averages) and loss terms (add_loss, activity regularization) go to `updates` / `losses`.
  // One tensor per model input in `xs` (each cast to its Input's dtype); one per output back.
  std::vector<Output> Apply(const Scope& scope, const std::vector<Output>& xs, bool training,
                            const std::vector<Output>& weights, std::vector<Output>* updates,
                            std::vector<Output>* losses) const;

 protected:
  Model() = default;
  void Init(std::vector<Sym> inputs, std::vector<Sym> outputs, std::string name);

 private:
  struct Compiled;
  using LayerVars = std::map<const Layer*, std::vector<Output>>;
  // Builds the forward pass of every recorded layer call in `scope` over the variables `vars`.
  // Layers' loss terms (CallContext::losses) go to `losses` when it is given.
  std::vector<Output> Forward(const Scope& scope, const std::vector<Output>& xs, bool training, const LayerVars& vars,
                              std::vector<Output>* updates, std::vector<Output>* losses = nullptr,
                              std::vector<std::vector<const Node*>>* recompute = nullptr) const;
  void BuildReplicas(CompileOptions& o, const Scope& root, std::vector<Output>* inits);
  // Across workers (MultiWorkerMirroredStrategy): collectives over every worker's first replica.
  static constexpr int64_t kWorkerGroupKey = 2, kBroadcastGroupKey = 3;
  // Sharded optimizer state (train/model_sharded.cc): the reduce-scatter and all-gathers' group.
  static constexpr int64_t kShardGroupKey = 4;
  void CheckShardable(const CompileOptions& o, const std::vector<Constraint>& constraints) const;
  // Replica `replica`'s parameter shard and slots (on `vs`'s device) and its sharded update.
  std::vector<Output> BuildShardedReplica(const Scope& vs, const Scope& os, const CompileOptions& o, int replica,
                                          const ops::CollectiveGroup& all, int64_t bucket_bytes,
                                          const std::vector<Output>& vars, const std::vector<Output>& grads,
                                          std::vector<Output>* inits);
  void FinishSharded(const Scope& root);
  // The full slots "<var>/<slot>" from every replica's shards (a collective step).
  std::vector<std::pair<std::string, Tensor>> GatherShardedSlots();
  // Each local replica's shard of the full slots in `loaded` (NotFound naming a missing one,
  // InvalidArgument naming a wrong shape), checked now; the returned function assigns them.
  std::function<void()> RestoreShardedSlots(const std::map<std::string, Tensor>& loaded, const std::string& path);
  ops::CollectiveGroup WorkerGroup(int64_t key) const;
  int64_t worker_rank() const;
  // One training step on prepared arrays (`sample_weight`: float [batch] or null for ones); adds
  // the batch's metric statistics to `totals` and returns its loss.
  double TrainStep(const std::vector<Tensor>& xs, const std::vector<Tensor>& ys, const Tensor* sample_weight,
                   MetricTotals* totals);
  void RunEpochs(const Dataset* fixed, const std::vector<Tensor>* xs, const std::vector<Tensor>* ys, FitOptions& o,
                 History* h);
  // Checks arrays against the inputs (and labels against the outputs' label placeholders) and
  // converts their dtypes; InvalidArgument naming both shapes.
  void PrepareArrays(std::vector<Tensor>* xs, std::vector<Tensor>* ys, const char* what) const;
  // Splits a dataset element into inputs, labels and the optional sample weights.
  void SplitElement(const std::vector<Tensor>& element, std::vector<Tensor>* xs, std::vector<Tensor>* ys,
                    const Tensor** sample_weight, const char* what) const;
  void RequireCompiled(const char* what) const;
  // Polls until every variable has a value (set by another process), up to `timeout_seconds`.
  void WaitForVariables(double timeout_seconds);
  bool remote() const;  // the variables live on a cluster's servers, not in session_->vars()
  Logs EvaluateBatches(const Dataset& data);
  std::vector<Tensor> PredictBatches(const Dataset& data, bool prepared);

  std::string name_;
  std::vector<Sym> inputs_, outputs_;
  std::vector<Sym> calls_;  // layer calls in topological order
  std::vector<LayerPtr> layers_;
  // CompileOptions::recompute's layers: Forward gives the nodes of each of their calls as a block.
  std::set<const Layer*> recompute_layers_;
  const Strategy* strategy_ = nullptr;  // the scope the model was created in (not owned)
  // Under a PipelineStrategy: each layer's stage device (Forward places its calls there).
  std::map<const Layer*, std::string> stage_device_;
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<Compiled> c_;
  int64_t step_ = 0;
  std::atomic<bool> stop_training_{false};
  StepTrace* trace_next_ = nullptr;
};

// A linear stack of layers on one input of per-example shape `input_shape`.
class Sequential : public Model {
 public:
  // input_dtype: float32, or int32 / int64 for ids (a first Embedding layer).
  Sequential(TensorShape input_shape, std::vector<LayerPtr> layers, std::string name = "sequential",
             DType input_dtype = DType::kFloat32);
  // Appends a layer (before Compile).
  void Add(LayerPtr layer);

 private:
  std::vector<LayerPtr> stack_;
  TensorShape input_shape_;
  DType input_dtype_;
};

}  // namespace weft::train
