// The layers that resize the spatial dims of sequences (batch, steps, channels) and images
// (batch, height, width, channels): ZeroPadding1D/2D, Cropping1D/2D and UpSampling1D/2D (nearest).
#include <fmt/format.h>

#include "ops/array.h"
#include "ops/framework.h"
#include "train/layer.h"

namespace weft::train {
namespace {

// `rank` spatial dims between the batch and the channels, each known when `known`.
void RequireSpatial(const TensorShape& x, int rank, bool known, const std::string& layer) {
  WEFT_REQUIRE(x.rank() == rank + 2, "{}: expects inputs {}, got {}", layer,
               rank == 1 ? "(batch, steps, channels)" : "(batch, height, width, channels)", x.ToString());
  for (int d = 1; known && d <= rank + 1; ++d) {
    WEFT_REQUIRE(x.dim(d) >= 0, "{}: needs known non-batch dims, got {}", layer, x.ToString());
  }
}

// Adds zeros around, or removes, amounts = {before, after} per spatial dim.
class PadCropLayer : public Layer {
 public:
  PadCropLayer(std::string type, bool crop, int rank, std::vector<int64_t> amounts)
      : Layer(std::move(type)), crop_(crop), rank_(rank), amounts_(std::move(amounts)) {
    bool ok = static_cast<int>(amounts_.size()) == 2 * rank;
    for (int64_t a : amounts_) ok = ok && a >= 0;
    WEFT_REQUIRE(ok, "{}: {} must be {} non-negative values (before and after each spatial dim), got ({})",
                 this->type(), crop ? "cropping" : "padding", 2 * rank, fmt::join(amounts_, ", "));
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const TensorShape& x = in[0].shape();
    RequireSpatial(x, rank_, crop_, Describe());
    if (!crop_) {
      std::vector<int64_t> pads = {0, 0};
      pads.insert(pads.end(), amounts_.begin(), amounts_.end());
      pads.insert(pads.end(), {0, 0});
      return ops::Pad(ctx.scope, in[0], pads);
    }
    std::vector<int64_t> begin = {0}, end = {0};
    for (int d = 0; d < rank_; ++d) {
      const int64_t size = x.dim(d + 1);
      WEFT_REQUIRE(amounts_[2 * d] + amounts_[2 * d + 1] < size, "{}: cropping ({}) leaves nothing of {}",
                   Describe(), fmt::join(amounts_, ", "), x.ToString());
      begin.push_back(amounts_[2 * d]);
      end.push_back(size - amounts_[2 * d + 1]);
    }
    begin.push_back(0);
    end.push_back(0);
    // The batch and channel dims are kept whole (their begin and end masked).
    const int64_t whole = 1 | (int64_t{1} << (rank_ + 1));
    return ops::StridedSlice(ctx.scope, in[0], begin, end, std::vector<int64_t>(rank_ + 2, 1), whole, whole);
  }

 private:
  bool crop_;
  int rank_;
  std::vector<int64_t> amounts_;
};

// Repeats each step (pixel) size times along each spatial dim: nearest-neighbour upsampling, as
// (batch, d1, 1, d2, 1, c) tiled and reshaped.
class UpSamplingLayer : public Layer {
 public:
  UpSamplingLayer(std::string type, std::vector<int64_t> size) : Layer(std::move(type)), size_(std::move(size)) {
    bool ok = !size_.empty();
    for (int64_t s : size_) ok = ok && s > 0;
    WEFT_REQUIRE(ok, "{}: size must be positive, got ({})", this->type(), fmt::join(size_, ", "));
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const TensorShape& x = in[0].shape();
    const int rank = static_cast<int>(size_.size());
    RequireSpatial(x, rank, true, Describe());
    std::vector<int64_t> spread = {-1}, tile = {1}, out = {-1};
    for (int d = 0; d < rank; ++d) {
      spread.insert(spread.end(), {x.dim(d + 1), 1});
      tile.insert(tile.end(), {1, size_[d]});
      out.push_back(x.dim(d + 1) * size_[d]);
    }
    spread.push_back(x.dim(rank + 1));
    tile.push_back(1);
    out.push_back(x.dim(rank + 1));
    const Scope& s = ctx.scope;
    return ops::Reshape(s, ops::Tile(s, ops::Reshape(s, in[0], spread), tile), out);
  }

 private:
  std::vector<int64_t> size_;
};

}  // namespace

LayerPtr ZeroPadding1D(std::vector<int64_t> padding) {
  return std::make_shared<PadCropLayer>("ZeroPadding1D", false, 1, std::move(padding));
}
LayerPtr ZeroPadding2D(std::vector<int64_t> padding) {
  return std::make_shared<PadCropLayer>("ZeroPadding2D", false, 2, std::move(padding));
}
LayerPtr Cropping1D(std::vector<int64_t> cropping) {
  return std::make_shared<PadCropLayer>("Cropping1D", true, 1, std::move(cropping));
}
LayerPtr Cropping2D(std::vector<int64_t> cropping) {
  return std::make_shared<PadCropLayer>("Cropping2D", true, 2, std::move(cropping));
}
LayerPtr UpSampling1D(int64_t size) { return std::make_shared<UpSamplingLayer>("UpSampling1D", std::vector{size}); }
LayerPtr UpSampling2D(std::vector<int64_t> size) {
  WEFT_REQUIRE(size.size() == 2, "UpSampling2D: size must be two values, got ({})", fmt::join(size, ", "));
  return std::make_shared<UpSamplingLayer>("UpSampling2D", std::move(size));
}

}  // namespace weft::train
