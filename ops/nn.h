// Builder functions for the neural-network ops (NHWC layouts; declared in ops/nn.cc).
#pragma once

#include "graph/scope.h"

namespace weft::ops {

Output BiasAdd(const Scope& s, Output x, Output bias);
Output Relu(const Scope& s, Output x);
Output Relu6(const Scope& s, Output x);
Output LeakyRelu(const Scope& s, Output x, double alpha = 0.2);
Output Elu(const Scope& s, Output x);
Output Sigmoid(const Scope& s, Output x);
Output Tanh(const Scope& s, Output x);
Output Softplus(const Scope& s, Output x);
// x * Phi(x) (Keras' gelu; approximate: the tanh form).
Output Gelu(const Scope& s, Output x, bool approximate = false);
Output Softmax(const Scope& s, Output logits);     // over the last axis
Output LogSoftmax(const Scope& s, Output logits);  // over the last axis
// Returns {loss [batch], backprop [batch, classes]}.
std::vector<Output> SoftmaxCrossEntropyWithLogits(const Scope& s, Output logits, Output labels);
std::vector<Output> SparseSoftmaxCrossEntropyWithLogits(const Scope& s, Output logits, Output labels);

// input NHWC, filter HWIO; padding "SAME" or "VALID"; strides and dilations for (H, W).
Output Conv2D(const Scope& s, Output input, Output filter, std::vector<int64_t> strides = {1, 1},
              std::string padding = "VALID", std::vector<int64_t> dilations = {1, 1});
// The gradient of Conv2D for its input (a transposed convolution): out_backprop NHWC with the
// filter's O channels, filter HWIO, input_sizes an int32 [4] vector (the output's shape).
Output Conv2DBackpropInput(const Scope& s, Output input_sizes, Output filter, Output out_backprop,
                           std::vector<int64_t> strides = {1, 1}, std::string padding = "VALID",
                           std::vector<int64_t> dilations = {1, 1});
// The gradient of Conv2D for its filter: input NHWC, filter_sizes an int32 [4] vector (HWIO),
// out_backprop NHWC.
Output Conv2DBackpropFilter(const Scope& s, Output input, Output filter_sizes, Output out_backprop,
                            std::vector<int64_t> strides = {1, 1}, std::string padding = "VALID",
                            std::vector<int64_t> dilations = {1, 1});
// filter H x W x C x multiplier; output channels C * multiplier.
Output DepthwiseConv2D(const Scope& s, Output input, Output filter, std::vector<int64_t> strides = {1, 1},
                       std::string padding = "VALID", std::vector<int64_t> dilations = {1, 1});
Output MaxPool(const Scope& s, Output input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
               std::string padding = "VALID");
Output AvgPool(const Scope& s, Output input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
               std::string padding = "VALID");
// Normalizes over N, H, W per channel (last axis). Returns {y, batch_mean, batch_variance} in
// training mode, {y, mean, variance} (the inputs) in inference mode.
// {y, mean, rstd} = LayerNorm over the last axis of x: y = (x - mean) * rstd * gamma + beta with
// rstd = 1 / sqrt(variance + epsilon), the statistics per row (x's shape without the last dim).
std::vector<Output> LayerNorm(const Scope& s, Output x, Output gamma, Output beta, double epsilon = 1e-3);
std::vector<Output> FusedBatchNorm(const Scope& s, Output x, Output scale, Output offset, Output mean,
                                   Output variance, double epsilon = 1e-3, bool is_training = true);

}  // namespace weft::ops
