// The single-threaded GEMM block under MatMul, BatchMatMul and Conv2D (ops/kernels/cpu/matmul.cc,
// conv.cc): Eigen's
// dense matrix product on row-major matrices, optionally read transposed.
//
//   GemmBlock<float>(a, b, c, m, n, k, ta, tb, acc, r0, r1, c0, c1);
//   // c[r0:r1, c0:c1] (+ c[r0:r1, c0:c1] when acc) = op(a)[r0:r1, :] @ op(b)[:, c0:c1]
//
// Shape key: op(a) is [m, k] (a stored [k, m] when ta), op(b) is [k, n] (b stored [n, k] when tb),
// c is [m, n]; all contiguous. REQUIRES: k > 0. Compiled twice: into libweft for the build's
// baseline instruction set, and into libweft_avx512.so for AVX-512 (cpu_dispatch.h), so this
// header holds nothing but the product.
#pragma once

#include <Eigen/Core>

#include <cstdint>

namespace weft {

template <typename T>
void GemmBlock(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb, bool acc,
               int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  using RowMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
                            Eigen::OuterStride<>>;
  using ColMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>, 0,
                            Eigen::OuterStride<>>;
  using OutMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
                            Eigen::OuterStride<>>;
  // A stored matrix read transposed is the column-major view of it.
  OutMap out(c + r0 * n + c0, r1 - r0, c1 - c0, Eigen::OuterStride<>(n));
  auto with_b = [&](const auto& ma) {
    auto product = [&](const auto& mb) {
      if (acc) {
        out.noalias() += ma * mb;
      } else {
        out.noalias() = ma * mb;
      }
    };
    if (tb) {
      product(ColMap(b + c0 * k, k, c1 - c0, Eigen::OuterStride<>(k)));
    } else {
      product(RowMap(b + c0, k, c1 - c0, Eigen::OuterStride<>(n)));
    }
  };
  if (ta) {
    with_b(ColMap(a + r0, r1 - r0, k, Eigen::OuterStride<>(m)));
  } else {
    with_b(RowMap(a + r0 * k, r1 - r0, k, Eigen::OuterStride<>(k)));
  }
}

// The C interface of libweft_avx512.so's float32 block (same arguments as GemmBlock<float>).
using GemmBlockF32Fn = void (*)(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                                bool ta, bool tb, bool acc, int64_t r0, int64_t r1, int64_t c0, int64_t c1);

}  // namespace weft
