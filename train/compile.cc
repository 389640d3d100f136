// Model::Compile: the one graph a model trains and evaluates with, replicated over the
// strategy's devices when the model was created in a strategy's scope.
//
// R = replicas (1 without a strategy). Per replica r, on its device: placeholders x_r, y_r (the
// r-th slice of the global batch), the forward pass over replica r's variables, the loss scaled
// as sum(per-example loss) / global batch (plus L2 / R), and Gradients. Mirrored: each gradient
// is all-reduced (CollectiveReduce, sum) and every replica applies it to its own copy. Central
// storage: one variable on the variable device; the gradients are summed there (AddN) and
// applied once. Without a strategy this is the plain single-device step (Mean loss).
#include <algorithm>

#include "core/device_name.h"
#include "runtime/collectives/collective.h"
#include "train/strategy.h"
#include "graph/gradients.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/state.h"
#include "train/grad_buckets.h"
#include "train/model_internal.h"
#include "train/pipeline.h"
#include "train/zero.h"

namespace weft::train {
namespace {

// A weight's regularization (Keras' kernel_regularizer / bias_regularizer): (w, l1, l2).
struct Penalty {
  Output w;
  double l1, l2;
};

// loss + scale * sum over the penalties of l1 * sum(|w|) + l2 * sum(w^2).
Output AddL2(const Scope& s, Output loss, const std::vector<Penalty>& terms, double scale) {
  auto f = [&](double v) { return ops::ScalarLike(s, DType::kFloat32, v); };
  for (const Penalty& p : terms) {
    if (p.l1 > 0.0) loss = ops::Add(s, loss, ops::Mul(s, f(p.l1 * scale), ops::Sum(s, ops::Abs(s, p.w))));
    if (p.l2 > 0.0) loss = ops::Add(s, loss, ops::Mul(s, f(p.l2 * scale), ops::Sum(s, ops::Square(s, p.w))));
  }
  return loss;
}

// loss + scale * the layers' own loss terms (each replica's, as Keras scales them under a strategy).
Output AddLayerLosses(const Scope& s, Output loss, const std::vector<Output>& terms, double scale) {
  for (const Output& t : terms) loss = ops::Add(s, loss, ops::Mul(s, ops::ScalarLike(s, DType::kFloat32, scale), t));
  return loss;
}

// Stages x replicas (train/pipeline.h): stage s's gradients are all-reduced in group key + s
// (above the keys of model.h: the replicas' all-reduce 1, workers 2, broadcast 3, shards 4).
constexpr int64_t kPipelineStageGroupKey = 100;

}  // namespace

// Across workers: a group of every worker's first replica, in worker order (rank = worker index).
ops::CollectiveGroup Model::WorkerGroup(int64_t key) const {
  ops::CollectiveGroup g{.size = strategy_->num_workers(), .key = key,
                         .timeout_seconds = strategy_->collective_timeout_seconds()};
  for (int w = 0; w < strategy_->num_workers(); ++w) {
    g.devices.push_back(strategy_->group_devices()[static_cast<size_t>(w * strategy_->num_local_replicas())]);
  }
  return g;
}

int64_t Model::worker_rank() const { return strategy_->first_replica() / strategy_->num_local_replicas(); }

void Model::Compile(CompileOptions o) {
  const Strategy* current = Strategy::Current();
  if (current != nullptr && current != strategy_) {
    throw Error(errors::InvalidArgument(
        "Model '{}' was created outside {}.scope() and is compiled inside it: its variables would not be "
        "distributed. Create the model inside the strategy's scope.",
        name_, current->name()));
  }
  if (strategy_ != nullptr) {
    o.session.num_cpu_devices = std::max(o.session.num_cpu_devices, strategy_->num_cpu_devices());
    strategy_->ConfigureSession(&o.session);  // across processes: the rendezvous and step ids
  }
  for (const LayerPtr& layer : layers_) {  // model parallelism: the devices the layers are pinned to
    if (layer->device().empty()) continue;
    WEFT_REQUIRE(strategy_ == nullptr, "Model '{}': layer '{}' is pinned to '{}'; pinned layers and a distribution "
                 "strategy do not mix (the strategy places every replica)", name_, layer->name(), layer->device());
    const DeviceName d = DeviceName::Parse(layer->device());
    if (d.id) o.session.num_cpu_devices = std::max(o.session.num_cpu_devices, *d.id + 1);
  }
  session_.reset();
  graph_ = std::make_unique<Graph>();
  graph_->set_seed(o.seed);
  c_ = std::make_unique<Compiled>();
  c_->options = o;
  Scope root = Scope::Root(graph_.get());
  std::vector<Output> inits;
  BuildReplicas(o, root, &inits);
  Node* init = ops::Group(root.WithOpName("init"), inits);
  if (strategy_ != nullptr && strategy_->remote_runner()) o.session.remote = strategy_->remote_runner();
  session_ = std::make_unique<Session>(graph_.get(), o.session);
  if (strategy_ != nullptr && strategy_->chief_initializes_variables() && !strategy_->is_chief()) {
    WaitForVariables(strategy_->collective_timeout_seconds());  // the chief initializes the shared variables
  } else {
    session_->Run({}, {}, {init});
  }
  if (c_->broadcast != nullptr) {  // every worker starts from the chief's values
    session_->Run({}, {}, {c_->broadcast}, RunOptions{.collective = true});
  }
  if (c_->broadcast != nullptr && c_->sync_mirrors != nullptr) session_->Run({}, {}, {c_->sync_mirrors});
  step_ = 0;
}

void Model::BuildReplicas(CompileOptions& o, const Scope& root, std::vector<Output>* inits) {
  // A pipeline's "replicas" are its micro-batches: they share one copy of every variable, which
  // lives on its layer's stage (train/pipeline.h). With several pipeline replicas (stages x
  // replicas), graph replica q is pipeline replica q / M's micro-batch q % M, and each pipeline
  // replica has its own copy of the variables on its stage devices.
  const PipelineStrategy* pipe = strategy_ != nullptr ? strategy_->pipeline() : nullptr;
  stage_device_.clear();
  // Each pipeline replica's layer -> stage device; stage_device_ (which Forward reads) is set to
  // the replica being built, and left at replica 0's (Evaluate and Predict run there).
  std::vector<std::map<const Layer*, std::string>> stage_devices;
  if (pipe != nullptr) {
    const std::vector<int> stages = pipe->AssignStages(layers_, name_);
    stage_devices.resize(static_cast<size_t>(pipe->replicas()));
    for (int d = 0; d < pipe->replicas(); ++d) {
      for (size_t i = 0; i < layers_.size(); ++i) {
        stage_devices[static_cast<size_t>(d)][layers_[i].get()] = pipe->stage_device(stages[i], d);
      }
    }
    stage_device_ = stage_devices[0];
    WEFT_REQUIRE(o.optimizer.global_clipnorm == 0.0, "Model '{}': global_clipnorm needs every gradient on one device; "
                 "under a PipelineStrategy use clipnorm or clipvalue", name_);
  }
  // replicas: this process's; group: all workers' (more than replicas across processes).
  const int replicas = pipe != nullptr ? pipe->batch_parts() : strategy_ != nullptr ? strategy_->num_local_replicas() : 1;
  // How many consecutive graph replicas share one copy of the variables.
  const int micro = pipe != nullptr ? pipe->micro_batches() : 1;
  const int group = pipe != nullptr ? replicas : strategy_ != nullptr ? strategy_->num_replicas_in_sync() : 1;
  const bool replicated = group > 1;
  const bool multi_worker = strategy_ != nullptr && strategy_->num_workers() > 1;
  const bool mirrored = strategy_ == nullptr || strategy_->mirrored();
  auto device = [&](int r) {
    return strategy_ != nullptr && pipe == nullptr ? strategy_->devices()[static_cast<size_t>(r)] : "";
  };
  auto replica_scope = [&](const Scope& s, int r) {
    return (r == 0 ? s : s.NewSubScope("replica_" + std::to_string(r))).WithDevice(device(r));
  };
  auto var_name = [&](const std::string& base, int r) {
    return r == 0 ? base : base + "/replica_" + std::to_string(r);
  };
  // A variable (replica r's copy) with its initializer; copies r > 0 start from copy 0's value.
  std::vector<Output> mirror_syncs;
  std::map<const Node*, Output> initialized;  // variable -> its value after initialization
  auto make_var = [&](const Scope& s, const std::string& name, const TensorShape& shape, const Output& copy_of,
                      const std::function<Output(const Scope&)>& initial) {
    Output v = ops::Variable(s.WithOpName(name), shape, DType::kFloat32);
    Scope is = s.NewSubScope(name + "/init");
    if (copy_of.valid()) {
      inits->push_back(ops::Assign(is, v, ops::Identity(is, initialized.at(copy_of.node))));
      mirror_syncs.push_back(ops::Assign(s.NewSubScope(name + "/sync"), v, ops::Identity(s, copy_of)));
    } else {
      initialized[v.node] = ops::Assign(is, v, initial(is));
      inits->push_back(initialized[v.node]);
      c_->variables.push_back(v);  // checkpoints hold copy 0
    }
    return v;
  };
  // Weights of every layer, per replica ("dense/kernel", "dense/kernel/replica_1", ...).
  std::vector<LayerVars> vars(static_cast<size_t>(replicas));
  std::vector<std::vector<Output>> trainable(static_cast<size_t>(replicas));
  std::vector<std::vector<Penalty>> l2(static_cast<size_t>(replicas));
  std::vector<std::vector<Constraint>> constraints(static_cast<size_t>(replicas));  // per trainable variable
  const Scope var_root = strategy_ != nullptr && !mirrored ? root.WithDevice(strategy_->variable_device()) : root;
  // Not mirrored: each weight on the least loaded variable device (one for central storage, the
  // ps tasks for ParameterServerStrategy), by bytes.
  const std::vector<std::string> var_devices = strategy_ != nullptr && !mirrored ? strategy_->variable_devices()
                                                                                : std::vector<std::string>{};
  std::vector<int64_t> var_load(var_devices.size(), 0);
  auto least_loaded = [&](const TensorShape& shape) {
    const size_t i = static_cast<size_t>(std::min_element(var_load.begin(), var_load.end()) - var_load.begin());
    var_load[i] += shape.num_elements() * 4;
    return root.WithDevice(var_devices[i]);
  };
  for (const LayerPtr& layer : layers_) {
    for (LayerVars& v : vars) v[layer.get()];  // layers without weights too
    for (const Weight& w : layer->weights()) {
      const std::string name = layer->name() + "/" + w.name;
      Output first, copy;
      for (int r = 0; r < replicas; ++r) {
        Output v;
        if (mirrored || r == 0 || (pipe != nullptr && r % micro == 0)) {
          Scope vs = pipe != nullptr ? root.WithDevice(stage_devices.at(static_cast<size_t>(r / micro)).at(layer.get()))
                     : mirrored      ? root.WithDevice(device(r))
                                     : least_loaded(w.shape);
          if (strategy_ == nullptr && !layer->device().empty()) vs = vs.WithDevice(layer->device());
          v = make_var(vs, var_name(name, r / micro), w.shape, first,
                       [&](const Scope& is) { return w.init.Build(is, w.shape); });
          copy = v;
        } else if (pipe != nullptr) {
          v = copy;  // a pipeline's micro-batches read their pipeline replica's copy
        } else {
          v = first;  // central storage: every replica reads the one variable
        }
        if (r == 0) first = v;
        vars[static_cast<size_t>(r)][layer.get()].push_back(v);
        if (w.trainable) {
          trainable[static_cast<size_t>(r)].push_back(v);
          constraints[static_cast<size_t>(r)].push_back(w.constraint);
        }
        if (w.l2 > 0.0 || w.l1 > 0.0) l2[static_cast<size_t>(r)].push_back(Penalty{v, w.l1, w.l2});
      }
    }
  }
  const Scope client = root.WithDevice(device(0));
  const std::string step_device = strategy_ != nullptr ? strategy_->step_device() : "";
  const Scope step_scope = step_device.empty() ? client : root.WithDevice(step_device);
  c_->step = ops::Variable(step_scope.WithOpName("step"), TensorShape{}, DType::kInt64);
  inits->push_back(ops::Assign(step_scope.WithOpName("step/init"), c_->step, ops::Const(step_scope, int64_t{0})));
  c_->variables.push_back(c_->step);
  c_->lr = ops::Placeholder(client.WithOpName("learning_rate"), DType::kFloat32, TensorShape{});
  if (replicated) c_->global_batch = ops::Placeholder(client.WithOpName("global_batch_size"), DType::kFloat32, {});

  // The training pass of each replica.
  std::vector<Output> losses, applies;
  c_->metric_defs.clear();
  WEFT_REQUIRE(o.metrics.empty() || outputs_.size() == 1,
               "Model '{}': metrics need a single output (this model has {}); compile without metrics", name_,
               outputs_.size());
  for (const Metric& m : o.metrics) c_->metric_defs.push_back(m.Resolved(o.loss, output_shape()));
  std::vector<std::vector<Output>> metrics(o.metrics.size());
  std::vector<std::vector<Output>> grads(static_cast<size_t>(replicas));
  // Keras' loss of a model with several outputs: the loss of each output against its labels, summed.
  auto per_example_loss = [&](const Scope& ls, const std::vector<Output>& ys, const std::vector<Output>& preds) {
    Output total = o.loss.Build(ls, ys[0], preds[0]);
    for (size_t i = 1; i < preds.size(); ++i) total = ops::Add(ls, total, o.loss.Build(ls, ys[i], preds[i]));
    return total;
  };
  recompute_layers_.clear();
  for (const std::string& name : o.recompute) {
    auto it = std::find_if(layers_.begin(), layers_.end(), [&](const LayerPtr& l) { return l->name() == name; });
    if (it == layers_.end()) {
      std::string known;
      for (const LayerPtr& l : layers_) known += (known.empty() ? "" : ", ") + l->name();
      throw Error(errors::InvalidArgument("Model '{}': recompute names layer '{}', which the model does not have "
                                          "(its layers: {})", name_, name, known));
    }
    recompute_layers_.insert(it->get());
  }
  std::vector<PipelineRanges> segments;  // a pipeline's micro-batches: the node ids of their passes
  for (int r = 0; r < replicas; ++r) {
    const Scope rs = replica_scope(root, r);
    const size_t ri = static_cast<size_t>(r);
    const int forward_begin = NextNodeId(*graph_);
    std::vector<Output> x, y;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      x.push_back(ops::Placeholder(rs.WithOpName(i == 0 ? "x" : "x_" + std::to_string(i)), inputs_[i]->dtype,
                                   inputs_[i]->shape));
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      y.push_back(ops::Placeholder(rs.WithOpName(i == 0 ? "y" : "y_" + std::to_string(i)), o.loss.label_dtype(),
                                   o.loss.LabelShape(outputs_[i]->shape)));
    }
    c_->xs.push_back(x);
    c_->ys.push_back(y);
    // Per-example loss weights (Keras' sample_weight / class_weight); TrainOnBatch feeds ones
    // when none are given.
    Output sw = ops::Placeholder(rs.WithOpName("sample_weight"), DType::kFloat32, TensorShape{-1});
    c_->sample_weights.push_back(sw);
    std::vector<Output> updates;
    std::vector<Output> layer_losses;
    GradientOptions grad_options;
    if (pipe != nullptr) stage_device_ = stage_devices[static_cast<size_t>(r / micro)];
    std::vector<Output> pred =
        Forward(rs, x, /*training=*/true, vars[ri], &updates, &layer_losses, &grad_options.recompute);
    if (pipe != nullptr) stage_device_ = stage_devices[0];
    applies.insert(applies.end(), updates.begin(), updates.end());
    Scope ls = rs.NewSubScope("loss");
    if (pipe != nullptr) ls = ls.WithDevice(pipe->stage_device(pipe->num_stages() - 1, r / micro));
    Output per_example = ops::Mul(ls, per_example_loss(ls, y, pred), sw);
    // Mean over the global batch: each replica contributes sum / global_batch.
    Output loss = !replicated ? ops::Mean(ls, per_example)
                              : ops::Div(ls, ops::Sum(ls, per_example), c_->global_batch);
    loss = AddL2(ls, loss, l2[ri], 1.0 / group);
    loss = AddLayerLosses(ls, loss, layer_losses, 1.0 / group);
    losses.push_back(loss);
    for (size_t m = 0; m < o.metrics.size(); ++m) {  // statistics are sums: replicas and workers add theirs
      metrics[m].push_back(c_->metric_defs[m].BuildStats(rs.NewSubScope("metrics"), y[0], pred[0]));
    }
    const int backward_begin = NextNodeId(*graph_);
    grads[ri] = Gradients(rs, {loss}, trainable[ri], {}, grad_options);
    segments.push_back({forward_begin, backward_begin, NextNodeId(*graph_)});
    for (size_t i = 0; i < grads[ri].size(); ++i) {
      WEFT_REQUIRE(grads[ri][i].valid(), "Model '{}': the loss does not depend on the trainable variable '{}'", name_,
                   trainable[ri][i].node->name());
    }
  }
  if (pipe != nullptr) SchedulePipeline(graph_.get(), *pipe, segments);
  c_->x = c_->xs[0];
  c_->y = c_->ys[0];
  // Across workers, the loss and metrics of the step are summed over the workers' first replicas.
  int64_t next_worker_instance = 1;
  auto over_workers = [&](const Scope& s, Output local) {
    return multi_worker ? ops::AllReduce(s.WithOpName("all_reduce_workers"), local, WorkerGroup(kWorkerGroupKey),
                                         next_worker_instance++, worker_rank())
                        : local;
  };
  c_->loss = over_workers(client.NewSubScope("loss"),
                          replicas == 1 ? losses[0] : ops::AddN(client.NewSubScope("loss"), losses));
  for (size_t m = 0; m < o.metrics.size(); ++m) {
    c_->metrics.push_back(over_workers(
        client.NewSubScope("metrics"), replicas == 1 ? metrics[m][0] : ops::AddN(client.NewSubScope("metrics"), metrics[m])));
  }

