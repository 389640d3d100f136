#include "train/layers_augment.h"

#include <algorithm>
#include <cctype>
#include <numbers>
#include <variant>

#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/random.h"

namespace weft::train {
namespace {

Output F(const Scope& s, double v) { return ops::ScalarLike(s, DType::kFloat32, v); }

std::string Upper(std::string v) {
  for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return v;
}

void CheckSampling(const Sampling& p, const char* layer) {
  WEFT_REQUIRE(p.interpolation == "bilinear" || p.interpolation == "nearest",
               "{}: interpolation must be 'bilinear' or 'nearest' (weft has no '{}')", layer, p.interpolation);
  WEFT_REQUIRE(p.fill_mode == "reflect" || p.fill_mode == "wrap" || p.fill_mode == "constant" || p.fill_mode == "nearest",
               "{}: fill_mode must be 'reflect', 'wrap', 'constant' or 'nearest', got '{}'", layer, p.fill_mode);
}

void CheckRange(FactorRange f, double lo, double hi, const char* layer, const char* what) {
  WEFT_REQUIRE(f.first <= f.second, "{}: {} needs lower <= upper, got ({}, {})", layer, what, f.first, f.second);
  WEFT_REQUIRE(f.first >= lo && f.second <= hi, "{}: {} must lie in [{}, {}], got ({}, {})", layer, what, lo, hi,
               f.first, f.second);
}

// Uniform values in [lo, hi), one per image: (batch, 1).
Output PerImage(const Scope& s, Output x, int64_t seed, FactorRange r) {
  Output like = ops::Reshape(s, ops::Mean(s, x, {1, 2, 3}), std::vector<int64_t>{-1, 1});
  return ops::Add(s, ops::Mul(s, ops::RandomUniformLike(s, like, seed), F(s, r.second - r.first)), F(s, r.first));
}

// A second draw of a layer gets its own seed (0 stays "fresh").
int64_t Seed(int64_t seed, int k) { return seed == 0 ? 0 : seed + k; }

// ImageProjectiveTransform of x with rows [a0 .. a7]: each a (batch, 1) column or a number.
using Col = std::variant<Output, double>;
Output Transform(const Scope& s, Output x, Output like, const std::vector<Col>& cols, const std::string& interpolation,
                 const std::string& fill_mode, double fill_value, int64_t out_h = -1, int64_t out_w = -1) {
  std::vector<Output> parts;
  Output zeros = ops::ZerosLike(s, like);
  for (const Col& c : cols) {
    parts.push_back(std::holds_alternative<Output>(c) ? std::get<Output>(c) : ops::Add(s, zeros, F(s, std::get<double>(c))));
  }
  return s.Op("ImageProjectiveTransform", {x, ops::Concat(s, parts, 1)},
              {{"interpolation", Upper(interpolation)}, {"fill_mode", Upper(fill_mode)}, {"fill_value", fill_value},
               {"output_height", out_h}, {"output_width", out_w}});
}

// NHWC with known height and width (the transforms are built from them).
void RequireImages(const TensorShape& in, const std::string& layer) {
  WEFT_REQUIRE(in.rank() == 4 && in.dim(1) > 0 && in.dim(2) > 0,
               "{}: expects (batch, height, width, channels) images with known height and width, got {}", layer,
               in.ToString());
}

}  // namespace

// TF2's resize of NHWC x to (h, w): half-pixel centers, edges clamped; with crop, Keras 3's
// central window of the target's aspect ratio first.
Output ResizeImages(const Scope& s, Output x, int64_t h, int64_t w, const std::string& interpolation, bool crop) {
  RequireImages(x.shape(), "resize");
  int64_t in_h = x.shape().dim(1), in_w = x.shape().dim(2);
  if (crop) {
    const int64_t ch = std::max<int64_t>(std::min(in_h, static_cast<int64_t>(static_cast<float>(in_w * h) / w)), 1);
    const int64_t cw = std::max<int64_t>(std::min(in_w, static_cast<int64_t>(static_cast<float>(in_h * w) / h)), 1);
    if (ch != in_h || cw != in_w) x = ops::Slice(s, x, {0, (in_h - ch) / 2, (in_w - cw) / 2, 0}, {-1, ch, cw, -1});
    in_h = ch, in_w = cw;
  }
  if (in_h == h && in_w == w) return x;
  const double sy = static_cast<double>(in_h) / h, sx = static_cast<double>(in_w) / w;
  Output like = ops::Reshape(s, ops::Mean(s, x, {1, 2, 3}), std::vector<int64_t>{-1, 1});
  return Transform(s, x, like, {sx, 0.0, 0.5 * sx - 0.5, 0.0, sy, 0.5 * sy - 0.5, 0.0, 0.0}, interpolation, "nearest",
                   0.0, h, w);
}

namespace {

class ResizingLayer : public Layer {
 public:
  ResizingLayer(int64_t h, int64_t w, std::string interpolation, bool crop)
      : Layer("Resizing"), h_(h), w_(w), interpolation_(std::move(interpolation)), crop_(crop) {
    WEFT_REQUIRE(h > 0 && w > 0, "Resizing: height and width must be positive, got {} and {}", h, w);
    CheckSampling({.interpolation = interpolation_}, "Resizing");
  }
  void Build(const std::vector<TensorShape>& in) override { RequireImages(in[0], Describe()); }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    return ResizeImages(ctx.scope, in[0], h_, w_, interpolation_, crop_);
  }

