// _Send and _Recv: the ends of an edge the partitioner cut between two devices. They are
// inserted by the partitioner (graph/partition.h), never written by users, and meet in the
// step's rendezvous (runtime/rendezvous.h) under the key their attrs spell.
#include "ops/all_ops.h"
#include "ops/op_def.h"

namespace weft {

void RegisterSendRecvOps(OpRegistry& r) {
  r.Register("_Send").Input("tensor", "T").TypeAttr("T", {})
      .Attr("tensor_name", AttrType::kString).Attr("send_device", AttrType::kString)
      .Attr("send_device_incarnation", AttrType::kInt).Attr("recv_device", AttrType::kString)
      .Stateful().NoGradient()
      .Doc("Sends `tensor` to `recv_device` under the key "
           "send_device;send_device_incarnation;recv_device;tensor_name;0:0. Never blocks.");
  r.Register("_Recv").Output("tensor", "tensor_type").TypeAttr("tensor_type", {})
      .Attr("shape", TensorShape::Unknown())
      .Attr("tensor_name", AttrType::kString).Attr("send_device", AttrType::kString)
      .Attr("send_device_incarnation", AttrType::kInt).Attr("recv_device", AttrType::kString)
      .Stateful().NoGradient()
      .Shape([](InferenceContext& c) { c.set_output(0, c.attr<TensorShape>("shape")); })
      .Doc("Receives the tensor its _Send sent (asynchronously: the step's other nodes run meanwhile).");
}

}  // namespace weft
