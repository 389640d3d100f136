// Graph passes run by Session when it compiles a signature.
#pragma once

#include <memory>
#include <vector>

#include "core/threadpool.h"
#include "graph/graph.h"

namespace weft {

// Builds the graph a step runs: the nodes `fetches` and `targets` need, with each fed output
// replaced by an `_Arg` node (index = position in feeds) and each fetch written by a `_Retval`
// node (index = position in fetches). Throws NotFound naming a Placeholder that is needed but
// not fed.
std::unique_ptr<Graph> PruneForStep(const Graph& g, const std::vector<Output>& feeds,
                                    const std::vector<Output>& fetches, const std::vector<Node*>& targets);

// Replaces stateless nodes whose inputs are all constants by Const nodes holding their value
// (computed with the CPU kernels). Skips outputs larger than `max_bytes`. Returns the number folded.
// Shape/Size/Rank of tensors whose shape is fully known at build time fold too. `pool` runs the
// kernels (not owned).
int FoldConstants(Graph* g, ThreadPool* pool, size_t max_bytes = 10 << 20);

// Merges stateless nodes with the same op, inputs, control inputs, attrs and device. Returns
// the number removed.
int EliminateCommonSubexpressions(Graph* g);

// Fuses CPU op chains whose intermediates nothing else reads, so their tensors are written and
// read once instead of three times: Relu(BiasAdd(Conv2D(x, f), b)) and BiasAdd(Conv2D(x, f), b)
// become _FusedConv2D(x, f, b) (activation "Relu" / "None"); ReluGrad(MaxPoolGrad(y, p, dp), y)
// becomes _MaxPoolGradRelu(y, p, dp); then MaxPool(_FusedConv2D(x, f, b)) becomes
// _FusedConv2DMaxPool(x, f, b) and that pool's grads _MaxPoolGradWithArgmax, so the conv output is
// never stored (when the CPU kernel supports the shapes: at most 4 input channels, a VALID pool
// whose windows do not overlap, static conv output height and width); and Conv2DBackpropFilter(x,
// sizes, dz) with BiasAddGrad(dz) of the same dz becomes _Conv2DBackpropFilterBias(x, sizes, dz)
// (outputs: the filter and the bias gradient) when dz has a static channel count of at least 32 in
// whole 16-channel blocks. Returns the number of fusions.
int FuseNnOps(Graph* g);
// The batch-norm part of FuseNnOps (which calls it): Relu(FusedBatchNorm) -> _FusedBatchNormRelu
// and FusedBatchNormGrad(ReluGrad) -> _FusedBatchNormGradRelu, on the CPU, where nothing else
// reads the intermediate tensor. Returns the number of fusions.
int FuseBatchNormRelu(Graph* g);
// Inference batch norm folded into the convolution before it (TensorFlow's fold_batch_norms):
// FusedBatchNorm(Conv2D(x, f), scale, offset, mean, variance) with is_training false becomes
// BiasAdd(Conv2D(x, f * a), offset - mean * a), a = scale / sqrt(variance + epsilon), when nothing
// else reads the convolution's output or the batch norm's statistics, on the CPU. The per-channel
// a and the scaled filter are small nodes run each step (constant folding removes them for
// constant weights); FuseNnOps then fuses the bias (and a following Relu) into the convolution, so
// the activation is written once instead of three times. Returns the number of folds.
int FoldBatchNormIntoConv(Graph* g);

}  // namespace weft
