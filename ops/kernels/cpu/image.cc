// CPU kernels of ImageProjectiveTransform and its gradient (declared in ops/image.cc), TF's ImageProjectiveTransformV3
// sampling: the output point maps to an input coordinate, fill_mode folds that coordinate into the
// image, and the interpolation reads the pixels around it (pixels still outside read fill_value).
#include <algorithm>
#include <cmath>
#include <utility>

#include "ops/all_ops.h"
#include "ops/kernel.h"

namespace weft {
namespace {

enum class Fill { kReflect, kWrap, kConstant, kNearest };

Fill ParseFill(const std::string& f) {
  if (f == "REFLECT") return Fill::kReflect;
  if (f == "WRAP") return Fill::kWrap;
  if (f == "NEAREST") return Fill::kNearest;
  WEFT_REQUIRE(f == "CONSTANT", "ImageProjectiveTransform: unknown fill_mode '{}'", f);
  return Fill::kConstant;
}

// TF's map_coordinate: the coordinate c on an axis of length len, folded by the fill mode (wrap is
// the documented modulo; TF's kernel folds by len - 1, which misplaces shifts beyond one period).
float MapCoordinate(float c, int64_t len, Fill mode) {
  const float n = static_cast<float>(len);
  if (mode == Fill::kConstant) return c;
  if (mode == Fill::kNearest) return std::clamp(c, 0.0f, n - 1);
  if (len <= 1) return 0.0f;
  if (mode == Fill::kReflect) {
    const float sz2 = 2 * n;
    if (c < 0) {
      c = sz2 * static_cast<float>(static_cast<int64_t>(-c / sz2)) + c;
      c = c < -n ? c + sz2 : -c - 1;
    } else if (c > n - 1) {
      c -= sz2 * static_cast<float>(static_cast<int64_t>(c / sz2));
      if (c >= n) c = sz2 - c - 1;
    }
  } else {  // wrap: a b c d | a b c d | a b c d, as TF documents it
    c -= n * std::floor(c / n);
  }
  return std::clamp(c, 0.0f, n - 1);
}

// One input pixel an output point reads, with its weight (outside the image: fill_value's).
struct Tap {
  int64_t y, x;
  float w;
};

// The sampling both kernels share: the attrs, and the taps of output point (x, y) under transform a.
struct Sampler {
  explicit Sampler(const Node& n)
      : out_h(n.attr<int64_t>("output_height")), out_w(n.attr<int64_t>("output_width")),
        nearest(n.attr<std::string>("interpolation") == "NEAREST"), fill(ParseFill(n.attr<std::string>("fill_mode"))) {}

  // Writes 1 (nearest) or 4 (bilinear) taps; 0 where the projection's k is 0 (the output is fill_value).
  int Taps(const float* a, int64_t x, int64_t y, int64_t h, int64_t w, Tap* taps) const {
    const float fx = static_cast<float>(x), fy = static_cast<float>(y);
    const float k = a[6] * fx + a[7] * fy + 1.0f;
    if (k == 0.0f) return 0;
    const float ix = MapCoordinate((a[0] * fx + a[1] * fy + a[2]) / k, w, fill);
    const float iy = MapCoordinate((a[3] * fx + a[4] * fy + a[5]) / k, h, fill);
    if (nearest) {
      taps[0] = {static_cast<int64_t>(std::round(iy)), static_cast<int64_t>(std::round(ix)), 1.0f};
      return 1;
    }
    const float y0 = std::floor(iy), x0 = std::floor(ix), wy = iy - y0, wx = ix - x0;
    const auto yi = static_cast<int64_t>(y0), xi = static_cast<int64_t>(x0);
    taps[0] = {yi, xi, (1 - wy) * (1 - wx)};
    taps[1] = {yi, xi + 1, (1 - wy) * wx};
    taps[2] = {yi + 1, xi, wy * (1 - wx)};
    taps[3] = {yi + 1, xi + 1, wy * wx};
    return 4;
  }

