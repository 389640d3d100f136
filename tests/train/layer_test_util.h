// Helpers for the layer tests (tests/train/layers_*_test.cc): run a layer's Call on constants,
// check its gradients by finite differences in float64, and catch a build error's message.
//
//   ExpectNear(Apply(Dense(2), {x}, {kernel, bias}), want);
//   CheckLayerGradient(LayerNormalization(), Rand({2, 3}), {gamma, beta});
//   CHECK(ErrorOf([] { Dense(0); }).find("units must be positive") != std::string::npos);
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/status.h"
#include "train/layer.h"

namespace weft::test::layers {

using weft::train::LayerPtr;
using weft::train::Sym;

// The symbolic shape as Keras prints it: "[?,3,4]".
std::string ShapeOf(const Sym& s);

// Runs layer->Call on constant inputs, in the inputs' dtype, with the given weights (default: the
// layer's initial values). `training` sets the call's mode.
Tensor Apply(const LayerPtr& layer, const std::vector<Tensor>& xs, const std::vector<Tensor>& weights = {},
             bool training = false);

// Finite differences (float64) of sum(r * layer(x, w)) against its symbolic gradient, for the
// input and every weight.
void CheckLayerGradient(const LayerPtr& layer, const Tensor& x, const std::vector<Tensor>& weights = {});
// The same for a layer of several inputs (each checked on its own).
void CheckLayerGradientN(const LayerPtr& layer, const std::vector<Tensor>& xs, const std::vector<Tensor>& weights = {});

// The numbers after `"key": [` for every occurrence of key in a golden JSON file's text (one list
// per occurrence), for data kept in tests/train/golden/.
std::vector<std::vector<double>> Lists(const std::string& json, const std::string& key);
// The repo's root: $WEFT_SOURCE_DIR (meson test sets it), else three folders above this
// executable's (build/tests/test_X in a build tree inside the source tree).
std::string SourceDir();
// The text of tests/train/golden/<name>; a failed CHECK (and "") when it cannot be read.
std::string ReadGolden(const std::string& name);

// The message of the weft::Error that f throws ("" when it throws none).
template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace weft::test::layers
