#include "train/zero.h"

#include <algorithm>
#include <cstring>

#include "ops/array.h"
#include "ops/framework.h"
#include "ops/state.h"
#include "train/grad_buckets.h"

namespace weft::train {

void CheckShardStage(int stage, const std::string& who) {
  WEFT_REQUIRE(stage == 0 || stage == 1 || stage == 2,
               "{}: shard_optimizer_state must be 0 (off), 1 (shard the optimizer slots) or 2 (also reduce-scatter "
               "the gradients), got {}", who, stage);
}

ShardLayout PlanShards(const std::vector<TensorShape>& shapes, int shards) {
  WEFT_REQUIRE(shards >= 1, "sharded optimizer state: {} shards", shards);
  ShardLayout l;
  l.shards = shards;
  for (const TensorShape& shape : shapes) {
    WEFT_REQUIRE(shape.IsFullyDefined(), "sharded optimizer state: a variable of shape {}, not fully known",
                 shape.ToString());
    l.offsets.push_back(l.total);
    l.sizes.push_back(shape.num_elements());
    l.total += shape.num_elements();
  }
  l.shard = std::max<int64_t>(1, (l.total + shards - 1) / shards);
  return l;
}

std::vector<ShardLayout::Piece> ShardLayout::Pieces(int rank) const {
  const int64_t lo = rank * shard, hi = lo + shard;
  std::vector<Piece> out;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const int64_t b = std::max(lo, offsets[k]), e = std::min(hi, offsets[k] + sizes[k]);
    if (b < e) out.push_back(Piece{k, b - offsets[k], e - b});
  }
  return out;
}

int64_t ShardLayout::Padding(int rank) const {
  int64_t held = 0;
  for (const Piece& p : Pieces(rank)) held += p.length;
  return shard - held;
}

Output ShardOf(const Scope& s, const ShardLayout& layout, int rank, const std::vector<Output>& per_variable) {
  std::vector<Output> parts;
  for (const ShardLayout::Piece& p : layout.Pieces(rank)) {
    Output flat = ops::Reshape(s, per_variable[p.var], std::vector<int64_t>{-1});
    parts.push_back(p.length == layout.sizes[p.var] ? flat : ops::Slice(s, flat, {p.begin}, {p.length}));
  }
  if (const int64_t pad = layout.Padding(rank); pad > 0) {
    parts.push_back(ops::Const(s, Tensor::Zeros(DType::kFloat32, TensorShape({pad}))));
  }
  return parts.size() == 1 ? parts[0] : ops::Concat(s, parts, 0);
}

Tensor ShardOf(const ShardLayout& layout, int rank, const std::vector<Tensor>& per_variable, const std::string& what) {
  WEFT_REQUIRE(per_variable.size() == layout.sizes.size(), "{}: {} tensors for {} variables", what,
               per_variable.size(), layout.sizes.size());
  Tensor out = Tensor::Zeros(DType::kFloat32, TensorShape({layout.shard}));
  float* dst = out.data<float>();
  for (const ShardLayout::Piece& p : layout.Pieces(rank)) {
    const Tensor& t = per_variable[p.var];
    WEFT_REQUIRE(t.dtype() == DType::kFloat32 && t.num_elements() == layout.sizes[p.var],
                 "{}: tensor {} is {} {}, expected float32 of {} elements", what, p.var, DTypeName(t.dtype()),
                 t.shape().ToString(), layout.sizes[p.var]);
    std::memcpy(dst, t.data<float>() + p.begin, static_cast<size_t>(p.length) * sizeof(float));
    dst += p.length;
  }
  return out;
}

std::vector<Tensor> SplitFlat(const ShardLayout& layout, const Tensor& flat, const std::vector<TensorShape>& shapes) {
  WEFT_REQUIRE(flat.dtype() == DType::kFloat32 && flat.num_elements() == layout.shards * layout.shard,
               "sharded optimizer state: a gathered buffer of {} {}, expected float32 [{}]", DTypeName(flat.dtype()),
               flat.shape().ToString(), layout.shards * layout.shard);
  std::vector<Tensor> out;
  for (size_t k = 0; k < shapes.size(); ++k) {
    Tensor t(DType::kFloat32, shapes[k]);
    std::memcpy(t.data<float>(), flat.data<float>() + layout.offsets[k],
                static_cast<size_t>(layout.sizes[k]) * sizeof(float));
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Output> ShardedUpdate(const Scope& s, const ShardedUpdateArgs& a, const std::vector<Output>& vars,
                                  const std::vector<Output>& grads, Output params, Output lr, Output step,
                                  const SlotFactory& make_slot) {
  const ShardLayout& l = *a.layout;
  const Scope zs = s.NewSubScope("shard");
  Output g;
  if (a.stage == 1) {
    std::vector<TensorShape> shapes;
    for (const Output& v : vars) shapes.push_back(v.shape());
    const std::vector<Output> sums =
        AllReduceInBuckets(s, grads, shapes, a.all_reduce_group, a.rank, /*first_instance=*/1, a.bucket_bytes, a.names);
    // Every all-reduce must run on every replica, also those of gradients outside this shard
    // (which nothing here reads): the shard's gradient waits for all of them.
    g = ShardOf(zs.WithControlDependencies(sums), l, a.rank, sums);
  } else {
    // Every replica's whole flat gradient, in shard order: replica r receives the sums of [r S, (r+1) S).
    std::vector<Output> flat;
    for (const Output& x : grads) flat.push_back(ops::Reshape(zs, x, std::vector<int64_t>{-1}));
    const int64_t pad = l.shards * l.shard - l.total;
    if (pad > 0) flat.push_back(ops::Const(zs, Tensor::Zeros(DType::kFloat32, TensorShape({pad}))));
    Output all = flat.size() == 1 ? flat[0] : ops::Concat(zs, flat, 0);
    g = ops::ReduceScatter(zs.WithOpName("reduce_scatter"), all, a.shard_group, /*instance=*/1, a.rank);
  }
  const std::vector<Output> updated = a.optimizer->Apply(zs, {params}, {g}, lr, step, make_slot);
  Output gathered = ops::AllGather(zs.WithOpName("all_gather"), updated[0], a.shard_group, /*instance=*/2, a.rank);
  std::vector<Output> assigns;
  for (size_t k = 0; k < vars.size(); ++k) {
    Output piece = ops::Slice(zs, gathered, {l.offsets[k]}, {l.sizes[k]});
    assigns.push_back(ops::Assign(zs, vars[k], ops::Reshape(zs, piece, vars[k].shape().dims())));
  }
  return assigns;
}

}  // namespace weft::train
