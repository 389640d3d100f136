// Keras' image preprocessing and augmentation layers on NHWC float images. Resizing acts in
// training and at inference; the Random* layers draw one transform per image in the training pass
// and are the identity at inference (evaluate / predict), as Keras. The geometric ones sample
// through the ImageProjectiveTransform op (ops/image.cc):
//
//   Sym a = RandomFlip("horizontal")(x);
//   Sym b = RandomRotation({-0.1, 0.1}, {.fill_mode = "reflect"})(a);   // angles in turns (x 2 pi)
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "train/layer.h"

namespace weft::train {

// A random factor's range (lower, upper); Keras' single number f is (-f, f).
using FactorRange = std::pair<double, double>;

// How the geometric layers sample: interpolation "bilinear" | "nearest"; fill_mode "reflect" |
// "wrap" | "constant" | "nearest" (points outside the input; "constant" reads fill_value).
struct Sampling {
  std::string interpolation = "bilinear";
  std::string fill_mode = "reflect";
  double fill_value = 0.0;
  int64_t seed = 0;
};

// TF2's image resize (half-pixel centers, no antialiasing) to (height, width); crop_to_aspect_ratio
// first takes the largest central window of the target's aspect ratio.
LayerPtr Resizing(int64_t height, int64_t width, const std::string& interpolation = "bilinear",
                  bool crop_to_aspect_ratio = false);
// The resize of NHWC images (static height and width) Resizing applies, for other layers (CenterCrop
// of images smaller than its window, as Keras).
Output ResizeImages(const Scope& s, Output images, int64_t height, int64_t width, const std::string& interpolation,
                    bool crop_to_aspect_ratio);
// mode "horizontal" | "vertical" | "horizontal_and_vertical" (one draw per image flips both axes,
// as Keras 3).
LayerPtr RandomFlip(const std::string& mode, int64_t seed = 0);
// (x - mean) * c + mean per image and channel, c uniform in [1 - lower, 1 + upper], clipped to value_range.
LayerPtr RandomContrast(FactorRange factor, FactorRange value_range, int64_t seed = 0);
// x + d * (high - low), d uniform in factor (within [-1, 1]), clipped to value_range (low, high).
LayerPtr RandomBrightness(FactorRange factor, FactorRange value_range, int64_t seed = 0);
// Training: a (height, width) window at a random offset per image (inputs smaller than it are
// resized as at inference). Inference: Resizing(height, width, crop_to_aspect_ratio=true).
LayerPtr RandomCrop(int64_t height, int64_t width, int64_t seed = 0);
// Rotation by an angle uniform in factor * 2 pi about the image center.
LayerPtr RandomRotation(FactorRange factor, const Sampling& sampling = {});
// Zoom by 1 + f, f uniform in height_factor (width_factor; none: the height's zoom): f > 0 zooms out.
LayerPtr RandomZoom(FactorRange height_factor, std::optional<FactorRange> width_factor, const Sampling& sampling = {});
// Translation by f * size, f uniform in height_factor / width_factor (fractions in [-1, 1]).
LayerPtr RandomTranslation(FactorRange height_factor, FactorRange width_factor, const Sampling& sampling = {});

}  // namespace weft::train
