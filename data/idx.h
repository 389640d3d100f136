// The IDX file format of MNIST and Fashion-MNIST (gzip-compressed or plain), and loaders.
//
//   Tensor images = ReadIdx("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz");
//   // uint8[60000,28,28]
//   MnistSplit train = LoadMnist(kFashionMnistDir, /*train=*/true);   // images uint8[N,28,28], labels uint8[N]
//
// Errors name the file: NotFound when it cannot be opened, DataLoss for a wrong magic number,
// an unsupported element type, or a size that does not match the dims (truncated or trailing data).
#pragma once

#include <string>

#include "core/tensor.h"

namespace weft::data {

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Reads one IDX file; the element type is given by the file (uint8, int8 -> int32, int32, float32, float64).
Tensor ReadIdx(const std::string& path);

struct MnistSplit {
  Tensor images;  // uint8 [N, rows, cols]
  Tensor labels;  // uint8 [N]
};

// Reads {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] from `dir` (the gzip name first) and
// checks that images and labels agree in count.
MnistSplit LoadMnist(const std::string& dir, bool train);

}  // namespace weft::data