 private:
  int64_t h_, w_;
  std::string interpolation_;
  bool crop_;
};

class RandomFlipLayer : public Layer {
 public:
  RandomFlipLayer(std::string mode, int64_t seed) : Layer("RandomFlip"), mode_(std::move(mode)), seed_(seed) {
    WEFT_REQUIRE(mode_ == "horizontal" || mode_ == "vertical" || mode_ == "horizontal_and_vertical",
                 "RandomFlip: mode must be 'horizontal', 'vertical' or 'horizontal_and_vertical', got '{}'", mode_);
  }
  void Build(const std::vector<TensorShape>& in) override { RequireImages(in[0], Describe()); }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    if (!ctx.training) return in[0];
    const Scope& s = ctx.scope;
    const double h = static_cast<double>(in[0].shape().dim(1)), w = static_cast<double>(in[0].shape().dim(2));
    // flip = 1 where uniform <= 0.5 (Keras); x -> (w - 1) - x mirrors the row.
    Output u = PerImage(s, in[0], seed_, {0.0, 1.0});
    Output flip = ops::Cast(s, ops::LessEqual(s, u, F(s, 0.5)), DType::kFloat32);
    Output sign = ops::Sub(s, F(s, 1.0), ops::Mul(s, flip, F(s, 2.0)));
    const bool horizontal = mode_ != "vertical", vertical = mode_ != "horizontal";
    return Transform(s, in[0], u,
                     {horizontal ? Col(sign) : Col(1.0), 0.0, horizontal ? Col(ops::Mul(s, flip, F(s, w - 1))) : Col(0.0),
                      0.0, vertical ? Col(sign) : Col(1.0), vertical ? Col(ops::Mul(s, flip, F(s, h - 1))) : Col(0.0), 0.0,
                      0.0},
                     "nearest", "constant", 0.0);
  }

 private:
  std::string mode_;
  int64_t seed_;
};

