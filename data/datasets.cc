#include "data/datasets.h"

#include <cmath>
#include <vector>

#include "data/idx.h"

namespace weft::data {
namespace {

// SplitMix64 with Box-Muller normals: fully specified, so Synthetic is the same everywhere
// (std::normal_distribution is not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform01() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)
  uint64_t Uniform(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64); }
  // Two independent standard normals.
  void Normal2(float* a, float* b) {
    const double u1 = 1.0 - Uniform01(), u2 = Uniform01();  // u1 in (0, 1]
    const double r = std::sqrt(-2.0 * std::log(u1)), t = 2.0 * M_PI * u2;
    *a = static_cast<float>(r * std::cos(t));
    *b = static_cast<float>(r * std::sin(t));
  }

 private:
  uint64_t state_;
};

}  // namespace

ArrayData Mnist(const std::string& dir, bool train) {
  MnistSplit split = LoadMnist(dir, train);  // uint8 images [N,rows,cols], uint8 labels [N]
  const Tensor& im = split.images;
  WEFT_REQUIRE(im.rank() == 3, "Mnist('{}'): images are {}, expected uint8[N,rows,cols]", dir, im.DebugString());
  ArrayData d;
  d.x = Tensor(DType::kFloat32, TensorShape({im.dim(0), im.dim(1), im.dim(2), 1}));
  const uint8_t* src = im.data<uint8_t>();
  float* dst = d.x.data<float>();
  for (int64_t i = 0, n = im.num_elements(); i < n; ++i) dst[i] = static_cast<float>(src[i]) * (1.0f / 255.0f);
  d.y = Tensor(DType::kInt32, TensorShape({split.labels.dim(0)}));
  const uint8_t* lab = split.labels.data<uint8_t>();
  int32_t* y = d.y.data<int32_t>();
  for (int64_t i = 0; i < split.labels.dim(0); ++i) y[i] = lab[i];
  return d;
}

ArrayData FashionMnist(bool train) { return Mnist(kFashionMnistDir, train); }

ArrayData Synthetic(int64_t n, const TensorShape& example_shape, int num_classes, uint64_t seed) {
  WEFT_REQUIRE(n >= 0, "Synthetic: n must be >= 0, got {}", n);
  WEFT_REQUIRE(num_classes >= 1, "Synthetic: num_classes must be >= 1, got {}", num_classes);
  WEFT_REQUIRE(example_shape.IsFullyDefined(), "Synthetic: example_shape {} is not fully defined",
               example_shape.ToString());
  const int64_t d = example_shape.num_elements();
  std::vector<int64_t> dims{n};
  dims.insert(dims.end(), example_shape.dims().begin(), example_shape.dims().end());
  ArrayData out{Tensor(DType::kFloat32, TensorShape(dims)), Tensor(DType::kInt32, TensorShape({n}))};

  // Class means: uniform in [-1, 1] per feature, from their own stream so they do not depend on n.
  Rng mean_rng(seed ^ 0xA5A5A5A5DEADBEEFull);
  std::vector<float> means(static_cast<size_t>(num_classes) * d);
  for (float& m : means) m = static_cast<float>(2.0 * mean_rng.Uniform01() - 1.0);

  Rng rng(seed);
  float* x = out.x.data<float>();
  int32_t* y = out.y.data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t c = static_cast<int32_t>(rng.Uniform(static_cast<uint64_t>(num_classes)));
    y[i] = c;
    const float* mu = means.data() + static_cast<int64_t>(c) * d;
    float* row = x + i * d;
    for (int64_t k = 0; k < d; k += 2) {
      float a, b;
      rng.Normal2(&a, &b);
      row[k] = mu[k] + a;
      if (k + 1 < d) row[k + 1] = mu[k + 1] + b;
    }
  }
  return out;
}

}  // namespace weft::data
