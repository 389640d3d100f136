// Pipeline parallelism on the CPU devices of one process: a model too large for one device's
// memory budget is cut into stages by layer, stage i's weights and computation on device i, and
// each global batch is split into micro-batches that flow through the stages.
//
//   PipelineStrategy strategy({.num_stages = 2, .micro_batches = 4, .schedule = PipelineSchedule::k1F1B});
//   {
//     auto scope = strategy.scope();
//     Sequential model(...);          // stages by parameter count, or .boundaries = {"dense_2"}
//     model.Compile(...);             // one step: 4 micro-batches through 2 stages
//   }
//   model.Fit(x, y, {.batch_size = 64});   // micro-batches of 16
//
// The step is one graph (train/compile.cc): per micro-batch m, the forward pass with each layer
// on its stage's device (the partitioner inserts the Send/Recv pairs where stages meet, skip
// connections across several stages included), the loss on the last stage as sum / global batch,
// and its gradients, which are colocated with their forward ops. Each weight's gradients are
// summed over the micro-batches on its stage (gradient accumulation per stage) and applied once,
// so a step equals a single-device step on the global batch. The schedule orders each stage's
// work with control edges between its segments (forward or backward of one micro-batch):
//   GPipe  F0 F1 .. F(M-1) B0 B1 .. B(M-1): every micro-batch's activations live until its backward.
//   1F1B   stage s runs min(S - 1 - s, M) forwards, then alternates one forward and one backward,
//          then the remaining backwards: at most S - s micro-batches' activations live at once.
// Either way the ideal bubble (idle share of a stage's step when every segment costs the same)
// is (S - 1) / (M + S - 1); bubble_fraction() reports it. Batch normalization's moving averages
// are updated once per micro-batch.
//
// Stages: `boundaries` names the first layer of stages 1 .. S-1 (in the model's layer order); an
// unknown name or one out of order is InvalidArgument naming it. Without boundaries the layers
// are split into S contiguous groups that balance the parameter count (+1 per layer, so layers
// without weights spread too). Thread-safety: immutable after construction.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/step_trace.h"
#include "train/layer.h"
#include "train/strategy.h"

namespace weft {

enum class PipelineSchedule { kGPipe, k1F1B };
// "gpipe" / "1f1b"; InvalidArgument naming the value otherwise.
PipelineSchedule ParsePipelineSchedule(const std::string& name);
std::string PipelineScheduleName(PipelineSchedule s);

struct PipelineOptions {
  // Stage i on /job:localhost/replica:0/task:0/device:CPU:i (across processes: on task i of the
  // cluster, distributed/pipeline_strategy.h, where 0 means one stage per task).
  int num_stages = 2;
  int micro_batches = 4;  // must divide every global batch
  PipelineSchedule schedule = PipelineSchedule::kGPipe;
  std::vector<std::string> boundaries;  // first layers of stages 1..S-1; empty: balanced by cost
  // Without boundaries, what the balancing weighs: each layer's cost in the model's layer order
  // (LayerCostsFromTrace: measured microseconds); empty: its parameter count. A layer adds 1.
  std::vector<double> layer_costs;
  // Data parallelism over whole pipelines (stages x replicas, one process): replica d's stage s on
  // CPU:(d * num_stages + s) with its own copy of the stage's weights; each global batch is split
  // into `replicas` slices of `micro_batches` micro-batches, and each weight's gradient, summed
  // over its replica's micro-batches, is all-reduced across the replicas of its stage.
  int replicas = 1;
};

// One segment of a stage's work in a step: the forward or the backward of one micro-batch.
struct PipelineSegment {
  int micro_batch;
  bool backward;
};

// The node ids of one micro-batch's passes in the training graph: forward (and loss) in
// [forward_begin, backward_begin), its gradients in [backward_begin, end).
struct PipelineRanges {
  int forward_begin, backward_begin, end;
};

class PipelineStrategy : public Strategy {
 public:
  explicit PipelineStrategy(PipelineOptions options);
  std::string name() const override { return "PipelineStrategy"; }
  bool mirrored() const override { return false; }
  const PipelineStrategy* pipeline() const override { return this; }
  // A global batch is split into replicas x micro-batches (SplitBatch: replica d's micro-batch m is
  // part d * M + m): InvalidArgument unless they divide it.
  int batch_parts() const override { return options_.micro_batches * options_.replicas; }
  std::vector<std::vector<Tensor>> SplitBatch(const std::vector<Tensor>& global) const override;

  int num_stages() const { return options_.num_stages; }
  int micro_batches() const { return options_.micro_batches; }
  PipelineSchedule schedule() const { return options_.schedule; }
  int replicas() const { return options_.replicas; }
  // Replica `replica`'s stage `stage`.
  const std::string& stage_device(int stage, int replica = 0) const {
    return devices()[static_cast<size_t>(replica * options_.num_stages + stage)];
  }
  // The stage of each layer (in `layers`' order, the model's); `model` names it in errors.
  std::vector<int> AssignStages(const std::vector<train::LayerPtr>& layers, const std::string& model) const;
  // Stage `stage`'s segments in the order the schedule runs them.
  std::vector<PipelineSegment> StageOrder(int stage) const;
  // The stage whose device `device` names (a node's requested device, as Scope::WithDevice writes
  // it), or -1 when it is no stage's; `replica` (if given) gets the pipeline replica.
  int StageOfDevice(const std::string& device, int* replica = nullptr) const;
  // (S - 1) / (M + S - 1).
  double bubble_fraction() const;

 protected:
  // Stage i on stage_devices[i] (the first options.num_stages of them): the tasks of a cluster
  // (distributed/pipeline_strategy.h). InvalidArgument when there are fewer devices than stages.
  PipelineStrategy(PipelineOptions options, std::vector<std::string> stage_devices);

 private:
  PipelineOptions options_;
};

// The bubble one traced training step actually had: per stage, the share of the step (from its
// first kernel's start to its last kernel's end, over every device) in which no kernel of the
// stage's device ran (replica 0's, with several pipeline replicas). _Recv events are waits, not work, and do not count as busy. `stages` gets a
// fraction per stage (-1 for a stage with no event in the trace: one in another process); the
// result is their mean over the traced stages (-1 when none is).
double MeasuredBubble(const StepTrace& trace, const PipelineStrategy& pipeline, std::vector<double>* stages = nullptr);

// Each layer's measured cost in a traced single-device training step: the summed microseconds of
// the kernels of its forward ops ("d1/...") and their gradients ("gradients/d1/..."), by node name,
// in `layers`' order (the optimizer's updates and unnamed work count for no layer). For
// PipelineOptions::layer_costs.
std::vector<double> LayerCostsFromTrace(const StepTrace& trace, const std::vector<train::LayerPtr>& layers);

// The id the next node added to `g` gets (at least).
int NextNodeId(const Graph& g);
// Orders each stage's segments as the schedule says: a NoOp gate per segment on the stage's device,
// for each pipeline replica (`micro_batches`: replica d's micro-batch m at d * M + m),
// with control edges from every node of the stage's previous segment, to every node of the
// segment that has a data input (constants and placeholders need no order). Nodes are on stage
// s when their requested device is the stage's (StageOfDevice); nodes with no device (the step's
// feeds) are not ordered.
void SchedulePipeline(Graph* g, const PipelineStrategy& pipeline, const std::vector<PipelineRanges>& micro_batches);

}  // namespace weft
