// Builder functions for the collective ops (ops/collective.cc; algorithms in
// runtime/collectives/). Every member of a group adds one node with the same group and
// instance and its own rank, on its own device:
//
//   ops::CollectiveGroup g{.size = 2, .key = 1, .devices = {dev0, dev1}};
//   Output sum0 = ops::AllReduce(s.WithDevice(dev0), grad0, g, /*instance=*/7, /*rank=*/0);
//   Output sum1 = ops::AllReduce(s.WithDevice(dev1), grad1, g, 7, 1);
#pragma once

#include <string>
#include <vector>

#include "graph/scope.h"

namespace weft::ops {

struct CollectiveGroup {
  int64_t size = 1;
  int64_t key = 0;
  std::vector<std::string> devices;  // full names in rank order; empty: this task's CPU:0..size-1
  double timeout_seconds = 60;
};

// merge: "Add", "Max", "Min"; final_op: "Id" or "Div" (mean for Add). algorithm: auto, shared,
// ring, recursive_doubling. label: what the members exchange, for diagnostics ("'dense/kernel'
// grad [5408,64]"; runtime/collectives/fingerprint.h).
Output AllReduce(const Scope& s, Output x, const CollectiveGroup& g, int64_t instance, int64_t rank,
                 const std::string& merge = "Add", const std::string& final_op = "Id",
                 const std::string& algorithm = "auto", const std::string& label = "");
Output Broadcast(const Scope& s, Output x, const CollectiveGroup& g, int64_t instance, int64_t rank,
                 int64_t source_rank = 0, const std::string& label = "");
Output AllGather(const Scope& s, Output x, const CollectiveGroup& g, int64_t instance, int64_t rank);
Output ReduceScatter(const Scope& s, Output x, const CollectiveGroup& g, int64_t instance, int64_t rank,
                     const std::string& merge = "Add", const std::string& final_op = "Id");

}  // namespace weft::ops
