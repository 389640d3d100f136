// Collective ops: a group of `group_size` nodes, one per replica (device or task), that compute
// one result together, exchanging messages through the step's rendezvous (in one process the
// LocalRendezvous, across processes UcxRendezvous). Kernels: ops/kernels/cpu/collective.cc;
// algorithms: runtime/collectives/. docs/collectives.md has the contract.
#include "ops/collective.h"

#include "core/checked.h"
#include "runtime/collectives/algorithms.h"
#include "ops/all_ops.h"
#include "ops/op_def.h"

namespace weft {
namespace {

const std::vector<DType> kCollectiveTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};

// The group attrs every collective shares, checked where the node is built: group_size sizes the
// output (all-gather), divides rows (reduce-scatter) and the kernel's bookkeeping.
int64_t CheckGroup(const InferenceContext& c) {
  const int64_t n = CheckAttrRange(c.attr<int64_t>("group_size"), 1, kMaxListArity, "group_size");
  CheckAttrRange(c.attr<int64_t>("rank"), 0, n - 1, "rank");
  const double timeout = c.attr<double>("timeout_seconds");
  WEFT_REQUIRE(timeout > 0 && timeout <= kMaxTimeoutSeconds, "attr 'timeout_seconds' = {} must be in (0, {}]", timeout,
               kMaxTimeoutSeconds);
  return n;
}

void GroupUnchangedShape(InferenceContext& c) {
  CheckGroup(c);
  UnchangedShape(c);
}

void AllGatherShape(InferenceContext& c) {
  const int64_t n = CheckGroup(c);
  TensorShape in = c.WithRankAtLeast(c.input(0), 1, "input");
  if (in.unknown_rank()) {
    c.set_output(0, in);
    return;
  }
  std::vector<int64_t> dims = in.dims();
  if (dims[0] >= 0) dims[0] = CheckedMul(dims[0], n, "CollectiveAllGather: rows");
  c.set_output(0, TensorShape(dims));
}

void ReduceScatterShape(InferenceContext& c) {
  CheckGroup(c);
  TensorShape in = c.WithRankAtLeast(c.input(0), 1, "input");
  if (in.unknown_rank()) {
    c.set_output(0, in);
    return;
  }
  std::vector<int64_t> dims = in.dims();
  if (dims[0] >= 0) {
    int64_t start = 0;
    ScatterRows(dims[0], c.attr<int>("group_size"), c.attr<int>("rank"), &start, &dims[0]);
  }
  c.set_output(0, TensorShape(dims));
}

const char* kGroupDoc =
    " Members of an instance share (group_key, instance_key) and run in one step; `rank` is this member's place "
    "in 0..group_size-1; `group_devices` lists the members' full device names in rank order, comma-separated "
    "(empty: this task's CPU:0..group_size-1); a member waiting longer than `timeout_seconds` for another fails "
    "with DeadlineExceeded naming the missing rank. `label` says for people what the members exchange "
    "(\"'dense/kernel' grad [5408,64]\", items separated by \"; \"): the collective fingerprint "
    "(runtime/collectives/fingerprint.h) names it when workers differ.";

}  // namespace

void RegisterCollectiveOps(OpRegistry& r) {
  auto group = [](OpDefBuilder b) {
    b.Input("input", "T").Output("data", "T").TypeAttr("T", kCollectiveTypes)
        .Attr("group_size", AttrType::kInt).Attr("group_key", AttrType::kInt).Attr("instance_key", AttrType::kInt)
        .Attr("rank", AttrType::kInt).Attr("group_devices", "").Attr("timeout_seconds", AttrValue(60.0))
        .Attr("label", "").Stateful().NoGradient();
    return b;
  };
  group(r.Register("CollectiveReduce")).Attr("merge_op", "Add").Attr("final_op", "Id").Attr("algorithm", "auto")
      .Attr("chunk_bytes", AttrValue(int64_t{1} << 20)).Shape(GroupUnchangedShape)
      .Doc(std::string("All-reduce: every member gets merge_op (Add, Max, Min) over the members' inputs, then "
                       "final_op (Id, or Div: divided by group_size); bit-identical on every member. algorithm: "
                       "auto (shared memory when all members are in this process, else recursive_doubling up to "
                       "64 KiB and ring above, hierarchical when a task has several members), shared, ring, "
                       "recursive_doubling, hierarchical; chunk_bytes: the ring's pipeline chunk.") + kGroupDoc);
  group(r.Register("CollectiveBroadcast")).Attr("source_rank", 0).Shape(GroupUnchangedShape)
      .Doc(std::string("Broadcast: every member outputs the input of member `source_rank`; the others' inputs "
                       "give the expected shape (a different one is an error).") + kGroupDoc);
  group(r.Register("CollectiveAllGather")).Shape(AllGatherShape)
      .Doc(std::string("All-gather: the members' inputs (one shape [d0, ...]) concatenated along dim 0 in rank "
                       "order: [group_size*d0, ...].") + kGroupDoc);
  group(r.Register("CollectiveReduceScatter")).Attr("merge_op", "Add").Attr("final_op", "Id")
      .Shape(ReduceScatterShape)
      .Doc(std::string("Reduce-scatter: the all-reduce of the inputs [d0, ...], of which member r outputs rows "
                       "[start_r, start_r + rows_r), rows_r = d0 / group_size + (r < d0 % group_size ? 1 : 0): "
                       "when d0 is not divisible, the first ranks get one row more.") + kGroupDoc);
}

namespace ops {
namespace {

std::string JoinDevices(const std::vector<std::string>& devices) {
  std::string out;
  for (const std::string& d : devices) out += (out.empty() ? "" : ",") + d;
  return out;
}

AttrMap GroupAttrs(const CollectiveGroup& g, int64_t instance, int64_t rank) {
  return {{"group_size", g.size},           {"group_key", g.key},
          {"instance_key", instance},       {"rank", rank},
          {"group_devices", JoinDevices(g.devices)}, {"timeout_seconds", g.timeout_seconds}};
}

}  // namespace

Output AllReduce(const Scope& s, Output x, const CollectiveGroup& g, int64_t instance, int64_t rank,
                 const std::string& merge, const std::string& final_op, const std::string& algorithm,
                 const std::string& label) {
  AttrMap a = GroupAttrs(g, instance, rank);
  a["label"] = label;
  a["merge_op"] = merge;
  a["final_op"] = final_op;
  a["algorithm"] = algorithm;
  return s.Op("CollectiveReduce", {x}, std::move(a));
}

Output Broadcast(const Scope& s, Output x, const CollectiveGroup& g, int64_t instance, int64_t rank,
                 int64_t source_rank, const std::string& label) {
  AttrMap a = GroupAttrs(g, instance, rank);
  a["label"] = label;
  a["source_rank"] = source_rank;
  return s.Op("CollectiveBroadcast", {x}, std::move(a));
}

Output AllGather(const Scope& s, Output x, const CollectiveGroup& g, int64_t instance, int64_t rank) {
  return s.Op("CollectiveAllGather", {x}, GroupAttrs(g, instance, rank));
}

Output ReduceScatter(const Scope& s, Output x, const CollectiveGroup& g, int64_t instance, int64_t rank,
                     const std::string& merge, const std::string& final_op) {
  AttrMap a = GroupAttrs(g, instance, rank);
  a["merge_op"] = merge;
  a["final_op"] = final_op;
  return s.Op("CollectiveReduceScatter", {x}, std::move(a));
}

}  // namespace ops
}  // namespace weft
