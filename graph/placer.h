// The placer: chooses a device for every node of a graph, before the partitioner cuts it.
//
//   Place(&graph, devices, {.soft_placement = true});
//   node->assigned_device();   // "/job:localhost/replica:0/task:0/device:CPU:1"
//
// Rules, in order:
//  1. Colocation groups: a node that takes a variable by reference (Assign, ApplyMomentum, ...)
//     lives with the variable; a node with attr `_colocate_with` = "name" lives with that node.
//     Gradient nodes already carry their forward op's requested device (graph/gradients.h).
//     A while loop's nodes (its frame and its Enter nodes: graph/control_flow.h) are one group
//     when their requests agree: a loop runs on one device, and only its inputs and results
//     cross devices. When they ask for different devices, each is placed on its own and the
//     partitioner runs the loop on each of them (graph/partition.h).
//  2. A group's requested devices (full or partial: "/device:CPU:1", "/task:0", "CPU:*") are
//     merged; two members asking for different devices is InvalidArgument naming both nodes.
//  3. The group goes to the first device (GPU before CPU, then by index) that matches the merged
//     request and has a kernel for every member. With soft_placement, a request no device can
//     honour (no such device, or no kernel of that type) falls back to the first device that has
//     the kernels; without it, that is InvalidArgument naming the node, the requested device, the
//     devices there are and the kernels that exist for the op.
// Deterministic: the same graph and devices give the same placement.
#pragma once

#include "graph/device.h"
#include "graph/graph.h"

namespace weft {

struct PlacerOptions {
  bool soft_placement = true;
};

void Place(Graph* graph, const DeviceSet& devices, const PlacerOptions& options = {});

}  // namespace weft
