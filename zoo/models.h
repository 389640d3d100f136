// The model zoo: each model defined once, with the layers API, by name.
//
//   const ZooModel& m = FindZooModel("mnist_cnn");
//   std::unique_ptr<weft::train::Model> model = m.build({28, 28, 1}, /*classes=*/10);
//
// Models: mlp (784-512-512-10), mnist_cnn (the talks' Keras CNN), lenet5, resnet20 (the
// CIFAR ResNet-20 v1 layout), vgg_small, and lstm_text (Embedding + LSTM over the quotes of
// Debian's fortunes: which file a quote came from; its data is `fortunes`, data/fortunes.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "train/model.h"

namespace weft::zoo {

struct ZooModel {
  std::string name;
  std::string description;
  TensorShape synthetic_shape;  // the per-example shape `--data synthetic` uses
  std::function<std::unique_ptr<train::Model>(const TensorShape& input_shape, int num_classes)> build;
  std::string data = "fashion-mnist";  // the default --data
  TensorShape data_shape = {28, 28, 1};  // the per-example shape of that data
};

const std::vector<ZooModel>& ZooModels();
// Throws NotFound listing the known names.
const ZooModel& FindZooModel(const std::string& name);

}  // namespace weft::zoo
