// Gradient bucketing for the all-reduce (as DDP's buckets and Horovod's fusion buffer): replica
// r's gradients, taken in reverse order (the last layers' gradients exist first in the backward
// pass), are packed greedily into buckets of up to `bucket_bytes`; each bucket is flattened and
// concatenated, all-reduced by one CollectiveReduce, and split back. A bucket's all-reduce depends
// only on its own gradients, so it starts as soon as they exist while the backward pass goes on.
// Sums are element by element in rank order, so the results equal the unbucketed all-reduce's.
//
//   std::vector<Output> sums = AllReduceInBuckets(scope, grads, var_shapes, group, rank, /*first_instance=*/1, 25 << 20);
#pragma once

#include <vector>

#include "graph/scope.h"
#include "ops/collective.h"

namespace weft::train {

// The buckets (gradient indices, each bucket in reverse gradient order) for gradients of these
// byte sizes: a gradient larger than `bucket_bytes` is a bucket of its own. bucket_bytes <= 0:
// one bucket per gradient.
std::vector<std::vector<int>> PlanBuckets(const std::vector<int64_t>& bytes, int64_t bucket_bytes);

// Replica `rank`'s all-reduced (summed) gradients, in the order of `grads`, through one
// CollectiveReduce per bucket (instance keys first_instance, first_instance + 1, ...; the same on
// every replica because the plan depends only on the shapes). `shapes`: the gradients' shapes
// (their variables'), fully known; one dtype (InvalidArgument naming the gradient otherwise).
// `names`: the variables' names (empty, or one per gradient): each all-reduce's label lists the
// gradients it carries ("'dense/kernel' grad [5408,64]; 'dense/bias' grad [64]").
std::vector<Output> AllReduceInBuckets(const Scope& s, const std::vector<Output>& grads,
                                       const std::vector<TensorShape>& shapes, const ops::CollectiveGroup& g,
                                       int64_t rank, int64_t first_instance, int64_t bucket_bytes,
                                       const std::vector<std::string>& names = {});

}  // namespace weft::train
