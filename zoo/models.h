// The model zoo: each model defined once, with the layers API, by name.
//
//   const ZooModel& m = FindZooModel("mnist_cnn");
//   std::unique_ptr<weft::train::Model> model = m.build({28, 28, 1}, /*classes=*/10);
//
// Models: mlp (784-512-512-10), mnist_cnn (the talks' Keras CNN), lenet5, resnet20 (the
// CIFAR ResNet-20 v1 layout), vgg_small, and gpt_small (a character-level decoder-only
// transformer: its input is (context) character ids, its output (context, vocabulary) logits of
// the next character at every position).
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
  int num_classes = 10;                        // the classes (a text model: its vocabulary size)
  std::string default_data = "fashion-mnist";  // what --data is when not given
  bool text() const { return default_data == "fortunes"; }
};

const std::vector<ZooModel>& ZooModels();
// Throws NotFound listing the known names.
const ZooModel& FindZooModel(const std::string& name);

}  // namespace weft::zoo
