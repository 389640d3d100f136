// CPU kernel of ImageProjectiveTransform (declared in ops/image.cc), TF's ImageProjectiveTransformV3
// sampling: the output point maps to an input coordinate, fill_mode folds that coordinate into the
// image, and the interpolation reads the pixels around it (pixels still outside read fill_value).
#include <algorithm>
#include <cmath>

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

template <typename T>
class ImageProjectiveTransformOp : public OpKernel {
 public:
  explicit ImageProjectiveTransformOp(const Node& n)
      : OpKernel(n), out_h_(n.attr<int64_t>("output_height")), out_w_(n.attr<int64_t>("output_width")),
        nearest_(n.attr<std::string>("interpolation") == "NEAREST"), fill_(ParseFill(n.attr<std::string>("fill_mode"))),
        fill_value_(static_cast<T>(n.attr<double>("fill_value"))) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    const Tensor& transforms = ctx->input(1);
    WEFT_REQUIRE(images.rank() == 4, "ImageProjectiveTransform: images must be (batch, height, width, channels), got {}",
                 images.shape().ToString());
    const int64_t b = images.dim(0), h = images.dim(1), w = images.dim(2), ch = images.dim(3);
    WEFT_REQUIRE(transforms.rank() == 2 && transforms.dim(1) == 8 && (transforms.dim(0) == 1 || transforms.dim(0) == b),
                 "ImageProjectiveTransform: transforms must be (1 or batch {}, 8), got {}", b, transforms.shape().ToString());
    const int64_t oh = out_h_ == -1 ? h : out_h_, ow = out_w_ == -1 ? w : out_w_;
    T* out = ctx->allocate_output(0, TensorShape({b, oh, ow, ch}))->template data<T>();
    const T* in = images.data<T>();
    const float* tr = transforms.data<float>();
    for (int64_t n = 0; n < b; ++n) {
      const float* a = tr + (transforms.dim(0) == 1 ? 0 : n * 8);
      const T* img = in + n * h * w * ch;
      auto read = [&](int64_t y, int64_t x, int64_t c) {
        return (y < 0 || y >= h || x < 0 || x >= w) ? fill_value_ : img[(y * w + x) * ch + c];
      };
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          T* o = out + ((n * oh + y) * ow + x) * ch;
          const float fx = static_cast<float>(x), fy = static_cast<float>(y);
          const float k = a[6] * fx + a[7] * fy + 1.0f;
          if (k == 0.0f) {
            std::fill(o, o + ch, fill_value_);
            continue;
          }
          const float ix = MapCoordinate((a[0] * fx + a[1] * fy + a[2]) / k, w, fill_);
          const float iy = MapCoordinate((a[3] * fx + a[4] * fy + a[5]) / k, h, fill_);
          if (nearest_) {
            const auto ry = static_cast<int64_t>(std::round(iy)), rx = static_cast<int64_t>(std::round(ix));
            for (int64_t c = 0; c < ch; ++c) o[c] = read(ry, rx, c);
            continue;
          }
          const float y0 = std::floor(iy), x0 = std::floor(ix);
          const auto yi = static_cast<int64_t>(y0), xi = static_cast<int64_t>(x0);
          const T wy = static_cast<T>(iy - y0), wx = static_cast<T>(ix - x0);
          for (int64_t c = 0; c < ch; ++c) {
            const T top = (1 - wx) * read(yi, xi, c) + wx * read(yi, xi + 1, c);
            const T bottom = (1 - wx) * read(yi + 1, xi, c) + wx * read(yi + 1, xi + 1, c);
            o[c] = (1 - wy) * top + wy * bottom;
          }
        }
      }
    }
  }

 private:
  int64_t out_h_, out_w_;
  bool nearest_;
  Fill fill_;
  T fill_value_;
};

}  // namespace

void RegisterImageKernels(KernelRegistry& r) {
  RegisterTyped<ImageProjectiveTransformOp, float, double>(r, "ImageProjectiveTransform");
}

}  // namespace weft
