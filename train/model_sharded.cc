// A model's sharded optimizer state (train/zero.h): the per-replica shard variables Compile
// builds, their synchronization with the model's variables, checkpoints in the unsharded format,
// and the optimizer-state bytes a replica holds.
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/state.h"
#include "train/model.h"
#include "train/model_internal.h"
#include "train/strategy.h"

namespace weft::train {

void Model::CheckShardable(const CompileOptions& o, const std::vector<Constraint>& constraints) const {
  const Optimizer& opt = o.optimizer;
  auto refuse = [&](const std::string& what) {
    throw Error(errors::InvalidArgument("Model '{}': {} with shard_optimizer_state={} ({}): each replica updates only "
                                        "its shard of the parameters; compile without it or with shard_optimizer_state=0",
                                        name_, what, strategy_->shard_optimizer_state(), strategy_->name()));
  };
  if (opt.clipnorm > 0.0) refuse(fmt::format("clipnorm={} (a norm over each whole gradient)", opt.clipnorm));
  if (opt.global_clipnorm > 0.0) refuse(fmt::format("global_clipnorm={} (a norm over all gradients)", opt.global_clipnorm));
  if (opt.gradient_accumulation_steps > 1) {
    refuse(fmt::format("gradient_accumulation_steps={}", opt.gradient_accumulation_steps));
  }
  for (size_t k = 0; k < constraints.size(); ++k) {
    if (constraints[k]) refuse(fmt::format("the constraint on trainable variable {} (projects whole variables)", k));
  }
}

std::vector<Output> Model::BuildShardedReplica(const Scope& vs, const Scope& os, const CompileOptions& o, int replica,
                                               const ops::CollectiveGroup& all, int64_t bucket_bytes,
                                               const std::vector<Output>& vars, const std::vector<Output>& grads,
                                               std::vector<Output>* inits) {
  Compiled::Sharded& z = *c_->sharded;
  const int rank = strategy_->first_replica() + replica;
  const std::string base = replica == 0 ? std::string("optimizer_shard")
                                        : "optimizer_shard/replica_" + std::to_string(replica);
  // A slot starts at zeros, as the unsharded optimizer's.
  auto shard_variable = [&](const std::string& name) {
    Output v = ops::Variable(vs.WithOpName(name), TensorShape({z.layout.shard}), DType::kFloat32);
    const Scope is = vs.NewSubScope(name + "/init");
    inits->push_back(ops::Assign(is, v, ops::Const(is, Tensor::Zeros(DType::kFloat32, v.shape()))));
    return v;
  };
  // The shard of the parameters that the optimizer updates lives only during the step: set from
  // the variables (their values at the step's start) before the update, emptied once the updated
  // shards are all-gathered. The variables are float32, so no master copy is kept between steps.
  // The update goes through a second Variable node over the same storage (shared_name) that runs
  // after the set, so whatever the optimizer reads of it (weight decay) is the shard's new value.
  Output storage = ops::Variable(vs.WithOpName(base), TensorShape({z.layout.shard}), DType::kFloat32);
  const Scope ss = vs.NewSubScope(base + "/set");
  Output set = ops::Assign(ss, storage, ShardOf(ss, z.layout, rank, vars), /*validate_shape=*/false);
  Output params = vs.WithOpName(base + "/read").WithControlDependencies(std::vector<Output>{set})
                      .Op("Variable", {}, {{"shape", TensorShape({z.layout.shard})}, {"dtype", DType::kFloat32},
                                           {"shared_name", storage.node->name()}});
  z.params.push_back(storage);
  z.slots.emplace_back();
  auto make_slot = [&](const Output&, const std::string& slot) {
    Output v = shard_variable(base + "/" + slot);
    if (replica == 0) {
      z.slot_names.push_back(slot);
      c_->optimizer_slots.push_back(v);
    }
    z.slots.back().push_back(v);
    return v;
  };
  ShardedUpdateArgs a;
  a.optimizer = &o.optimizer;
  a.stage = z.stage;
  a.layout = &z.layout;
  a.rank = rank;
  a.all_reduce_group = all;
  a.bucket_bytes = bucket_bytes;
  for (const Output& v : vars) a.names.push_back(v.node->name());
  a.shard_group = all;
  a.shard_group.key = kShardGroupKey;
  std::vector<Output> assigns = ShardedUpdate(os, a, vars, grads, params, c_->lr, c_->step, make_slot);
  const Scope es = vs.NewSubScope(base + "/empty").WithControlDependencies(assigns);
  assigns.push_back(ops::Assign(es, storage, ops::Const(es, Tensor(DType::kFloat32, TensorShape({0}))),
                                /*validate_shape=*/false));
  return assigns;
}

void Model::FinishSharded(const Scope& root) {
  Compiled::Sharded& z = *c_->sharded;
  // The checkpoint's gather: one all-gather per slot and replica (instances 1.. of the shard
  // group, in a step of its own), replica 0's results fetched.
  std::vector<Output> all;
  for (size_t r = 0; r < z.slots.size(); ++r) {
    const int rank = strategy_->first_replica() + static_cast<int>(r);
    ops::CollectiveGroup g{.size = strategy_->num_replicas_in_sync(), .key = kShardGroupKey,
                           .devices = strategy_->group_devices(),
                           .timeout_seconds = strategy_->collective_timeout_seconds()};
    for (size_t j = 0; j < z.slots[r].size(); ++j) {
      const Output& slot = z.slots[r][j];
      const Scope gs = root.NewSubScope(slot.node->name() + "/gather").WithDevice(slot.node->requested_device());
      Output full = ops::AllGather(gs.WithOpName("all_gather"), ops::Identity(gs, slot), g,
                                   static_cast<int64_t>(j) + 1, rank);
      all.push_back(full);
      if (r == 0) z.gathered.push_back(full);
    }
  }
  if (!all.empty()) z.gather = ops::Group(root.WithOpName("optimizer_shard/gather_all"), all);
}

bool Model::optimizer_state_sharded() const { return c_ != nullptr && c_->sharded != nullptr; }

std::vector<std::pair<std::string, Tensor>> Model::GatherShardedSlots() {
  const Compiled::Sharded& z = *c_->sharded;
  std::vector<std::pair<std::string, Tensor>> out;
  if (z.gather == nullptr) return out;
  const bool across = strategy_->num_workers() > 1;
  const std::vector<Tensor> full = session_->Run({}, z.gathered, {z.gather}, RunOptions{.collective = across});
  std::vector<TensorShape> shapes;
  for (const Output& v : z.vars) shapes.push_back(v.shape());
  for (size_t j = 0; j < full.size(); ++j) {
    std::vector<Tensor> per_var = SplitFlat(z.layout, full[j], shapes);
    for (size_t k = 0; k < per_var.size(); ++k) {
      out.emplace_back(z.vars[k].node->name() + "/" + z.slot_names[j], std::move(per_var[k]));
    }
  }
  return out;
}

std::function<void()> Model::RestoreShardedSlots(const std::map<std::string, Tensor>& loaded, const std::string& path) {
  const Compiled::Sharded& z = *c_->sharded;
  // Every replica's shard is made and checked before any is assigned.
  std::vector<std::pair<Var*, Tensor>> assign;
  for (size_t j = 0; j < z.slot_names.size(); ++j) {
    std::vector<Tensor> per_var;
    for (const Output& v : z.vars) {
      const std::string name = v.node->name() + "/" + z.slot_names[j];
      auto it = loaded.find(name);
      if (it == loaded.end()) {
        throw Error(errors::NotFound("Model '{}': checkpoint '{}' has no optimizer slot '{}' (is it from another "
                                     "model or optimizer?)", name_, path, name));
      }
      WEFT_REQUIRE(it->second.dtype() == DType::kFloat32 && it->second.shape() == v.shape(),
                   "Model '{}': checkpoint '{}' gives slot '{}' as {} {}, but the model's is float32 {}", name_, path,
                   name, DTypeName(it->second.dtype()), it->second.shape().ToString(), v.shape().ToString());
      per_var.push_back(it->second);
    }
    for (size_t r = 0; r < z.slots.size(); ++r) {
      const int rank = strategy_->first_replica() + static_cast<int>(r);
      Tensor shard = ShardOf(z.layout, rank, per_var, fmt::format("checkpoint '{}'", path));
      assign.emplace_back(session_->vars().LookupOrCreate(z.slots[r][j].node->name()), std::move(shard));
    }
  }
  return [assign = std::move(assign)]() mutable {
    for (auto& [var, value] : assign) {
      std::lock_guard<std::mutex> l(var->mu);
      var->value = std::move(value);
    }
  };
}

int64_t Model::OptimizerStateBytes() {
  RequireCompiled("OptimizerStateBytes");
  int64_t bytes = 0;
  for (const Tensor& t : session_->Run({}, c_->optimizer_slots)) bytes += static_cast<int64_t>(t.bytes());
  return bytes;
}

}  // namespace weft::train