// Contrast and brightness: a per-image factor, then a clip to value_range.
class RandomColorLayer : public Layer {
 public:
  RandomColorLayer(bool contrast, FactorRange factor, FactorRange value_range, int64_t seed)
      : Layer(contrast ? "RandomContrast" : "RandomBrightness"), contrast_(contrast), factor_(factor),
        range_(value_range), seed_(seed) {
    if (contrast) {
      WEFT_REQUIRE(factor.first >= 0 && factor.second >= 0 && factor.first <= 1,
                   "RandomContrast: factor must be non-negative and its lower value at most 1, got ({}, {})",
                   factor.first, factor.second);
    } else {
      CheckRange(factor, -1.0, 1.0, "RandomBrightness", "factor");
    }
    WEFT_REQUIRE(value_range.first < value_range.second, "{}: value_range must be (low, high) with low < high, got ({}, {})",
                 type(), value_range.first, value_range.second);
  }
  void Build(const std::vector<TensorShape>& in) override { RequireImages(in[0], Describe()); }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    if (!ctx.training) return in[0];
    const Scope& s = ctx.scope;
    const FactorRange r = contrast_ ? FactorRange{1.0 - factor_.first, 1.0 + factor_.second} : factor_;
    Output f = ops::Reshape(s, PerImage(s, in[0], seed_, r), std::vector<int64_t>{-1, 1, 1, 1});
    Output y;
    if (contrast_) {
      Output mean = ops::Mean(s, in[0], {1, 2}, /*keep_dims=*/true);
      y = ops::Add(s, ops::Mul(s, ops::Sub(s, in[0], mean), f), mean);
    } else {
      y = ops::Add(s, in[0], ops::Mul(s, f, F(s, range_.second - range_.first)));
    }
    return ops::Maximum(s, ops::Minimum(s, y, F(s, range_.second)), F(s, range_.first));
  }

 private:
  bool contrast_;
  FactorRange factor_, range_;
  int64_t seed_;
};

class RandomCropLayer : public Layer {
 public:
  RandomCropLayer(int64_t h, int64_t w, int64_t seed) : Layer("RandomCrop"), h_(h), w_(w), seed_(seed) {
    WEFT_REQUIRE(h > 0 && w > 0, "RandomCrop: height and width must be positive, got {} and {}", h, w);
  }
  void Build(const std::vector<TensorShape>& in) override { RequireImages(in[0], Describe()); }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    const int64_t h = in[0].shape().dim(1), w = in[0].shape().dim(2);
    if (!ctx.training || h < h_ || w < w_) return ResizeImages(s, in[0], h_, w_, "bilinear", /*crop=*/true);
    auto offset = [&](int64_t room, int k) {
      return s.Op("Floor", {PerImage(s, in[0], Seed(seed_, k), {0.0, static_cast<double>(room + 1)})});
    };
    Output top = offset(h - h_, 0), left = offset(w - w_, 1);
    return Transform(s, in[0], top, {1.0, 0.0, left, 0.0, 1.0, top, 0.0, 0.0}, "nearest", "constant", 0.0, h_, w_);
  }

 private:
  int64_t h_, w_, seed_;
};

enum class Geometry { kRotation, kZoom, kTranslation };

