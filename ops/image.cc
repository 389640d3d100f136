// Image ops: ImageProjectiveTransform (and its gradient ImageProjectiveTransformGrad), TF's ImageProjectiveTransformV3 (the sampling behind Keras'
// RandomRotation / RandomZoom / RandomTranslation / RandomCrop / RandomFlip and Resizing).
// Kernel: ops/kernels/cpu/image.cc (CPU only: the placer runs it on the CPU, as it does Erf).
#include "ops/all_ops.h"
#include "ops/framework.h"

namespace weft {
namespace {

void ProjectiveTransformShape(InferenceContext& c) {
  if (c.input(0).unknown_rank()) return c.set_output(0, TensorShape::UnknownOfRank(4));
  const TensorShape images = c.WithRank(c.input(0), 4, "ImageProjectiveTransform: images (batch, height, width, channels)");
  const TensorShape t = c.WithRank(c.input(1), 2, "ImageProjectiveTransform: transforms (batch or 1, 8)");
  WEFT_REQUIRE(t.unknown_rank() || t.dim(1) < 0 || t.dim(1) == 8,
               "ImageProjectiveTransform: transforms must have 8 columns (a0..a7), got shape {}", t.ToString());
  const int64_t h = c.attr<int64_t>("output_height"), w = c.attr<int64_t>("output_width");
  WEFT_REQUIRE(h == -1 || h > 0, "ImageProjectiveTransform: output_height must be positive (or -1: the input's), got {}", h);
  WEFT_REQUIRE(w == -1 || w > 0, "ImageProjectiveTransform: output_width must be positive (or -1: the input's), got {}", w);
  const std::string interp = c.attr<std::string>("interpolation"), fill = c.attr<std::string>("fill_mode");
  WEFT_REQUIRE(interp == "BILINEAR" || interp == "NEAREST",
               "ImageProjectiveTransform: interpolation must be BILINEAR or NEAREST, got '{}'", interp);
  WEFT_REQUIRE(fill == "REFLECT" || fill == "WRAP" || fill == "CONSTANT" || fill == "NEAREST",
               "ImageProjectiveTransform: fill_mode must be REFLECT, WRAP, CONSTANT or NEAREST, got '{}'", fill);
  c.set_output(0, TensorShape({images.dim(0), h == -1 ? images.dim(1) : h, w == -1 ? images.dim(2) : w, images.dim(3)}));
}

// dimages: the adjoint of the sampling (ImageProjectiveTransformGrad); the transforms get none
// (as TF: augmentation draws them, nothing trains them).
std::vector<Output> ProjectiveTransformGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  AttrMap attrs;
  for (const char* a : {"output_height", "output_width", "interpolation", "fill_mode"}) attrs[a] = op.attrs().at(a);
  return {s.Op("ImageProjectiveTransformGrad", {dy[0], op.input(1), op.input(0)}, attrs), Output()};
}

void ProjectiveTransformGradShape(InferenceContext& c) {
  c.WithRank(c.input(0), 4, "ImageProjectiveTransformGrad: dy (batch, height, width, channels)");
  c.set_output(0, c.input(2));
}

}  // namespace

void RegisterImageOps(OpRegistry& r) {
  r.Register("ImageProjectiveTransform").Input("images", "T").Input("transforms", "float32").Output("output", "T")
      .TypeAttr("T", {DType::kFloat32, DType::kFloat64}).Attr("output_height", -1).Attr("output_width", -1)
      .Attr("interpolation", "BILINEAR").Attr("fill_mode", "CONSTANT").Attr("fill_value", 0.0)
      .Shape(ProjectiveTransformShape).Grad(ProjectiveTransformGrad)
      .Doc("TF's ImageProjectiveTransformV3 on NHWC images: transforms row [a0 .. a7] (one per image, or one "
           "row for all) maps the output point (x, y) to the input point ((a0 x + a1 y + a2) / k, (a3 x + a4 y "
           "+ a5) / k), k = a6 x + a7 y + 1, sampled BILINEAR or NEAREST; points outside the input follow "
           "fill_mode (REFLECT: d c b a | a b c d | d c b a, WRAP, NEAREST: the edge, CONSTANT: fill_value). "
           "Output size output_height x output_width (-1: the input's). Gradient: images get the adjoint of "
           "the sampling (so augmentation may follow trainable layers); transforms get none.");
  r.Register("ImageProjectiveTransformGrad").Input("dy", "T").Input("transforms", "float32").Input("images", "T")
      .Output("output", "T").TypeAttr("T", {DType::kFloat32, DType::kFloat64}).Attr("output_height", -1)
      .Attr("output_width", -1).Attr("interpolation", "BILINEAR").Attr("fill_mode", "CONSTANT")
      .Shape(ProjectiveTransformGradShape).NoGradient()
      .Doc("ImageProjectiveTransform's gradient in images: zeros shaped like images with each dy entry added, "
           "times its weight, to the pixels its output point read.");
}

}  // namespace weft
