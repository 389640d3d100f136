// CPU kernels for MatMul and BatchMatMul: Eigen tensor contraction, multi-threaded on the
// intra-op thread-pool device.
//
// Shape key: a is [m, k] (stored [k, m] when transposed), b is [k, n] (stored [n, k] when
// transposed), the product is [m, n]. BatchMatMul has leading batch dims that broadcast.
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/broadcast.h"
#include "ops/kernels/cpu/math_kernels.h"

namespace weft {
namespace {

using Index = Eigen::DenseIndex;
template <typename T>
using ConstMatrixMap = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor, Index>, Eigen::Unaligned>;
template <typename T>
using MatrixMap = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor, Index>, Eigen::Unaligned>;

// Contraction pairs: a's k axis (1, or 0 when transposed) with b's k axis (0, or 1).
Eigen::array<Eigen::IndexPair<Index>, 1> ContractDims(bool ta, bool tb) {
  return {Eigen::IndexPair<Index>(ta ? 0 : 1, tb ? 1 : 0)};
}

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
    auto o = out->matrix<T>();
    if (k == 0) {
      o.setZero();
      return;
    }
    o.device(ctx->eigen_device()) = a.matrix<T>().contract(b.matrix<T>(), ContractDims(ta_, tb_));
  }

 private:
  bool ta_, tb_;
};

// Below this many multiply-adds per matrix, batches run in parallel (each single-threaded);
// above it, batches run one after another, each contraction using the whole pool.
constexpr int64_t kSmallMatrixFlops = int64_t{1} << 18;

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
    const auto dims = ContractDims(adj_x_, adj_y_);
    // Runs batch i on `dev` (the pool device or Eigen's single-threaded default device).
    auto run = [&](int64_t i, const auto& dev) {
      int64_t oa = i, ob = i;
      if (!plan.same_shape) plan.Offsets(i, &oa, &ob);
      MatrixMap<T> o(po + i * m * n, m, n);
      if (k == 0) {
        o.setZero();
        return;
      }
      ConstMatrixMap<T> ma(pa + oa * ar * ac, ar, ac);
      ConstMatrixMap<T> mb(pb + ob * br * bc, br, bc);
      o.device(dev) = ma.contract(mb, dims);
    };
    if (batches == 1 || m * n * k >= kSmallMatrixFlops) {
      for (int64_t i = 0; i < batches; ++i) run(i, ctx->eigen_device());
    } else {
      ctx->intra_op_pool()->ParallelFor(batches, [&](int64_t begin, int64_t end) {
        Eigen::DefaultDevice dev;
        for (int64_t i = begin; i < end; ++i) run(i, dev);
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