  // Checks images (b, h, w, c) and transforms (1 or b, 8); the output's (height, width).
  std::pair<int64_t, int64_t> Check(const Tensor& images, const Tensor& transforms) const {
    WEFT_REQUIRE(images.rank() == 4, "ImageProjectiveTransform: images must be (batch, height, width, channels), got {}",
                 images.shape().ToString());
    const int64_t b = images.dim(0);
    WEFT_REQUIRE(transforms.rank() == 2 && transforms.dim(1) == 8 && (transforms.dim(0) == 1 || transforms.dim(0) == b),
                 "ImageProjectiveTransform: transforms must be (1 or batch {}, 8), got {}", b, transforms.shape().ToString());
    return {out_h == -1 ? images.dim(1) : out_h, out_w == -1 ? images.dim(2) : out_w};
  }

  int64_t out_h, out_w;
  bool nearest;
  Fill fill;
};

template <typename T>
class ImageProjectiveTransformOp : public OpKernel {
 public:
  explicit ImageProjectiveTransformOp(const Node& n)
      : OpKernel(n), sampler_(n), fill_value_(static_cast<T>(n.attr<double>("fill_value"))) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    const Tensor& transforms = ctx->input(1);
    const auto [oh, ow] = sampler_.Check(images, transforms);
    const int64_t b = images.dim(0), h = images.dim(1), w = images.dim(2), ch = images.dim(3);
    T* out = ctx->allocate_output(0, TensorShape({b, oh, ow, ch}))->template data<T>();
    const T* in = images.data<T>();
    Tap taps[4];
    for (int64_t n = 0; n < b; ++n) {
      const float* a = transforms.data<float>() + (transforms.dim(0) == 1 ? 0 : n * 8);
      const T* img = in + n * h * w * ch;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          T* o = out + ((n * oh + y) * ow + x) * ch;
          const int count = sampler_.Taps(a, x, y, h, w, taps);
          if (count == 0) {
            std::fill(o, o + ch, fill_value_);
            continue;
          }
          for (int64_t c = 0; c < ch; ++c) {
            T sum = 0;
            for (int t = 0; t < count; ++t) {
              const Tap& p = taps[t];
              const bool inside = p.y >= 0 && p.y < h && p.x >= 0 && p.x < w;
              sum += static_cast<T>(p.w) * (inside ? img[(p.y * w + p.x) * ch + c] : fill_value_);
            }
            o[c] = sum;
          }
        }
      }
    }
  }

 private:
  Sampler sampler_;
  T fill_value_;
};

// The adjoint of the forward pass in images: each output gradient goes back to the pixels it read,
// times their weights (fill_value reads depend on no pixel).
template <typename T>
class ImageProjectiveTransformGradOp : public OpKernel {
 public:
  explicit ImageProjectiveTransformGradOp(const Node& n) : OpKernel(n), sampler_(n) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& transforms = ctx->input(1);
    const Tensor& images = ctx->input(2);
    const auto [oh, ow] = sampler_.Check(images, transforms);
    const int64_t b = images.dim(0), h = images.dim(1), w = images.dim(2), ch = images.dim(3);
    WEFT_REQUIRE(dy.shape() == TensorShape({b, oh, ow, ch}), "ImageProjectiveTransformGrad: dy must be {}, got {}",
                 TensorShape({b, oh, ow, ch}).ToString(), dy.shape().ToString());
    T* dx = ctx->allocate_output(0, images.shape())->template data<T>();
    std::fill(dx, dx + images.num_elements(), T(0));
    const T* g = dy.data<T>();
    Tap taps[4];
    for (int64_t n = 0; n < b; ++n) {
      const float* a = transforms.data<float>() + (transforms.dim(0) == 1 ? 0 : n * 8);
      T* img = dx + n * h * w * ch;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          const T* gy = g + ((n * oh + y) * ow + x) * ch;
          const int count = sampler_.Taps(a, x, y, h, w, taps);
          for (int t = 0; t < count; ++t) {
            const Tap& p = taps[t];
            if (p.y < 0 || p.y >= h || p.x < 0 || p.x >= w) continue;
            for (int64_t c = 0; c < ch; ++c) img[(p.y * w + p.x) * ch + c] += static_cast<T>(p.w) * gy[c];
          }
        }
      }
    }
  }

 private:
  Sampler sampler_;
};

}  // namespace

void RegisterImageKernels(KernelRegistry& r) {
  RegisterTyped<ImageProjectiveTransformOp, float, double>(r, "ImageProjectiveTransform");
  RegisterTyped<ImageProjectiveTransformGradOp, float, double>(r, "ImageProjectiveTransformGrad");
}

}  // namespace weft
