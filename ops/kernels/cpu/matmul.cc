// CPU kernels for MatMul and BatchMatMul: Eigen's dense GEMM (Eigen::Map matrix products) on
// blocks of the output, split over the intra-op pool. (Not the Eigen tensor contraction on the
// thread-pool device: it compiles eight kernel variants per instantiation and cost minutes of
// compile time for no speed gain.)
//
// Shape key: a is [m, k] (stored [k, m] when transposed), b is [k, n] (stored [n, k] when
// transposed), the product is [m, n]. BatchMatMul has leading batch dims that broadcast.
#include <algorithm>
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/broadcast.h"
#include "ops/kernels/cpu/gemm.h"
#include "ops/kernels/cpu/math_kernels.h"

namespace weft {
namespace {

template <typename T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(const Node& node)
      : OpKernel(node), ta_(node.attr<bool>("transpose_a")), tb_(node.attr<bool>("transpose_b")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    const MatMulDims d = CheckMatMul(a.shape(), b.shape(), ta_, tb_);
    const int64_t m = d.m, n = d.n, k = d.k;
    Tensor* out = ctx->allocate_output(0, TensorShape({m, n}));
    if (m * n == 0) return;
    GemmProduct<T>{a.data<T>(), b.data<T>(), out->data<T>(), m, n, k, ta_, tb_}.RunParallel(ctx->intra_op_pool());
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
    const MatMulDims d = CheckBatchMatMul(a.shape(), b.shape(), adj_x_, adj_y_);
    const int64_t m = d.m, n = d.n, k = d.k;
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
      return GemmProduct<T>{pa + oa * m * k, pb + ob * k * n, po + i * m * n, m, n, k, adj_x_, adj_y_};
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

MatMulDims CheckMatMul(const TensorShape& a, const TensorShape& b, bool transpose_a, bool transpose_b) {
  WEFT_REQUIRE(a.rank() == 2 && b.rank() == 2, "a {} and b {} must be matrices", a.ToString(), b.ToString());
  const int64_t m = a.dim(transpose_a ? 1 : 0), k = a.dim(transpose_a ? 0 : 1);
  const int64_t kb = b.dim(transpose_b ? 1 : 0), n = b.dim(transpose_b ? 0 : 1);
  WEFT_REQUIRE(k == kb, "inner dimensions differ: a {}{} and b {}{} ({} vs {})", a.ToString(),
               transpose_a ? " (transposed)" : "", b.ToString(), transpose_b ? " (transposed)" : "", k, kb);
  return {m, n, k};
}

MatMulDims CheckBatchMatMul(const TensorShape& a, const TensorShape& b, bool adj_x, bool adj_y) {
  WEFT_REQUIRE(a.rank() >= 2 && b.rank() >= 2, "a {} and b {} must have rank >= 2", a.ToString(), b.ToString());
  const int ra = a.rank(), rb = b.rank();
  const int64_t ar = a.dim(ra - 2), ac = a.dim(ra - 1), br = b.dim(rb - 2), bc = b.dim(rb - 1);
  const int64_t m = adj_x ? ac : ar, k = adj_x ? ar : ac;
  const int64_t kb = adj_y ? bc : br, n = adj_y ? br : bc;
  WEFT_REQUIRE(k == kb, "inner dimensions differ: a {}{} and b {}{} ({} vs {})", a.ToString(),
               adj_x ? " (adj_x)" : "", b.ToString(), adj_y ? " (adj_y)" : "", k, kb);
  return {m, n, k};
}

void RegisterMatMulKernels(KernelRegistry& r) {
  // The dtypes of ops/math.cc's kSigned: integer products go through Eigen's generic GEMM.
  RegisterTyped<MatMulOp, float, double, int32_t, int64_t>(r, "MatMul");
  RegisterTyped<BatchMatMulOp, float, double, int32_t, int64_t>(r, "BatchMatMul");
}

}  // namespace weft