  // Updates: all-reduced per replica (mirrored), or summed on the variables' device (central).
  const int num_vars = static_cast<int>(trainable[0].size());
  const std::vector<Output> layer_updates = applies;  // every step, accumulating or not
  const int accumulate_steps = o.optimizer.gradient_accumulation_steps;
  std::vector<Output> accumulations;  // the accumulating steps' AssignAdds
  // Mirrored: the gradients' all-reduce over all replicas of all workers, in rank order.
  ops::CollectiveGroup all;
  int64_t bucket = 0;
  if (mirrored && replicated) {
    all = {.size = group, .key = 1, .devices = strategy_->group_devices(),
           .timeout_seconds = strategy_->collective_timeout_seconds()};
    bucket = o.all_reduce_bucket_bytes >= 0 ? o.all_reduce_bucket_bytes
             : AllInOneTask(strategy_->group_devices()) ? 0 : int64_t{25} << 20;
  }
  const int zero = mirrored && replicated && pipe == nullptr ? strategy_->shard_optimizer_state() : 0;
  if (zero > 0) {
    CheckShardable(o, constraints[0]);
    c_->sharded = std::make_unique<Compiled::Sharded>();
    c_->sharded->stage = zero;
    c_->sharded->vars = trainable[0];
    std::vector<TensorShape> shapes;
    for (const Output& v : trainable[0]) shapes.push_back(v.shape());
    c_->sharded->layout = PlanShards(shapes, group);
  }
  // The copies that update: every mirrored replica's, each pipeline replica's (graph replica
  // r * M's variables), or the one central copy.
  const int updaters = mirrored ? replicas : pipe != nullptr ? pipe->replicas() : 1;
  for (int r = 0; r < updaters; ++r) {
    const size_t ri = static_cast<size_t>(r * micro);
    const Scope os = (mirrored ? replica_scope(root, r)
                      : pipe != nullptr ? (r == 0 ? root : root.NewSubScope("replica_" + std::to_string(r)))
                                        : var_root)
                         .NewSubScope("optimizer");
    if (zero > 0) {
      const std::vector<Output> a = BuildShardedReplica(root.WithDevice(device(r)), os, o, r, all, bucket,
                                                        trainable[ri], grads[ri], inits);
      applies.insert(applies.end(), a.begin(), a.end());
      continue;
    }
    std::vector<Output> g(static_cast<size_t>(num_vars));
    if (mirrored && replicated) {
      std::vector<TensorShape> shapes;
      std::vector<std::string> names;
      for (const Output& v : trainable[ri]) {
        shapes.push_back(v.shape());
        names.push_back(v.node->name());
      }
      g = AllReduceInBuckets(os, grads[ri], shapes, all, strategy_->first_replica() + r, /*first_instance=*/1, bucket,
                             names);
    }
    for (int k = 0; k < num_vars; ++k) {
      const size_t ki = static_cast<size_t>(k);
      if (!replicated) {
        g[ki] = grads[0][ki];
      } else if (mirrored) {
        continue;  // all-reduced above
      } else {
        // This copy's graph replicas: all of them (central storage), or a pipeline replica's micro-batches.
        const int sharing = pipe != nullptr ? micro : replicas;
        std::vector<Output> per_replica;
        for (int q = 0; q < sharing; ++q) per_replica.push_back(grads[ri + static_cast<size_t>(q)][ki]);
        // Summed where the variable lives. A pipeline's micro-batch gradients arrive one backward
        // segment at a time: a chain of Adds folds each in as it comes (and frees it), where one
        // AddN would keep all M until the last.
        const Scope ss = os.WithDevice(trainable[ri][ki].node->requested_device());
        if (pipe == nullptr) {
          g[ki] = ops::AddN(ss, per_replica);
        } else {
          g[ki] = per_replica[0];
          for (size_t q = 1; q < per_replica.size(); ++q) g[ki] = ops::Add(ss, g[ki], per_replica[q]);
          if (pipe->replicas() > 1) {  // stages x replicas: all-reduced across the replicas of its stage
            const int stage = pipe->StageOfDevice(trainable[ri][ki].node->requested_device());
            ops::CollectiveGroup sg{.size = pipe->replicas(), .key = kPipelineStageGroupKey + stage,
                                    .timeout_seconds = strategy_->collective_timeout_seconds()};
            for (int d = 0; d < pipe->replicas(); ++d) sg.devices.push_back(pipe->stage_device(stage, d));
            g[ki] = ops::AllReduce(ss.WithOpName("all_reduce_replicas"), g[ki], sg, /*instance=*/k + 1, /*rank=*/r,
                                   "Add", "Id", "auto",
                                   fmt::format("'{}' grad {}", trainable[0][ki].node->name(), trainable[0][ki].shape().ToString()));
          }
        }
      }
    }
    auto make_slot = [&](const Output& var, const std::string& slot) {
      // Slots follow their variable's copy: "dense/kernel/momentum", "dense/kernel/replica_1/momentum".
      const std::string base = var.node->name();
      const bool replica_copy = base.find("/replica_") != std::string::npos;
      Output slot_of_first;
      if (replica_copy) {
        const std::string first_name = base.substr(0, base.rfind("/replica_")) + "/" + slot;
        slot_of_first = Output(graph_->FindNode(first_name), 0);
      }
      const Scope vs = root.WithDevice(mirrored ? device(r) : var.node->requested_device());
      Output v = make_var(vs, base + "/" + slot, var.shape(), slot_of_first, [&](const Scope& is) {
        return ops::Const(is, Tensor::Zeros(DType::kFloat32, var.shape()));
      });
      if (r == 0) c_->optimizer_slots.push_back(v);
      return v;
    };
    // Gradient accumulation (Keras 3): a step that does not update adds g to the accumulator; the
    // k-th applies the mean (accumulator + g) / k and zeroes the accumulator after the update has
    // read it (a variable's output is its value at the step's start: the zeroing copies on write).
    std::vector<Output> accumulators;
    if (accumulate_steps > 1) {
      for (int k = 0; k < num_vars; ++k) {
        const size_t ki = static_cast<size_t>(k);
        const Output acc = make_slot(trainable[ri][ki], "gradient_accumulator");
        // Under a pipeline on the weight's stage (os has no device there).
        const Scope as = (pipe != nullptr ? os.WithDevice(trainable[ri][ki].node->requested_device()) : os)
                             .NewSubScope("accumulate");
        accumulations.push_back(ops::AssignAdd(as, acc, g[ki]));
        g[ki] = ops::Mul(as, ops::Add(as, acc, g[ki]), ops::ScalarLike(as, DType::kFloat32, 1.0 / accumulate_steps));
        accumulators.push_back(acc);
      }
    }
    std::vector<Output> a;
    if (pipe == nullptr) {
      a = o.optimizer.Apply(os, trainable[ri], g, c_->lr, c_->step, make_slot);
    } else {  // each stage updates its own variables where they live
      a.resize(static_cast<size_t>(num_vars));
      for (int s = 0; s < pipe->num_stages(); ++s) {
        std::vector<Output> vs, gs;
        std::vector<size_t> at;
        for (size_t k = 0; k < static_cast<size_t>(num_vars); ++k) {
          if (trainable[ri][k].node->requested_device() != pipe->stage_device(s, r)) continue;
          vs.push_back(trainable[ri][k]);
          gs.push_back(g[k]);
          at.push_back(k);
        }
        if (vs.empty()) continue;
        const Scope ss = os.NewSubScope("stage_" + std::to_string(s)).WithDevice(pipe->stage_device(s, r));
        const std::vector<Output> part = o.optimizer.Apply(ss, vs, gs, c_->lr, c_->step, make_slot);
        for (size_t i = 0; i < at.size(); ++i) a[at[i]] = part[i];
      }
      for (size_t k = 0; k < a.size(); ++k) {
        if (!a[k].valid()) {
          throw Error(errors::Internal("Model '{}': variable '{}' is on no pipeline stage ('{}')", name_,
                                       trainable[ri][k].node->name(), trainable[ri][k].node->requested_device()));
        }
      }
    }
    // Keras' constraints: each constrained variable projected once its update has run (Apply
    // returns one update per variable: every gradient exists, checked above).
    for (size_t k = 0; k < a.size() && a.size() == trainable[ri].size(); ++k) {
      const Constraint& c = constraints[ri][k];
      if (!c) continue;
      const Scope cs = os.NewSubScope("constraint").WithControlDependencies(std::vector<Output>{a[k]});
      // A variable's output is its value at the step's start: adding zeros after the update
      // returns the updated value.
      const Output& v = trainable[ri][k];
      Output updated = ops::AssignAdd(cs, v, ops::Const(cs, Tensor::Zeros(DType::kFloat32, v.shape())));
      a[k] = ops::Assign(cs, v, c.Project(cs, updated));
    }
    const Scope rs = os.NewSubScope("accumulate").WithControlDependencies(a);
    for (const Output& acc : accumulators) {
      const Scope zs = rs.WithDevice(acc.node->requested_device());
      a.push_back(ops::Assign(zs, acc, ops::Const(zs, Tensor::Zeros(DType::kFloat32, acc.shape()))));
    }
    applies.insert(applies.end(), a.begin(), a.end());
  }
  if (accumulate_steps > 1) {
    std::vector<Output> deps = layer_updates;
    deps.insert(deps.end(), accumulations.begin(), accumulations.end());
    Output count = ops::AssignAdd(step_scope.NewSubScope("accumulate").WithControlDependencies(deps), c_->step,
                                  ops::Const(step_scope, int64_t{1}));
    c_->accumulate = ops::Group(root.WithOpName("accumulate_gradients"), {count});
  }
  Output increment = ops::AssignAdd(step_scope.NewSubScope("optimizer").WithControlDependencies(applies), c_->step,
                                    ops::Const(step_scope, int64_t{1}));
  c_->train = ops::Group(root.WithOpName("train"), {increment});
  if (!mirror_syncs.empty()) c_->sync_mirrors = ops::Group(root.WithOpName("sync_mirrors"), mirror_syncs);
  if (zero > 0) FinishSharded(root);
  if (multi_worker) {  // the chief's first replica's values to every worker's first replica
    std::vector<Output> assigns;
    int64_t instance = 1;
    for (const Output& v : c_->variables) {
      const Scope bs = client.NewSubScope(v.node->name() + "/broadcast");
      assigns.push_back(ops::Assign(
          bs, v, ops::Broadcast(bs.WithOpName("broadcast"), ops::Identity(bs, v), WorkerGroup(kBroadcastGroupKey),
                                instance++, worker_rank(), /*source_rank=*/0,
                                fmt::format("'{}' {}", v.node->name(), v.shape().ToString()))));
    }
    c_->broadcast = ops::Group(root.WithOpName("broadcast_from_chief"), assigns);
  }

