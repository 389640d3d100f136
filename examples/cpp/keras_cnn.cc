// The talks' local Keras MNIST script, in C++ with weft's training API, on Fashion-MNIST:
//
//   model = Sequential([Conv2D(32, 3, activation='relu', input_shape=(28, 28, 1)), MaxPooling2D(),
//                       Flatten(), Dense(64, activation='relu'), Dense(10)])
//   model.compile(loss=SparseCategoricalCrossentropy(from_logits=True), optimizer=SGD(0.001),
//                 metrics=['accuracy'])
//   model.fit(x_train, y_train, batch_size=64, epochs=3, steps_per_epoch=5)
//
//   ninja -C build examples/cpp/keras_cnn && ./build/examples/cpp/keras_cnn [--full]
//
// As in the talks it takes 3 epochs of 5 steps (a smoke run); `--full` trains one whole epoch
// with momentum SGD instead, which reaches about 87% test accuracy.
#include <cstdio>
#include <cstring>
#include <iostream>

#include "data/datasets.h"
#include "train/model.h"

using namespace weft;
using namespace weft::train;

int main(int argc, char** argv) {
  const bool full = argc > 1 && std::strcmp(argv[1], "--full") == 0;
  try {
    data::ArrayData train = data::FashionMnist(/*train=*/true);  // x float32 [60000,28,28,1] in [0,1], y int32
    data::ArrayData test = data::FashionMnist(/*train=*/false);

    Sequential model({28, 28, 1}, {Conv2D(32, 3, {.activation = "relu"}), MaxPool2D(2), Flatten(),
                                   Dense(64, {.activation = "relu"}), Dense(10)});
    model.Summary(std::cout);
    model.Compile({.loss = SparseCategoricalCrossentropy(/*from_logits=*/true),
                   .optimizer = full ? SGD(0.05, /*momentum=*/0.9) : SGD(0.001),
                   .metrics = {"accuracy"}});
    FitOptions fit{.batch_size = 64, .epochs = full ? 1 : 3, .steps_per_epoch = full ? -1 : 5};
    History history = model.Fit(train.x, train.y, fit);
    Logs result = model.Evaluate(test.x, test.y, 256);
    std::printf("test loss %.4f, test accuracy %.4f (after %lld steps)\n", result["loss"], result["accuracy"],
                static_cast<long long>(model.step()));
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
