// cuDNN algorithm choice, cached per convolution shape (plain C++: host-tested without a GPU).
//
//   ConvKey key = ConvKey::Make(ConvPass::kForward, DType::kFloat32, input_nhwc, filter_hwio,
//                               {.stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1});
//   AlgoCache<int> cache;
//   if (auto algo = cache.Find(key)) use(*algo); else cache.Insert(key, ChooseWithCudnn(...));
//
// The key holds everything cuDNN's choice depends on: the pass (forward, backward data, backward
// filter), the dtype, the input and filter dims, strides, padding and dilations, and the math the
// session allows (TF32, determinism: SessionOptions::gpu). Asking cuDNN
// (cudnnFind* runs every algorithm) costs milliseconds; a training step repeats the same shapes.
// Thread-safe.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

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
  bool tf32 = false;           // tensor-core (TF32) algorithms allowed
  bool deterministic = false;  // only algorithms that give the same bits every run

  // Throws InvalidArgument unless input and filter are rank 4.
  static ConvKey Make(ConvPass pass, DType dtype, const TensorShape& input_nhwc, const TensorShape& filter_hwio,
                      ConvGeometry geometry);
  ConvKey WithMath(bool allow_tf32, bool only_deterministic) const {
    ConvKey k = *this;
    k.tf32 = allow_tf32;
    k.deterministic = only_deterministic;
    return k;
  }
  auto Tie() const {
    return std::tie(pass, dtype, input, filter, geometry.stride_h, geometry.stride_w, geometry.pad_h, geometry.pad_w,
                    geometry.dilation_h, geometry.dilation_w, tf32, deterministic);
  }
  bool operator<(const ConvKey& o) const { return Tie() < o.Tie(); }
  bool operator==(const ConvKey& o) const { return Tie() == o.Tie(); }
  // "fwd float32 in[8,28,28,1] filter[3,3,1,32] stride 1x1 pad 1x1 dilation 1x1" (+ " tf32",
  // " deterministic" when set)
  std::string ToString() const;
};

// One algorithm of cuDNN's ranking (cudnnGet*Algorithm_v7's perf results), as the choice sees it.
struct AlgoCandidate {
  int algo = 0;
  bool ok = false;           // status CUDNN_STATUS_SUCCESS
  size_t workspace = 0;      // bytes
  bool tensor_math = false;  // uses tensor cores (TF32 for float)
  bool deterministic = false;
};
// The first candidate, in cuDNN's order, that is ok within `max_workspace`, uses tensor-core math
// only when `allow_tensor_math`, and is deterministic when `require_deterministic`; none: nullopt.
std::optional<int> PickConvAlgo(const std::vector<AlgoCandidate>& ranked, size_t max_workspace, bool allow_tensor_math,
                                bool require_deterministic);

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
