// A matrix product on the intra-op pool: the GEMM of MatMul and BatchMatMul (matmul.cc), and of
// Conv2D's im2col products where AVX-512 code is loaded (conv.cc, cpu_dispatch.h).
//
//   GemmProduct<float>{a, b, c, m, n, k, ta, tb}.RunParallel(ctx->intra_op_pool());
//
// Shape key: op(a) is [m, k] (a stored [k, m] when ta), op(b) is [k, n] (b stored [n, k] when tb),
// c is [m, n]; all contiguous, row-major. float32 blocks run libweft_avx512.so's code in a
// portable build on a CPU with AVX-512 (cpu_dispatch.h), other blocks gemm_block.h's; float32
// blocks run oneDNN's sgemm first where the build has oneDNN (onednn.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/threadpool.h"
#include "ops/kernels/cpu/cpu_dispatch.h"
#include "ops/kernels/cpu/gemm_block.h"
#include "ops/kernels/cpu/onednn.h"

namespace weft {

// One product of two row-major matrices, optionally transposed: op(a) is [m, k], op(b) is [k, n],
// c is [m, n] (all contiguous). A stored matrix read transposed is the column-major view of it.
template <typename T>
struct GemmProduct {
  const T* a;
  const T* b;
  T* c;
  int64_t m, n, k;
  bool ta, tb;
  bool acc = false;  // c += the product

  // c[r0:r1, c0:c1] (+)= op(a)[r0:r1, :] @ op(b)[:, c0:c1], single-threaded. k > 0.
  void Block(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const {
    if constexpr (std::is_same_v<T, float>) {
      if (DnnlGemmBlock(a, b, c, m, n, k, ta, tb, acc, r0, r1, c0, c1)) return;
      if (GemmBlockF32Fn wide = WideKernels().gemm_block_f32) return wide(a, b, c, m, n, k, ta, tb, acc, r0, r1, c0, c1);
    }
    GemmBlock<T>(a, b, c, m, n, k, ta, tb, acc, r0, r1, c0, c1);
  }

  // The whole product, single-threaded.
  void Run() const {
    if (k == 0) {
      if (!acc) std::fill_n(c, m * n, T(0));
      return;
    }
    Block(0, m, 0, n);
  }

  // The whole product, split into one block of rows (or of columns, when there are more columns
  // than rows) per pool thread once it is large enough to be worth it. ParallelFor lets the
  // calling thread take a block whose helper has not started (still queued behind other work).
  // Finer blocks would balance better but repack the shared operand once per block; measured
  // no faster on this machine (bench/README.md, "Keeping both threads busy").
  void RunParallel(ThreadPool* pool) const {
    const int threads = pool ? pool->num_threads() : 1;
    if (k == 0 || threads <= 1 || m * n * k < kSmallMatrixFlops) return Run();
    const bool by_rows = m >= n;
    const int64_t len = by_rows ? m : n;
    // Blocks of a multiple of kSplitAlign rows/columns: each keeps whole GEMM register tiles, and
    // every output element is then computed by the same kind of micro-kernel, so the same bits, on
    // any number of threads (Eigen's one-packet edge kernel sums in another order than its two-
    // and three-packet ones: an edge must fall only where it falls without a split).
    const int64_t per = std::max<int64_t>(kSplitAlign, (len / threads + kSplitAlign - 1) / kSplitAlign * kSplitAlign);
    const int64_t blocks = (len + per - 1) / per;
    pool->ParallelFor(blocks, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t lo = i * per, hi = std::min(len, lo + per);
        if (by_rows) {
          Block(lo, hi, 0, n);
        } else {
          Block(0, m, lo, hi);
        }
      }
    });
  }

  // Below this many multiply-adds a product runs on one thread: splitting it would cost about as
  // much in thread hand-offs as it saves (its time on one core: bench/README.md, Kernels).
  static constexpr int64_t kSmallMatrixFlops = int64_t{1} << 21;
  // Three AVX-512 float packets: a multiple of every register tile height Eigen uses for float
  // and double with AVX2 or AVX-512 (tests/train/determinism_test.cc checks the bits).
  static constexpr int64_t kSplitAlign = 48;
};

}  // namespace weft
