// Keras' regularization-by-noise layers, CenterCrop, and Lambda (a traced function as a layer).
// The noise layers act in the training pass only and are the identity at inference, as Keras:
//
//   Sym h = GaussianNoise(0.1)(x);            // x + N(0, 0.1^2) while training
//   Sym d = SpatialDropout2D(0.2)(conv);      // drops whole channels of NHWC maps
#pragma once

#include <functional>
#include <memory>

#include "graph/graph.h"
#include "train/layer.h"

namespace weft::train {

// x + N(0, stddev^2).
LayerPtr GaussianNoise(double stddev, int64_t seed = 0);
// x * N(1, rate / (1 - rate)); rate in [0, 1).
LayerPtr GaussianDropout(double rate, int64_t seed = 0);
// Dropout of whole channels: one keep decision per (example, channel) of (batch, steps, channels)
// (1D) or (batch, h, w, channels) (2D), the kept ones scaled by 1 / (1 - rate).
LayerPtr SpatialDropout1D(double rate, int64_t seed = 0);
LayerPtr SpatialDropout2D(double rate, int64_t seed = 0);
// SELU-preserving dropout (Klambauer et al., Keras' formula): dropped units become
// alpha' = -1.7581 (SELU's negative saturation), then a * x + b restores mean and variance.
LayerPtr AlphaDropout(double rate, int64_t seed = 0);
// The identity that adds (l1 * sum(|x|) + l2 * sum(x^2)) / batch size to the loss (Keras'
// activity regularization, normalized by the batch as Keras 3 does), in training and evaluation.
LayerPtr ActivityRegularization(double l1 = 0.0, double l2 = 0.0);
// The central (height, width) window of NHWC inputs (training and inference); batched images
// smaller than the window are resized as Keras 3 does (Resizing with crop_to_aspect_ratio).
LayerPtr CenterCrop(int64_t height, int64_t width);

// A function traced once into its own graph over a placeholder of the input's shape (with the
// batch dim), as Keras' Lambda layer traces its function; Call copies that graph's nodes in.
struct TracedFunction {
  std::shared_ptr<Graph> graph;
  Output input, output;
};
// `trace` is called once, when the layer is first called, with the input's shape.
LayerPtr Lambda(std::function<TracedFunction(const TensorShape&)> trace);

}  // namespace weft::train
