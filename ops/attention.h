// Fused causal multi-head attention (declared in ops/attention.cc; CPU kernels in
// ops/kernels/cpu/attention.cc, CUDA in ops/kernels/cuda/attention.*): one node instead of
// BatchMatMul, the causal mask, Softmax and a second BatchMatMul, and no [B, H, T, S] tensor kept
// between the forward and the backward pass (flash attention's scheme: the forward pass saves the
// row log-sum-exp, the backward pass recomputes the probabilities block by block).
//
//   // q [B, T, H, K], k [B, S, H, K], v [B, S, H, V]: the projections' (rows, H * dim) outputs
//   // reshaped, no transpose.
//   auto att = ops::FusedCausalAttention(s, q, k, v, /*scale=*/1 / std::sqrt(K));
//   Output out = att[0];   // [B, T, H, V]: softmax(scale * q k^T, causal) v per head
//   Output lse = att[1];   // [B, H, T]: log sum_j exp(scale * q_i . k_j) over the kept keys j <= i
//
// Query step i attends key steps j <= i (Keras' use_causal_mask: the lower triangle of the
// (T, S) score matrix, also when T != S). S must be positive where there are queries.
#pragma once

#include <vector>

#include "core/tensor.h"
#include "graph/scope.h"

namespace weft {

struct AttentionDims {
  int64_t batch, queries, keys, heads, key_dim, value_dim;  // -1 where unknown
};

// Checks q [B, T, H, K], k [B, S, H, K], v [B, S, H, V]: ranks, and the dims they share agree
// where known; InvalidArgument names the inputs and their shapes. Used by the shape functions and
// the kernels (CPU and CUDA).
AttentionDims CheckAttentionShapes(const TensorShape& q, const TensorShape& k, const TensorShape& v);

// The kernels' checks (CPU and CUDA), on tensors with every dim known: CheckAttentionShapes, and
// at least one key where there are queries. Returns the dims.
AttentionDims CheckAttentionInputs(const Tensor& q, const Tensor& k, const Tensor& v);
// The gradient kernels' checks of dout, out (the output's shape), lse and dlse ([B, H, T], or dlse
// the empty [0] tensor: zeros). Returns whether dlse has values.
bool CheckAttentionGradInputs(const AttentionDims& d, const Tensor& dout, const Tensor& out, const Tensor& lse,
                              const Tensor& dlse);
// The attr `scale`, with 0 read as 1 / sqrt(key_dim).
double AttentionScale(double scale, int64_t key_dim);

namespace ops {

// {out [B, T, H, V], lse [B, H, T]}. scale 0: 1 / sqrt(K).
std::vector<Output> FusedCausalAttention(const Scope& s, Output q, Output k, Output v, double scale = 0);

}  // namespace ops
}  // namespace weft
