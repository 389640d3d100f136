// CPU kernels for MatMul and BatchMatMul: Eigen's dense GEMM (Eigen::Map matrix products) on
// blocks of the output, split over the intra-op pool. (Not the Eigen tensor contraction on the
// thread-pool device: it compiles eight kernel variants per instantiation and cost minutes of
// compile time for no speed gain.)
//
// Shape key: a is [m, k] (stored [k, m] when transposed), b is [k, n] (stored [n, k] when
// transposed), the product is [m, n]. BatchMatMul has leading batch dims that broadcast.
// float32 blocks run AVX-512 code in a portable build on a CPU that has it (cpu_dispatch.h).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/broadcast.h"
#include "ops/kernels/cpu/cpu_dispatch.h"
#include "ops/kernels/cpu/gemm_block.h"
#include "ops/kernels/cpu/math_kernels.h"

namespace weft {
namespace {

// One product of two row-major matrices, optionally transposed: op(a) is [m, k], op(b) is [k, n],
// c is [m, n] (all contiguous). A stored matrix read transposed is the column-major view of it.
template <typename T>
struct Gemm {
  const T* a;
  const T* b;
  T* c;
  int64_t m, n, k;
  bool ta, tb;

  // c[r0:r1, c0:c1] = op(a)[r0:r1, :] @ op(b)[:, c0:c1], single-threaded. k > 0.
  void Block(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const {
    if constexpr (std::is_same_v<T, float>) {
      if (GemmBlockF32Fn wide = WideKernels().gemm_block_f32) return wide(a, b, c, m, n, k, ta, tb, r0, r1, c0, c1);
    }
    GemmBlock<T>(a, b, c, m, n, k, ta, tb, r0, r1, c0, c1);
  }

  // The whole product, single-threaded.
  void Run() const {
    if (k == 0) {
      std::fill_n(c, m * n, T(0));
      return;
    }
    Block(0, m, 0, n);
  }

  // The whole product, split into one block of rows (or of columns, when there are more columns
  // than rows) per pool thread once it is large enough to be worth it.
  void RunParallel(ThreadPool* pool) const {
    const int threads = pool ? pool->num_threads() : 1;
    if (k == 0 || threads <= 1 || m * n * k < kSmallMatrixFlops) return Run();
    const bool by_rows = m >= n;
    const int64_t len = by_rows ? m : n;
    // Blocks of a multiple of 16 rows/columns, so each keeps whole GEMM register tiles.
    const int64_t per = std::max<int64_t>(16, (len / threads + 15) / 16 * 16);
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
};

template <typename T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(const Node& node)
      : OpKernel(node), ta_(node.attr<bool>("transpose_a")), tb_(node.attr<bool>("transpose_b")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    WEFT_REQUIRE(a.rank() == 2 && b.rank() == 2, "a {} and b {} must be matrices", a.shape().ToString(),
                 b.shape().ToString());
    const int64_t m = a.dim(ta_ ? 1 : 0), k = a.dim(ta_ ? 0 : 1);
    const int64_t kb = b.dim(tb_ ? 1 : 0), n = b.dim(tb_ ? 0 : 1);
    WEFT_REQUIRE(k == kb, "inner dimensions differ: a {}{} and b {}{} ({} vs {})", a.shape().ToString(),
                 ta_ ? " (transposed)" : "", b.shape().ToString(), tb_ ? " (transposed)" : "", k, kb);
    Tensor* out = ctx->allocate_output(0, TensorShape({m, n}));
    if (m * n == 0) return;
    Gemm<T>{a.data<T>(), b.data<T>(), out->data<T>(), m, n, k, ta_, tb_}.RunParallel(ctx->intra_op_pool());
  }

 private:
  bool ta_, tb_;
};

template <typename T>
class BatchMatMulOp : public OpKernel {
 public:
  explicit BatchMatMulOp(const Node& node)
      : OpKernel(node), adj_x_(node.attr<bool>("adj_x")), adj_y_(node.attr<bool>("adj_y")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    WEFT_REQUIRE(a.rank() >= 2 && b.rank() >= 2, "a {} and b {} must have rank >= 2",
                 a.shape().ToString(), b.shape().ToString());
    const int ra = a.rank(), rb = b.rank();
    const int64_t ar = a.dim(ra - 2), ac = a.dim(ra - 1), br = b.dim(rb - 2), bc = b.dim(rb - 1);
    const int64_t m = adj_x_ ? ac : ar, k = adj_x_ ? ar : ac;
    const int64_t kb = adj_y_ ? bc : br, n = adj_y_ ? br : bc;
    WEFT_REQUIRE(k == kb, "inner dimensions differ: a {}{} and b {}{} ({} vs {})", a.shape().ToString(),
                 adj_x_ ? " (adj_x)" : "", b.shape().ToString(), adj_y_ ? " (adj_y)" : "", k, kb);
    std::vector<int64_t> a_batch(a.shape().dims().begin(), a.shape().dims().end() - 2);
    std::vector<int64_t> b_batch(b.shape().dims().begin(), b.shape().dims().end() - 2);
    const BroadcastPlan plan = BroadcastPlan::Make(TensorShape(a_batch), TensorShape(b_batch), "batch dims");
    std::vector<int64_t> out_dims = plan.out_shape.dims();
    out_dims.push_back(m);
    out_dims.push_back(n);
    Tensor* out = ctx->allocate_output(0, TensorShape(out_dims));
    if (out->num_elements() == 0) return;
    const int64_t batches = plan.out_shape.num_elements();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out->data<T>();
    // Batch i: its a and b matrices (broadcast along the batch dims).
    auto gemm = [&](int64_t i) {
      int64_t oa = i, ob = i;
      if (!plan.same_shape) plan.Offsets(i, &oa, &ob);
      return Gemm<T>{pa + oa * ar * ac, pb + ob * br * bc, po + i * m * n, m, n, k, adj_x_, adj_y_};
    };
    // One product: split it over the pool. Several: the batches run in parallel, each product
    // single-threaded (no hand-off per product, and each packs its own operands once).
    if (batches == 1) {
      gemm(0).RunParallel(ctx->intra_op_pool());
    } else {
      ParallelForCost(ctx->intra_op_pool(), batches, m * n * k, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) gemm(i).Run();
      });
    }
  }

 private:
  bool adj_x_, adj_y_;
};

}  // namespace

void RegisterMatMulKernels(KernelRegistry& r) {
  RegisterTyped<MatMulOp, WEFT_FLOAT_TYPES>(r, "MatMul");
  RegisterTyped<BatchMatMulOp, WEFT_FLOAT_TYPES>(r, "BatchMatMul");
}

}  // namespace weft
