// The model zoo: each model defined once, with the layers API, by name.
//
//   const ZooModel& m = FindZooModel("mnist_cnn");
//   std::unique_ptr<weft::train::Model> model = m.build({28, 28, 1}, /*classes=*/10);
//
// Models: mlp (784-512-512-10), mnist_cnn (the talks' Keras CNN), lenet5, resnet20 (the
// CIFAR ResNet-20 v1 layout), vgg_small, gpt_small (a character-level decoder-only
// transformer: its input is (context) character ids, its output (context, vocabulary) logits of
// the next character at every position) and lstm_text (Embedding + LSTM over the quotes of
// Debian's fortunes: which file a quote came from; its data is `fortunes-files`, data/fortunes.h).
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
  int num_classes = 10;                        // the classes (a next-character model: its vocabulary size)
  std::string default_data = "fashion-mnist";  // what --data is when not given
  // A next-character model (its data: fortunes as character windows; `weft-zoo generate`).
  bool text() const { return default_data == "fortunes"; }
  // Its inputs are character ids (text() models and the fortunes-files classifier).
  bool takes_ids() const { return text() || default_data == "fortunes-files"; }
};

const std::vector<ZooModel>& ZooModels();
// Throws NotFound listing the known names.
const ZooModel& FindZooModel(const std::string& name);

}  // namespace weft::zoo
