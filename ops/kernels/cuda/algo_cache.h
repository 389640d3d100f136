// cuDNN algorithm choice, cached per convolution shape (plain C++: host-tested without a GPU).
//
//   ConvKey key = ConvKey::Make(ConvPass::kForward, DType::kFloat32, input_nhwc, filter_hwio,
//                               {.stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1});
//   AlgoCache<int> cache;
//   if (auto algo = cache.Find(key)) use(*algo); else cache.Insert(key, ChooseWithCudnn(...));
//
// The key holds everything cuDNN's choice depends on: the pass (forward, backward data, backward
// filter), the dtype, the input and filter dims, strides, padding and dilations. Asking cuDNN
// (cudnnFind* runs every algorithm) costs milliseconds; a training step repeats the same shapes.
// Thread-safe.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "core/dtype.h"
#include "core/shape.h"

namespace weft {

enum class ConvPass { kForward, kBackwardData, kBackwardFilter };

struct ConvGeometry {
  int stride_h = 1, stride_w = 1;
  int pad_h = 0, pad_w = 0;
  int dilation_h = 1, dilation_w = 1;
};

struct ConvKey {
  ConvPass pass = ConvPass::kForward;
  DType dtype = DType::kInvalid;
  std::array<int64_t, 4> input{};   // N, H, W, C
  std::array<int64_t, 4> filter{};  // H, W, in C, out C
  ConvGeometry geometry;

  // Throws InvalidArgument unless input and filter are rank 4.
  static ConvKey Make(ConvPass pass, DType dtype, const TensorShape& input_nhwc, const TensorShape& filter_hwio,
                      ConvGeometry geometry);
  auto Tie() const {
    return std::tie(pass, dtype, input, filter, geometry.stride_h, geometry.stride_w, geometry.pad_h, geometry.pad_w,
                    geometry.dilation_h, geometry.dilation_w);
  }
  bool operator<(const ConvKey& o) const { return Tie() < o.Tie(); }
  bool operator==(const ConvKey& o) const { return Tie() == o.Tie(); }
  // "fwd float32 in[8,28,28,1] filter[3,3,1,32] stride 1x1 pad 1x1 dilation 1x1"
  std::string ToString() const;
};

template <typename Algo>
class AlgoCache {
 public:
  std::optional<Algo> Find(const ConvKey& key) const {
    std::lock_guard<std::mutex> l(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }
  void Insert(const ConvKey& key, Algo algo) {
    std::lock_guard<std::mutex> l(mu_);
    map_.insert_or_assign(key, algo);
  }
  size_t size() const {
    std::lock_guard<std::mutex> l(mu_);
    return map_.size();
  }

 private:
  mutable std::mutex mu_;
  std::map<ConvKey, Algo> map_;
};

}  // namespace weft
