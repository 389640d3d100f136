// The compiled graph's handles, shared by model.cc (which builds them) and fit.cc (which runs
// them). Not part of the public API.
#pragma once

#include "train/model.h"
#include "train/zero.h"

namespace weft::train {

struct Model::Compiled {
  CompileOptions options;
  std::vector<Output> x, y;          // placeholders: replica 0's inputs (one per model input), labels (per output)
  Output lr;                         // placeholder: the learning rate
  std::vector<std::vector<Output>> xs, ys;  // per replica (xs[0] == x); one entry without a strategy
  std::vector<Output> sample_weights;  // per replica: float [batch] weights of each example's loss
  Output global_batch;               // float32 scalar: examples in the global batch (replicated steps)
  Node* sync_mirrors = nullptr;      // copies replica 0's variables to the other replicas' copies
  Node* broadcast = nullptr;         // across workers: the chief's replica-0 variables to every worker's
  Output loss;                       // training pass: mean loss + L2 terms
  std::vector<Output> metrics;       // training pass: each metric's batch statistics (train/metrics.h)
  std::vector<Metric> metric_defs;   // resolved against the loss ("accuracy" made concrete)
  Node* train = nullptr;             // updates every variable and the step counter
  // With gradient accumulation (Optimizer::gradient_accumulation_steps k > 1): the k - 1 steps out
  // of k that only add their gradients to the accumulators (and count the step); null without.
  Node* accumulate = nullptr;
  std::vector<Output> pred;          // inference pass outputs (float32)
  Output eval_loss;                  // inference pass: mean loss + L2 terms
  Output eval_sample_weight;         // inference pass: float [batch] weights of each example's loss
  Output eval_weighted_loss;         // inference pass: mean(weight * loss) + L2 terms
  std::vector<Output> eval_metrics;  // inference pass: each metric's batch statistics
  Output step;                       // int64 step counter variable
  std::vector<Output> variables;     // everything a checkpoint holds
  std::vector<Output> optimizer_slots;  // replica 0's optimizer slots (sharded: its shard's)
  // Sharded optimizer state (train/zero.h); null without.
  struct Sharded {
    int stage = 0;
    ShardLayout layout;
    std::vector<Output> vars;                // replica 0's trainable variables, in the layout's order
    std::vector<Output> params;              // per local replica: its parameter shard's storage (set per step)
    std::vector<std::string> slot_names;     // the optimizer's slots, in creation order ("m", "v")
    std::vector<std::vector<Output>> slots;  // per local replica, per slot name: [S]
    std::vector<Output> gathered;            // replica 0's all-gather of each slot, [R * S] (SaveWeights)
    Node* gather = nullptr;                  // every local replica's all-gathers of the slots
  };
  std::unique_ptr<Sharded> sharded;
  Node* restore = nullptr;           // remote variables: assigns each from restore_values (LoadWeights)
  std::vector<Output> restore_values;
};

}  // namespace weft::train
