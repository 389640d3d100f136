// MatMul and BatchMatMul on the GPU through cuBLAS.
//
// cuBLAS is column-major and weft row-major: a row-major [r, c] matrix is the column-major [c, r]
// matrix, its transpose. So C = op(A) op(B) (row-major [m, n]) is computed as the column-major
// C^T = op(B)^T op(A)^T of [n, m]: B goes first, each operand transposed iff its attr says so,
// with leading dimensions of the stored rows.
#include <cublas_v2.h>

#include "core/checked.h"
#include "ops/kernels/cpu/math_kernels.h"
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace {

struct GemmShape {
  int64_t m, n, k;
  bool ta, tb;
};

// c = op(a) @ op(b) for `batches` products, a/b/c advancing by the strides (0: the same matrix).
template <typename T>
void Gemm(GpuContext* gpu, const GemmShape& g, const T* a, const T* b, T* c, int64_t batches, int64_t stride_a,
          int64_t stride_b) {
  const T alpha = 1, beta = 0;
  const cublasOperation_t op_a = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  // cuBLAS takes int sizes: checked, so a dim past int32 is InvalidArgument, not a wrapped gemm.
  const int m = CheckedNarrow<int>(g.m, "cuBLAS gemm: m"), n = CheckedNarrow<int>(g.n, "cuBLAS gemm: n");
  const int k = CheckedNarrow<int>(g.k, "cuBLAS gemm: k");
  const int lda = g.ta ? m : k, ldb = g.tb ? k : n;
  const int nb = CheckedNarrow<int>(batches, "cuBLAS gemm: batches");
  std::lock_guard<std::mutex> l(gpu->library_mu());
  cublasStatus_t s;
  if constexpr (std::is_same_v<T, float>) {
    s = cublasSgemmStridedBatched(gpu->cublas(), op_b, op_a, n, m, k, &alpha, b, ldb, stride_b, a, lda, stride_a, &beta,
                                  c, n, g.m * g.n, nb);
  } else {
    s = cublasDgemmStridedBatched(gpu->cublas(), op_b, op_a, n, m, k, &alpha, b, ldb, stride_b, a, lda, stride_a, &beta,
                                  c, n, g.m * g.n, nb);
  }
  ThrowIfError(CublasStatus(s, fmt::format("cuBLAS gemm [{}x{}] @ [{}x{}] x{}", g.m, g.k, g.k, g.n, batches)));
}

// Checks that dims fit cuBLAS's int arguments.
void CheckIntRange(const OpKernelContext* ctx, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) {
    WEFT_REQUIRE(d <= INT32_MAX, "{}: dim {} is too large for cuBLAS (at most {})", ctx->node().Describe(), d, INT32_MAX);
  }
}

template <typename T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(const Node& n)
      : OpKernel(n), ta_(n.attr<bool>("transpose_a")), tb_(n.attr<bool>("transpose_b")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor a = OnDevice(gpu, ctx->input(0)), b = OnDevice(gpu, ctx->input(1));
    const MatMulDims d = CheckMatMul(a.shape(), b.shape(), ta_, tb_);  // the CPU kernel's check
    const GemmShape g{d.m, d.n, d.k, ta_, tb_};
    CheckIntRange(ctx, {g.m, g.n, g.k});
    Tensor* c = ctx->allocate_output(0, TensorShape{g.m, g.n});
    if (c->num_elements() == 0) return;
    if (g.k == 0) {
      LaunchFill<T>(c->data<T>(), T(0), c->num_elements(), gpu->compute_stream());
      return;
    }
    Gemm<T>(gpu, g, a.data<T>(), b.data<T>(), c->data<T>(), 1, 0, 0);
  }

 private:
  bool ta_, tb_;
};

template <typename T>
class BatchMatMulOp : public OpKernel {
 public:
  explicit BatchMatMulOp(const Node& n) : OpKernel(n), ta_(n.attr<bool>("adj_x")), tb_(n.attr<bool>("adj_y")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor a = OnDevice(gpu, ctx->input(0)), b = OnDevice(gpu, ctx->input(1));
    const MatMulDims d = CheckBatchMatMul(a.shape(), b.shape(), ta_, tb_);  // the CPU kernel's check
    const GemmShape g{d.m, d.n, d.k, ta_, tb_};
    CheckIntRange(ctx, {g.m, g.n, g.k});
    const std::vector<int64_t> da = Dims(a.shape()), db = Dims(b.shape());
    const std::vector<int64_t> a_batch(da.begin(), da.end() - 2), b_batch(db.begin(), db.end() - 2);
    std::vector<int64_t> out_dims = BroadcastShape(a_batch, b_batch);
    const int64_t batches = TensorShape(out_dims).num_elements();
    out_dims.push_back(g.m);
    out_dims.push_back(g.n);
    Tensor* c = ctx->allocate_output(0, TensorShape(out_dims));
    if (c->num_elements() == 0) return;
    if (g.k == 0) {
      LaunchFill<T>(c->data<T>(), T(0), c->num_elements(), gpu->compute_stream());
      return;
    }
    const int64_t na = TensorShape(a_batch).num_elements(), nb = TensorShape(b_batch).num_elements();
    const T *pa = a.data<T>(), *pb = b.data<T>();
    T* pc = c->data<T>();
    if ((na == batches || na == 1) && (nb == batches || nb == 1)) {
      // Equal batch dims, or one side a single matrix: one strided-batched call.
      Gemm<T>(gpu, g, pa, pb, pc, batches, na == 1 ? 0 : g.m * g.k, nb == 1 ? 0 : g.k * g.n);
      return;
    }
    // Batch dims that broadcast in several places: one product per output batch.
    const BroadcastIndexer bi = MakeBroadcastIndexer(a_batch, b_batch);
    for (int64_t i = 0; i < batches; ++i) {
      int64_t ia, ib;
      bi.Map(i, &ia, &ib);
      Gemm<T>(gpu, g, pa + ia * g.m * g.k, pb + ib * g.k * g.n, pc + i * g.m * g.n, 1, 0, 0);
    }
  }

 private:
  bool ta_, tb_;
};

}  // namespace

void RegisterCudaMatMulKernels(KernelRegistry& r) {
  RegisterTyped<MatMulOp, float, double>(r, "MatMul", "T", "GPU");
  RegisterTyped<BatchMatMulOp, float, double>(r, "BatchMatMul", "T", "GPU");
}

}  // namespace weft
