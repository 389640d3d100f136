// weft.keras.layers' image preprocessing and augmentation layers (Resizing, RandomFlip,
// RandomContrast, RandomBrightness, RandomCrop, RandomRotation, RandomZoom, RandomTranslation)
// with Keras 3's argument names and defaults; the layers are train/layers_augment.h's.
#include "train/layers_augment.h"

#include "keras_common.h"

namespace weft::python {
namespace {

using namespace weft::train;

// Keras' factor: a number f (symmetric: (-f, f); else (f, f)) or a (lower, upper) pair.
FactorRange Factor(const py::handle& h, const char* what, bool symmetric = true) {
  if (py::isinstance<py::float_>(h) || py::isinstance<py::int_>(h)) {
    const double f = h.cast<double>();
    return symmetric ? FactorRange{-f, f} : FactorRange{f, f};
  }
  std::vector<double> v;
  try {
    for (const py::handle& x : h) v.push_back(x.cast<double>());
  } catch (const std::exception&) {
    v.clear();
  }
  WEFT_REQUIRE(v.size() == 2, "{} must be a number or a (lower, upper) pair, got {}", what, std::string(py::repr(h)));
  return {v[0], v[1]};
}

int64_t Seed(const py::object& seed) { return seed.is_none() ? 0 : seed.cast<int64_t>(); }

void ChannelsLast(const py::object& data_format, const char* layer) {
  WEFT_REQUIRE(data_format.is_none() || data_format.cast<std::string>() == "channels_last",
               "{}: data_format must be 'channels_last' (weft's layout), got '{}'", layer,
               std::string(py::str(data_format)));
}

Sampling MakeSampling(const std::string& fill_mode, const std::string& interpolation, const py::object& seed,
                      double fill_value) {
  return {.interpolation = interpolation, .fill_mode = fill_mode, .fill_value = fill_value, .seed = Seed(seed)};
}

const char* kRandom = "\nDrawn per image in the training pass (fit); the identity at inference (evaluate, predict).";

std::string Doc(const std::string& text) { return text + kCommonArgs; }

}  // namespace

void DefAugmentLayers(py::module_& layers) {
  using py::arg;
  const py::object none = py::none();
  layers.def("Resizing", [](int64_t height, int64_t width, const std::string& interpolation, bool crop_to_aspect_ratio,
                            bool pad_to_aspect_ratio, const std::string& fill_mode, double fill_value,
                            const py::object& data_format, const py::object& name, const py::object& input_shape) {
    WEFT_REQUIRE(!pad_to_aspect_ratio, "Resizing: pad_to_aspect_ratio=True is not supported by weft (use "
                 "crop_to_aspect_ratio=True, or pad with ZeroPadding2D first)");
    (void)fill_mode, (void)fill_value;  // they only serve pad_to_aspect_ratio
    ChannelsLast(data_format, "Resizing");
    return Finish(Resizing(height, width, interpolation, crop_to_aspect_ratio), name, input_shape);
  }, arg("height"), arg("width"), arg("interpolation") = "bilinear", arg("crop_to_aspect_ratio") = false,
     arg("pad_to_aspect_ratio") = false, arg("fill_mode") = "constant", arg("fill_value") = 0.0,
     arg("data_format") = none, arg("name") = none, arg("input_shape") = none,
     Doc("Resizes NHWC images to (height, width) as tf.image.resize (half-pixel centers; 'bilinear' or\n"
         "'nearest'), in training and at inference; crop_to_aspect_ratio first crops the largest central\n"
         "window of the target's aspect ratio.").c_str());
  layers.def("RandomFlip", [](const std::string& mode, const py::object& seed, const py::object& data_format,
                              const py::object& name, const py::object& input_shape) {
    ChannelsLast(data_format, "RandomFlip");
    return Finish(RandomFlip(mode, Seed(seed)), name, input_shape);
  }, arg("mode") = "horizontal_and_vertical", arg("seed") = none, arg("data_format") = none, arg("name") = none,
     arg("input_shape") = none,
     Doc(std::string("Mirrors each image with probability 1/2: mode 'horizontal' (left-right), 'vertical' or\n"
                  "'horizontal_and_vertical' (one draw flips both, as Keras 3).") + kRandom).c_str());
  layers.def("RandomContrast", [](const py::object& factor, const py::object& value_range, const py::object& seed,
                                  const py::object& name, const py::object& input_shape) {
    return Finish(RandomContrast(Factor(factor, "RandomContrast: factor", false), Factor(value_range, "RandomContrast: value_range"),
                                 Seed(seed)), name, input_shape);
  }, arg("factor"), arg("value_range") = py::make_tuple(0, 255), arg("seed") = none, arg("name") = none,
     arg("input_shape") = none,
     Doc(std::string("(x - mean) * c + mean per image and channel, c uniform in [1 - lower, 1 + upper] (factor f:\n"
                  "lower = upper = f), clipped to value_range.") + kRandom).c_str());
  layers.def("RandomBrightness", [](const py::object& factor, const py::object& value_range, const py::object& seed,
                                    const py::object& name, const py::object& input_shape) {
    return Finish(RandomBrightness(Factor(factor, "RandomBrightness: factor"), Factor(value_range, "RandomBrightness: value_range"),
                                   Seed(seed)), name, input_shape);
  }, arg("factor"), arg("value_range") = py::make_tuple(0, 255), arg("seed") = none, arg("name") = none,
     arg("input_shape") = none,
     Doc(std::string("x + d * (high - low), d uniform in factor (f: [-f, f], within [-1, 1]), clipped to\n"
                  "value_range (low, high).") + kRandom).c_str());
  layers.def("RandomCrop", [](int64_t height, int64_t width, const py::object& seed, const py::object& data_format,
                              const py::object& name, const py::object& input_shape) {
    ChannelsLast(data_format, "RandomCrop");
    return Finish(RandomCrop(height, width, Seed(seed)), name, input_shape);
  }, arg("height"), arg("width"), arg("seed") = none, arg("data_format") = none, arg("name") = none,
     arg("input_shape") = none,
     Doc("Training: a (height, width) window at a random offset per image. At inference (and for images\n"
         "smaller than the window): Resizing(height, width, crop_to_aspect_ratio=True).").c_str());
  layers.def("RandomRotation", [](const py::object& factor, const std::string& fill_mode, const std::string& interpolation,
                                  const py::object& seed, double fill_value, const py::object& value_range,
                                  const py::object& data_format, const py::object& name, const py::object& input_shape) {
    (void)value_range;  // Keras 3 accepts it; rotation does not change values
    ChannelsLast(data_format, "RandomRotation");
    return Finish(RandomRotation(Factor(factor, "RandomRotation: factor"), MakeSampling(fill_mode, interpolation, seed, fill_value)),
                  name, input_shape);
  }, arg("factor"), arg("fill_mode") = "reflect", arg("interpolation") = "bilinear", arg("seed") = none,
     arg("fill_value") = 0.0, arg("value_range") = py::make_tuple(0, 255), arg("data_format") = none, arg("name") = none,
     arg("input_shape") = none,
     Doc(std::string("Rotates each image about its center by factor * 2 pi radians (f: [-f, f] turns), counter-\n"
                  "clockwise for positive angles; fill_mode 'reflect' | 'wrap' | 'constant' | 'nearest'.") + kRandom).c_str());
  layers.def("RandomZoom", [](const py::object& height_factor, const py::object& width_factor, const std::string& fill_mode,
                              const std::string& interpolation, const py::object& seed, double fill_value,
                              const py::object& data_format, const py::object& name, const py::object& input_shape) {
    ChannelsLast(data_format, "RandomZoom");
    std::optional<FactorRange> w;
    if (!width_factor.is_none()) w = Factor(width_factor, "RandomZoom: width_factor");
    return Finish(RandomZoom(Factor(height_factor, "RandomZoom: height_factor"), w,
                             MakeSampling(fill_mode, interpolation, seed, fill_value)), name, input_shape);
  }, arg("height_factor"), arg("width_factor") = none, arg("fill_mode") = "reflect", arg("interpolation") = "bilinear",
     arg("seed") = none, arg("fill_value") = 0.0, arg("data_format") = none, arg("name") = none, arg("input_shape") = none,
     Doc(std::string("Zooms each image about its center by 1 + f, f uniform in height_factor (f: [-f, f]; > 0\n"
                  "zooms out) and width_factor (None: the height's zoom, keeping the aspect ratio).") + kRandom).c_str());
  layers.def("RandomTranslation", [](const py::object& height_factor, const py::object& width_factor,
                                     const std::string& fill_mode, const std::string& interpolation, const py::object& seed,
                                     double fill_value, const py::object& data_format, const py::object& name,
                                     const py::object& input_shape) {
    ChannelsLast(data_format, "RandomTranslation");
    return Finish(RandomTranslation(Factor(height_factor, "RandomTranslation: height_factor"),
                                    Factor(width_factor, "RandomTranslation: width_factor"),
                                    MakeSampling(fill_mode, interpolation, seed, fill_value)), name, input_shape);
  }, arg("height_factor"), arg("width_factor"), arg("fill_mode") = "reflect", arg("interpolation") = "bilinear",
     arg("seed") = none, arg("fill_value") = 0.0, arg("data_format") = none, arg("name") = none, arg("input_shape") = none,
     Doc(std::string("Shifts each image by f * height down and g * width right, f and g uniform in height_factor\n"
                  "and width_factor (fractions; f: [-f, f]).") + kRandom).c_str());
}

}  // namespace weft::python
