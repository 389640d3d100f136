// libweft_avx512.so's kernels (ops/kernels/cpu/cpu_dispatch.h) against a naive reference, loaded
// whatever this build's baseline, so a native CI tree checks what portable installs run on an
// AVX-512 CPU. Skips (with the reason) where the module cannot be loaded, e.g. a CPU without AVX-512.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ops/kernels/cpu/cpu_dispatch.h"
#include "ops/kernels/cpu/gemm_block.h"

namespace weft {
namespace {

// c[r0:r1, c0:c1] = op(a) @ op(b) in double, the layouts of gemm_block.h.
std::vector<double> NaiveBlock(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t n,
                               int64_t k, bool ta, bool tb, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  std::vector<double> c((r1 - r0) * (c1 - c0));
  for (int64_t i = r0; i < r1; ++i) {
    for (int64_t j = c0; j < c1; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += double(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      c[(i - r0) * (c1 - c0) + (j - c0)] = s;
    }
  }
  return c;
}

TEST_CASE("libweft_avx512 GEMM block matches the reference, every layout, a sub-block, accumulating") {
  const WideCpuKernels wide = LoadWideKernels();
  if (wide.gemm_block_f32 == nullptr) {
    MESSAGE("skipped: libweft_avx512.so not used: " << wide.source);
    return;
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  struct Shape { int64_t m, n, k; };
  for (Shape s : {Shape{1, 1, 1}, Shape{17, 33, 65}, Shape{64, 48, 96}, Shape{130, 7, 300}}) {
    std::vector<float> a(s.m * s.k), b(s.k * s.n);
    for (float& v : a) v = u(rng);
    for (float& v : b) v = u(rng);
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        // The whole product, then the block [m/3, m) x [n/2, n) of a fresh output.
        for (bool sub : {false, true}) {
          const int64_t r0 = sub ? s.m / 3 : 0, c0 = sub ? s.n / 2 : 0;
          std::vector<float> c(s.m * s.n, -7.0f);
          // acc (sub-blocks only): c += op(a) @ op(b) over the -7 already there.
          const bool acc = sub;
          wide.gemm_block_f32(a.data(), b.data(), c.data(), s.m, s.n, s.k, ta, tb, acc, r0, s.m, c0, s.n);
          std::vector<double> want = NaiveBlock(a, b, s.m, s.n, s.k, ta, tb, r0, s.m, c0, s.n);
          if (acc) for (double& v : want) v -= 7.0;
          CAPTURE(s.m); CAPTURE(s.n); CAPTURE(s.k); CAPTURE(ta); CAPTURE(tb); CAPTURE(sub);
          for (int64_t i = 0; i < s.m; ++i) {
            for (int64_t j = 0; j < s.n; ++j) {
              const float got = c[i * s.n + j];
              if (i < r0 || j < c0) {
                REQUIRE(got == -7.0f);  // outside the block: untouched
              } else {
                REQUIRE(std::fabs(got - want[(i - r0) * (s.n - c0) + (j - c0)]) <= 1e-4 * (1 + s.k));
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace weft
