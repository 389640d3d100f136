// CPU kernel for FFT (declared in ops/signal.cc).
// Shape key: re, im [..., n] are viewed as rows [R, n]; each row is one transform of length n.
// Radix-2 Cooley-Tukey for powers of two; any other n by Bluestein's chirp z-transform (a
// convolution of length m = the power of two >= 2n - 1, done with radix-2 FFTs), so every length
// costs O(n log n). Computed in double precision for float32 too.
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"

namespace weft {
namespace {

using C = std::complex<double>;

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// In place, length a power of two; sign -1 forward, +1 inverse (unscaled).
void Radix2(std::vector<C>& a, int sign) {
  const int64_t n = static_cast<int64_t>(a.size());
  for (int64_t i = 1, j = 0; i < n; ++i) {  // bit reversal
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    const double ang = sign * 2 * std::numbers::pi / static_cast<double>(len);
    const C wl(std::cos(ang), std::sin(ang));
    for (int64_t i = 0; i < n; i += len) {
      C w(1, 0);
      for (int64_t k = 0; k < len / 2; ++k) {
        const C u = a[i + k], v = a[i + k + len / 2] * w;
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
        w *= wl;
      }
    }
  }
}

// The plan for one length: Bluestein's chirp and the FFT of its conjugate filter.
struct Plan {
  int64_t n = 0, m = 0;
  std::vector<C> chirp;   // exp(sign i pi k^2 / n), k < n
  std::vector<C> filter;  // FFT of conj(chirp) placed at k and m - k
};

Plan MakePlan(int64_t n, int sign) {
  Plan p;
  p.n = n;
  if (IsPowerOfTwo(n)) return p;
  p.m = 1;
  while (p.m < 2 * n - 1) p.m <<= 1;
  p.chirp.resize(n);
  for (int64_t k = 0; k < n; ++k) {
    // k^2 mod 2n keeps the angle small (exact for every k < 2^31).
    const double ang = sign * std::numbers::pi * static_cast<double>((k * k) % (2 * n)) / static_cast<double>(n);
    p.chirp[k] = C(std::cos(ang), std::sin(ang));
  }
  p.filter.assign(p.m, C(0, 0));
  p.filter[0] = std::conj(p.chirp[0]);
  for (int64_t k = 1; k < n; ++k) p.filter[k] = p.filter[p.m - k] = std::conj(p.chirp[k]);
  Radix2(p.filter, -1);
  return p;
}

// One transform of `row` (length n) in place.
void Transform(const Plan& p, std::vector<C>& row, std::vector<C>& work, int sign) {
  if (p.m == 0) return Radix2(row, sign);
  work.assign(p.m, C(0, 0));
  for (int64_t k = 0; k < p.n; ++k) work[k] = row[k] * p.chirp[k];
  Radix2(work, -1);
  for (int64_t k = 0; k < p.m; ++k) work[k] *= p.filter[k];
  Radix2(work, +1);
  const double inv_m = 1.0 / static_cast<double>(p.m);
  for (int64_t k = 0; k < p.n; ++k) row[k] = work[k] * inv_m * p.chirp[k];
}

template <typename T>
class FftOp : public OpKernel {
 public:
  explicit FftOp(const Node& n) : OpKernel(n), inverse_(n.attr<bool>("inverse")), normalize_(n.attr<bool>("normalize")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& re = ctx->input(0);
    const Tensor& im = ctx->input(1);
    WEFT_REQUIRE(re.rank() >= 1, "FFT: re must have rank at least 1, got shape {}", re.shape().ToString());
    WEFT_REQUIRE(re.shape() == im.shape(), "FFT: re and im must have one shape (one complex tensor), got {} and {}",
                 re.shape().ToString(), im.shape().ToString());
    T* yr = ctx->allocate_output(0, re.shape())->template data<T>();
    T* yi = ctx->allocate_output(1, re.shape())->template data<T>();
    const int64_t n = re.dim(re.rank() - 1);
    if (n == 0 || re.num_elements() == 0) return;
    const int64_t rows = re.num_elements() / n;
    const int sign = inverse_ ? +1 : -1;
    const Plan plan = MakePlan(n, sign);
    const double scale = normalize_ ? 1.0 / static_cast<double>(n) : 1.0;
    const T* xr = re.data<T>();
    const T* xi = im.data<T>();
    std::vector<C> row(n), work;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < n; ++k) row[k] = C(xr[r * n + k], xi[r * n + k]);
      Transform(plan, row, work, sign);
      for (int64_t k = 0; k < n; ++k) {
        yr[r * n + k] = static_cast<T>(row[k].real() * scale);
        yi[r * n + k] = static_cast<T>(row[k].imag() * scale);
      }
    }
  }

 private:
  const bool inverse_, normalize_;
};

}  // namespace

void RegisterSignalKernels(KernelRegistry& r) { RegisterTyped<FftOp, float, double>(r, "FFT"); }

}  // namespace weft
