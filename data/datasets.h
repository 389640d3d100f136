// In-memory data sets as arrays, ready for Dataset::FromTensors.
//
//   weft::data::ArrayData d = weft::data::FashionMnist(/*train=*/true);   // x float32[60000,28,28,1] in [0,1]
//   auto ds = weft::data::Dataset::FromTensors({d.x, d.y}).Shuffle(1).Batch(64);  // y int32[60000]
//   auto bench = weft::data::Synthetic(10000, {28, 28, 1}, /*num_classes=*/10, /*seed=*/7);
//
// Errors from the files (missing, truncated, wrong magic) come from ReadIdx and name the file.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace weft::data {

struct ArrayData {
  Tensor x;  // float32 [N, ...]
  Tensor y;  // int32 [N], class labels
};

// MNIST-format IDX files in `dir` (see LoadMnist in data/idx.h): x float32 [N,rows,cols,1], the
// pixels scaled to [0,1]; y int32 [N].
ArrayData Mnist(const std::string& dir, bool train);
// Mnist(kFashionMnistDir, train): 60,000 training or 10,000 test images.
ArrayData FashionMnist(bool train);

// A learnable, deterministic (per seed) classification set: x float32 [n, example_shape...] is the
// mean of its class (a fixed random pattern per class, values in about [-1,1]) plus unit Gaussian
// noise; y int32 [n] uniform in [0, num_classes). Same arguments, same tensors, on every platform.
ArrayData Synthetic(int64_t n, const TensorShape& example_shape, int num_classes, uint64_t seed);

}  // namespace weft::data
