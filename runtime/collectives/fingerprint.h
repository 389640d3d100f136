// Collective fingerprints: what one process's step will ask of its collective peers, compared
// with what theirs will, before any data moves. Workers that run different programs (one layer
// wider, one collective more or fewer, another algorithm) otherwise meet in a collective whose
// messages do not fit, or wait for one the other never starts; compared first, the step fails at
// once with FailedPrecondition naming the first collective that differs on each side.
//
//   std::vector<CollectiveSignature> mine = ...;   // a Session collects its step's (SessionOptions::check_collectives)
//   std::string wire = EncodeSignatures(mine);                                  // sent to every peer
//   std::vector<CollectiveSignature> theirs = DecodeSignatures(received, "worker 1");
//   Status s = CompareSignatures(mine, "worker 0", theirs, "worker 1");   // the lower rank first
//   // FailedPrecondition: "collective fingerprints differ (0x... vs 0x...): worker 1 all-reduces
//   //  'dense/kernel' grad [5408,64] where worker 0 has 'dense/kernel' grad [5408,32] (collective
//   //  3 of 5: node 'optimizer/all_reduce_2', group 1, instance 3, ...)"
//
// What must agree: the op, group key, instance key, dtype, input shape and algorithm of every
// collective, in (group, instance) order. The node name, rank, device and label only describe
// (the members of one group legitimately differ in those).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/status.h"

namespace weft {

struct CollectiveSignature {
  std::string op;    // CollectiveReduce, CollectiveBroadcast, CollectiveAllGather, CollectiveReduceScatter
  std::string node;  // the node's name in the step's graph
  int64_t group_key = 0, instance_key = 0;
  DType dtype = DType::kInvalid;
  TensorShape shape;      // the input's static shape (dims may be unknown)
  std::string algorithm;  // CollectiveReduce's; empty for the others
  // What the members exchange, for people: "; "-separated items such as "'dense/kernel' grad
  // [5408,64]" (the collective ops' `label` attr); may be empty.
  std::string label;
};

// Sorts by (group, instance, node): the order every worker of one program produces.
void SortSignatures(std::vector<CollectiveSignature>* s);
// 64-bit FNV-1a over the fields that must agree, in order.
uint64_t FingerprintOf(const std::vector<CollectiveSignature>& s);
// Bytes for the wire and back; Decode throws DataLoss naming `from` on malformed input.
std::string EncodeSignatures(const std::vector<CollectiveSignature>& s);
std::vector<CollectiveSignature> DecodeSignatures(std::string_view bytes, const std::string& from);
// "all-reduces 'dense/kernel' grad [5408,64] (node 'optimizer/all_reduce', float32 [5408,64],
// group 1, instance 3, algorithm auto)".
std::string DescribeSignature(const CollectiveSignature& s);
// OK when the fingerprints agree; else FailedPrecondition naming the first differing collective
// on each side (and, inside a bucket of several gradients, the first differing gradient), worded
// "{other_name} <does this> where {reference_name} has <that>": two workers that each compare with
// the other pass the same reference (the lower-ranked) and so report the same sentence.
Status CompareSignatures(const std::vector<CollectiveSignature>& reference, const std::string& reference_name,
                         const std::vector<CollectiveSignature>& other, const std::string& other_name);

}  // namespace weft