class RandomGeometryLayer : public Layer {
 public:
  RandomGeometryLayer(Geometry g, FactorRange a, std::optional<FactorRange> b, Sampling p)
      : Layer(g == Geometry::kRotation ? "RandomRotation" : g == Geometry::kZoom ? "RandomZoom" : "RandomTranslation"),
        g_(g), a_(a), b_(b), p_(std::move(p)) {
    CheckSampling(p_, type().c_str());
    const double lo = g == Geometry::kRotation ? -1e300 : -1.0, hi = g == Geometry::kTranslation ? 1.0 : 1e300;
    CheckRange(a, lo, hi, type().c_str(), g == Geometry::kRotation ? "factor" : "height_factor");
    if (b) CheckRange(*b, lo, hi, type().c_str(), "width_factor");
  }
  void Build(const std::vector<TensorShape>& in) override { RequireImages(in[0], Describe()); }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    if (!ctx.training) return in[0];
    const Scope& s = ctx.scope;
    const double h = static_cast<double>(in[0].shape().dim(1)), w = static_cast<double>(in[0].shape().dim(2));
    auto run = [&](Output like, const std::vector<Col>& cols) {
      return Transform(s, in[0], like, cols, p_.interpolation, p_.fill_mode, p_.fill_value);
    };
    if (g_ == Geometry::kRotation) {  // Keras 3's rotation about the center
      Output angle = PerImage(s, in[0], p_.seed, {a_.first * 2 * std::numbers::pi, a_.second * 2 * std::numbers::pi});
      Output c = s.Op("Cos", {angle}), sn = s.Op("Sin", {angle});
      Output x_off = ops::Mul(s, ops::Sub(s, F(s, w - 1), ops::Sub(s, ops::Mul(s, c, F(s, w - 1)), ops::Mul(s, sn, F(s, h - 1)))),
                              F(s, 0.5));
      Output y_off = ops::Mul(s, ops::Sub(s, F(s, h - 1), ops::Add(s, ops::Mul(s, sn, F(s, w - 1)), ops::Mul(s, c, F(s, h - 1)))),
                              F(s, 0.5));
      return run(angle, {c, ops::Neg(s, sn), x_off, sn, c, y_off, 0.0, 0.0});
    }
    if (g_ == Geometry::kZoom) {
      Output zy = PerImage(s, in[0], p_.seed, {1 + a_.first, 1 + a_.second});
      Output zx = b_ ? PerImage(s, in[0], Seed(p_.seed, 1), {1 + b_->first, 1 + b_->second}) : zy;
      auto offset = [&](Output z, double n) { return ops::Mul(s, ops::Sub(s, F(s, 1.0), z), F(s, (n - 1) / 2)); };
      return run(zy, {zx, 0.0, offset(zx, w), 0.0, zy, offset(zy, h), 0.0, 0.0});
    }
    Output ty = ops::Mul(s, PerImage(s, in[0], p_.seed, a_), F(s, -h));
    Output tx = ops::Mul(s, PerImage(s, in[0], Seed(p_.seed, 1), *b_), F(s, -w));
    return run(ty, {1.0, 0.0, tx, 0.0, 1.0, ty, 0.0, 0.0});
  }

 private:
  Geometry g_;
  FactorRange a_;
  std::optional<FactorRange> b_;
  Sampling p_;
};

}  // namespace

LayerPtr Resizing(int64_t height, int64_t width, const std::string& interpolation, bool crop_to_aspect_ratio) {
  return std::make_shared<ResizingLayer>(height, width, interpolation, crop_to_aspect_ratio);
}
LayerPtr RandomFlip(const std::string& mode, int64_t seed) { return std::make_shared<RandomFlipLayer>(mode, seed); }
LayerPtr RandomContrast(FactorRange factor, FactorRange value_range, int64_t seed) {
  return std::make_shared<RandomColorLayer>(true, factor, value_range, seed);
}
LayerPtr RandomBrightness(FactorRange factor, FactorRange value_range, int64_t seed) {
  return std::make_shared<RandomColorLayer>(false, factor, value_range, seed);
}
LayerPtr RandomCrop(int64_t height, int64_t width, int64_t seed) {
  return std::make_shared<RandomCropLayer>(height, width, seed);
}
LayerPtr RandomRotation(FactorRange factor, const Sampling& sampling) {
  return std::make_shared<RandomGeometryLayer>(Geometry::kRotation, factor, std::nullopt, sampling);
}
LayerPtr RandomZoom(FactorRange height_factor, std::optional<FactorRange> width_factor, const Sampling& sampling) {
  return std::make_shared<RandomGeometryLayer>(Geometry::kZoom, height_factor, width_factor, sampling);
}
LayerPtr RandomTranslation(FactorRange height_factor, FactorRange width_factor, const Sampling& sampling) {
  return std::make_shared<RandomGeometryLayer>(Geometry::kTranslation, height_factor, width_factor, sampling);
}

}  // namespace weft::train
