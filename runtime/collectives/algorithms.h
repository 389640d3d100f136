// A collective op's `algorithm` attr picks one of these (ops/collective.h; cpu0, cpu1, group and
// x0, x1 as in collective.h's example):
//
//   Output sum0 = ops::AllReduce(s.WithDevice(cpu0), x0, group, 1, 0, "Add", "Id", "ring");
//   Output sum1 = ops::AllReduce(s.WithDevice(cpu1), x1, group, 1, 1, "Add", "Id", "ring");
//   CollectiveParams p;                                   // what "auto" stands for:
//   p.group_size = 2;
//   p.devices = {cpu0, cpu1};
//   ChooseAllReduce(p, /*bytes=*/4096);                   // "shared": both members in this process
//
// The collective algorithms. Each starts this member's part of one instance on a Collective
// (collective.h) that the caller created and Start()ed; it ends with Finish(output) or Fail.
// Every member of the instance must call the same function with inputs of one dtype.
//
// AllReduce (merge op and final division in the Collective's params), choice by ChooseAllReduce:
// - shared: every member in this process: each member hands its input to the others (no copy)
//   and reduces only its 1/n slice of all inputs, in rank order, into one output tensor that
//   every member then outputs (no copy). Results equal the sequential rank-order reduction.
// - ring: reduce-scatter then all-gather around the ring of ranks, each of the n segments cut
//   into chunks of `chunk_bytes` that travel independently (chunk k+1 is on the wire while chunk
//   k is reduced). Each segment is reduced once and then copied, so all members get the same bits.
// - recursive_doubling: log2(n) rounds of exchanging the whole tensor with rank ^ 2^k (ranks
//   beyond the largest power of two first fold into a partner and get the result back at the end);
//   both partners merge (lower rank, higher rank), so all members get the same bits.
// - hierarchical (auto across processes when a task has several members): each task's first
//   member (its leader) merges the task's inputs in rank order (handed over without copies), the
//   leaders all-reduce across tasks (ring or recursive doubling by size), and each leader hands
//   the result to its task's members. All members get the leaders' bits.
// Broadcast: the source hands its input to every member (direct); the others check its shape.
// AllGather: inputs of one shape [d0, ...] concatenated along dim 0 in rank order: [n*d0, ...].
// ReduceScatter: input [d0, ...]; rank r gets rows [start_r, start_r + rows_r) of the reduction,
//   rows_r = d0 / n + (r < d0 % n ? 1 : 0) (the first d0 % n ranks get one row more).
// Both by ChooseGather: direct (every member sends each other member what it needs; in one
// process) or ring (ring_gather.cc: n - 1 steps around the ring of ranks; across processes). The
// ring reduce-scatter merges segment r in ring order, starting after rank r (rank order: direct).
#pragma once

#include <memory>
#include <string>

#include "core/tensor.h"
#include "runtime/collectives/collective.h"

namespace weft {

// The algorithm `auto` stands for, or `requested` when it is not auto (InvalidArgument for an
// unknown name, or for `shared` when the members are not all in one process). Across processes,
// one member per task: recursive doubling when it costs no more than the ring by the cost model
// (p.cost, cost_model.h), i.e. up to RecursiveDoublingMaxBytes(p.cost, group_size), else the ring.
std::string ChooseAllReduce(const CollectiveParams& p, int64_t bytes);

void SharedAllReduce(const std::shared_ptr<Collective>& c, const Tensor& input);
void RingAllReduce(const std::shared_ptr<Collective>& c, const Tensor& input);
void RecursiveDoublingAllReduce(const std::shared_ptr<Collective>& c, const Tensor& input);
void HierarchicalAllReduce(const std::shared_ptr<Collective>& c, const Tensor& input);
void Broadcast(const std::shared_ptr<Collective>& c, const Tensor& input);
void AllGather(const std::shared_ptr<Collective>& c, const Tensor& input);
void ReduceScatter(const std::shared_ptr<Collective>& c, const Tensor& input);
// "direct" when every member is in this process, else "ring".
std::string ChooseGather(const CollectiveParams& p);
void RingAllGather(const std::shared_ptr<Collective>& c, const Tensor& input);
void RingReduceScatter(const std::shared_ptr<Collective>& c, const Tensor& input);

// ReduceScatter's split of `rows` among `n` ranks: rank r's first row and row count.
void ScatterRows(int64_t rows, int n, int r, int64_t* start, int64_t* count);

}  // namespace weft
