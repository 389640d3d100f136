// Model parallelism, the talks' other picture: the convolution and pooling layers of the
// talks' CNN live on CPU:0, the dense layers on CPU:1. The partitioner cuts the training step
// between them with Send/Recv pairs (activations forward, their gradients back); both devices
// work on every step.
//
//   ninja -C build examples/cpp/model_parallel && ./build/examples/cpp/model_parallel [out.dot]
//
// Writes the partitioned training step as DOT (render with `dot -Tpng out.dot -o out.png`).
#include <cstdio>
#include <fstream>
#include <iostream>

#include "graph/graph_io.h"
#include "data/datasets.h"
#include "train/model.h"

using namespace weft;
using namespace weft::train;

int main(int argc, char** argv) {
  const std::string dot_path = argc > 1 ? argv[1] : "model_parallel.dot";
  try {
    data::ArrayData train = data::FashionMnist(/*train=*/true), test = data::FashionMnist(/*train=*/false);
    Sequential model({28, 28, 1}, {Conv2D(32, 3, {.activation = "relu"}).OnDevice("/device:CPU:0"),
                                   MaxPool2D(2).OnDevice("/device:CPU:0"), Flatten().OnDevice("/device:CPU:0"),
                                   Dense(64, {.activation = "relu"}).OnDevice("/device:CPU:1"),
                                   Dense(10).OnDevice("/device:CPU:1")});
    model.Compile({.loss = SparseCategoricalCrossentropy(/*from_logits=*/true),
                   .optimizer = SGD(0.05, /*momentum=*/0.9), .metrics = {"accuracy"}});
    model.Fit(train.x, train.y, {.batch_size = 64, .epochs = 1});
    Logs result = model.Evaluate(test.x, test.y, 256);
    std::printf("test accuracy %.4f\n", result["accuracy"]);
    const auto parts = model.TrainStepPartitions();
    std::ofstream(dot_path) << PartitionsToDot(parts);
    for (const auto& [device, g] : parts) std::printf("%s: %d nodes\n", device.c_str(), g->num_nodes());
    std::printf("partitioned training step written to %s\n", dot_path.c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
