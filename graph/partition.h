// The partitioner: cuts a placed graph into one graph per device, joined by _Send/_Recv pairs.
//
//   std::map<std::string, std::unique_ptr<Graph>> parts = Partition(graph, devices);
//   // parts["/job:localhost/replica:0/task:0/device:CPU:1"] holds that device's nodes
//
// Every data edge from device A to device B becomes A: _Send -> B: _Recv; there is one pair per
// (tensor, destination device) however many consumers the tensor has on B. A control edge
// from A to B becomes a pair carrying a dummy scalar (A: Const with the control input ->
// _Send; B: _Recv -> control input of the consumer), one per (source node, destination).
// Each pair's attrs spell its rendezvous key (runtime/rendezvous.h):
// send_device;send_device_incarnation;recv_device;tensor_name;0:0, and the pair is named
// after the tensor ("_send/dense/MatMul_0/to_CPU_1", "_recv/..."). Nodes keep their names.
// Pairs carrying values that live in host memory whatever the device (int32/int64 shapes and
// indices, fetched results, control dummies) have attr `_host_memory` = true, for device
// transports (the GPU backend copies only the others).
// A while loop spread over devices (graph/placer.h) gets TF's control loops: on each device with
// a _Recv of a value inside the loop's frame, Enter(constant) -> Merge -> Switch(the LoopCond,
// sent from its device each iteration) -> Identity -> NextIteration iterates with the loop, and
// each such _Recv takes a control edge from its Merge, so it runs in the frame once per
// iteration and its key ends in the frame instance and iteration (frame:iter) instead of 0:0
// (docs/control-flow.md, "Devices").
// REQUIRES: every node has an assigned device (graph/placer.h) that `devices` knows.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "graph/device.h"
#include "graph/graph.h"

namespace weft {

std::map<std::string, std::unique_ptr<Graph>> Partition(const Graph& graph, const DeviceSet& devices);

// The Send/Recv pairs of a partitioning, for tests and DOT: (send node, recv node, key).
struct SendRecvPair {
  std::string send_device, recv_device, tensor_name, key;
  bool host_memory = false;
};
std::vector<SendRecvPair> SendRecvPairs(const std::map<std::string, std::unique_ptr<Graph>>& parts);

}  // namespace weft
