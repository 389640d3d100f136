// Collective ops: a group of `group_size` nodes, one per replica (device or task), that compute
// one result together. In one process the members meet in the step's rendezvous; across
// processes the UCX collectives carry them.
#include "ops/all_ops.h"
#include "ops/op_def.h"

namespace weft {

void RegisterCollectiveOps(OpRegistry& r) {
  r.Register("CollectiveReduce").Input("input", "T").Output("data", "T").TypeAttr("T", {})
      .Attr("group_size", AttrType::kInt).Attr("group_key", AttrType::kInt).Attr("instance_key", AttrType::kInt)
      .Attr("rank", AttrType::kInt).Attr("merge_op", "Add").Attr("final_op", "Id")
      .Stateful().NoGradient().Shape(UnchangedShape)
      .Doc("All-reduce: every member gets merge_op over the members' inputs (Add, Max, Min), in rank order "
           "so every member's result is bit-identical, then final_op (Id, or Div: divided by group_size). "
           "Members of an instance share (group_key, instance_key); `rank` is this member's place in 0..group_size-1.");
}

}  // namespace weft