  // The inference pass (Evaluate, Predict): replica 0's variables on replica 0's device.
  Scope is = root.NewSubScope("inference").WithDevice(device(0));
  std::vector<Output> eval_layer_losses;
  c_->pred = Forward(is, c_->x, /*training=*/false, vars[0], nullptr, &eval_layer_losses);
  Scope es = is.NewSubScope("loss");
  Output eval_per_example = per_example_loss(es, c_->y, c_->pred);
  c_->eval_loss = AddL2(es, ops::Mean(es, eval_per_example), l2[0], 1.0);
  c_->eval_loss = AddLayerLosses(es, c_->eval_loss, eval_layer_losses, 1.0);
  // Evaluate with sample weights: the loss weighted as in training, sum(w * loss) / batch.
  c_->eval_sample_weight = ops::Placeholder(es.WithOpName("sample_weight"), DType::kFloat32, TensorShape{-1});
  c_->eval_weighted_loss =
      AddL2(es, ops::Mean(es, ops::Mul(es, eval_per_example, c_->eval_sample_weight)), l2[0], 1.0);
  c_->eval_weighted_loss = AddLayerLosses(es, c_->eval_weighted_loss, eval_layer_losses, 1.0);
  for (const Metric& m : c_->metric_defs) {
    c_->eval_metrics.push_back(m.BuildStats(is.NewSubScope("metrics"), c_->y[0], c_->pred[0]));
  }
}

double Model::learning_rate() const {
  RequireCompiled("learning_rate");
  return (*c_->options.optimizer.learning_rate)(step_);
}

void Model::SetLearningRate(double lr) {
  RequireCompiled("SetLearningRate");
  WEFT_REQUIRE(lr >= 0, "Model '{}': the learning rate must be >= 0, got {}", name_, lr);
  const Optimizer& opt = c_->options.optimizer;
  if (!opt.learning_rate->constant()) {
    throw Error(errors::FailedPrecondition(
        "Model '{}': the optimizer was compiled with the learning-rate schedule {}, which sets the rate at "
        "every step; compile with a number to set the rate yourself", name_, opt.learning_rate->ToString()));
  }
  c_->options.optimizer.learning_rate = ConstantLR(lr);  // read by the next step
}

}  // namespace weft::train
