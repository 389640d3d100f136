// Sharded optimizer state (ZeRO stages 1 and 2, Rajbhandari et al. 2020) for mirrored strategies:
// each of the R replicas in sync keeps the optimizer's slots (momentum, Adam's m and v, ...) of
// only 1/R of the parameters.
//
//   MultiWorkerOptions o;
//   o.shard_optimizer_state = 2;                      // or MirroredStrategy(2, /*shard_optimizer_state=*/1)
//   MultiWorkerMirroredStrategy strategy(o);
//   { auto scope = strategy.scope(); model = ...; model->Compile(...); }   // the sharded step below
//
// Layout: the trainable variables, in order, flattened and concatenated into one buffer of P
// elements, padded with zeros to R * S (S = ceil(P / R)); replica r owns elements [r S, (r+1) S).
// Flat and even rather than whole variables: every shard is the same size whatever the model's
// shapes (one 20 MB embedding among small layers cannot unbalance it), the collectives move equal
// pieces, and any R works (R need not divide P: the last shards hold the padding, which stays zero).
//
// One step of replica r (compile.cc builds it from ShardedUpdate):
//   stage 1: all-reduce the gradients (the unsharded strategy's bucketed all-reduce), take the
//            shard's elements of them;
//   stage 2: flatten and pad the gradients, reduce-scatter the flat buffer (each replica receives
//            only its shard's sums: (R-1)/R of the buffer moves instead of 2 (R-1)/R);
//   then the optimizer updates the shard's parameters (a variable of S elements, set from the
//   model's variables at the start of the step and emptied at its end: float32 parameters need no
//   master copy between steps) with slots of S elements, the updated shards are all-gathered into
//   the flat buffer, and every variable is assigned its part of it. A replica holds k P / R
//   elements of optimizer state between steps instead of k P (k slots: SGD with momentum 1, Adam 2).
// The update is element by element (every optimizer here is), so a sharded step equals the
// unsharded one to rounding (bit for bit under stage 1 with the same all-reduce).
//
// Not supported with sharding (InvalidArgument from Compile): clipnorm and global_clipnorm (they
// need norms over whole gradients), variable constraints, gradient accumulation, pipelines.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"
#include "graph/scope.h"
#include "ops/collective.h"
#include "train/optimizers.h"

namespace weft::train {

// Where each variable's elements sit in the flat buffer and which of them each shard holds.
struct ShardLayout {
  int shards = 1;
  int64_t total = 0;  // P: elements of every variable together
  int64_t shard = 0;  // S = ceil(P / shards); shards * S >= P
  std::vector<int64_t> offsets, sizes;  // per variable: first element in the flat buffer, element count
  // Shard `rank`'s part of variable `var`: its elements [begin, begin + length).
  struct Piece {
    size_t var;
    int64_t begin, length;
  };
  std::vector<Piece> Pieces(int rank) const;  // in flat order
  int64_t Padding(int rank) const;            // zeros after the pieces (S minus their lengths)
};

// The layout of variables of these (fully known) shapes over `shards` shards (>= 1).
ShardLayout PlanShards(const std::vector<TensorShape>& shapes, int shards);

// Shard `rank` of per-variable values (the variables themselves, or their gradients): [S].
Output ShardOf(const Scope& s, const ShardLayout& layout, int rank, const std::vector<Output>& per_variable);
// The same on the host (a checkpoint's full slots into a replica's shard). Float32 tensors of
// the variables' element counts; InvalidArgument naming `what` otherwise.
Tensor ShardOf(const ShardLayout& layout, int rank, const std::vector<Tensor>& per_variable, const std::string& what);
// Per-variable tensors of these shapes from the flat gathered buffer [shards * S] (host).
std::vector<Tensor> SplitFlat(const ShardLayout& layout, const Tensor& flat, const std::vector<TensorShape>& shapes);

struct ShardedUpdateArgs {
  const Optimizer* optimizer = nullptr;
  int stage = 1;                 // 1 or 2
  const ShardLayout* layout = nullptr;
  int rank = 0;                  // this replica's rank among all replicas in sync
  ops::CollectiveGroup all_reduce_group;  // stage 1's gradient all-reduce (the unsharded step's group)
  int64_t bucket_bytes = 0;               // its buckets (train/grad_buckets.h)
  std::vector<std::string> names;         // the variables' names, for the all-reduce's labels
  ops::CollectiveGroup shard_group;       // the reduce-scatter (instance 1) and all-gather (instance 2)
};

// Replica a.rank's sharded update of `vars` (its copies) from its local gradients `grads`;
// `params` is its shard variable ([S], holding ShardOf(vars) before anything reads it), `make_slot`
// makes the shard's slots. Returns the ops that assign every variable its updated value.
std::vector<Output> ShardedUpdate(const Scope& s, const ShardedUpdateArgs& a, const std::vector<Output>& vars,
                                  const std::vector<Output>& grads, Output params, Output lr, Output step,
                                  const SlotFactory& make_slot);

// InvalidArgument naming `who` unless stage is 0, 1 or 2.
void CheckShardStage(int stage, const std::string& who);

}  // namespace weft::train
