// GPU FusedBatchNorm and FusedBatchNormGrad, channels last (ops/nn.cc; the CPU ones are in
// ops/kernels/cpu/batchnorm.cc): reduce.cu's kernels, one block per channel, with the CPU kernel's
// formulas in training and inference.
//
// Shape key: C = channels (last axis), M = number of values per channel (N*H*W for NHWC).
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace {

// x [..., C] viewed as [M, C]; checks the per-channel vectors (names as the op declares them).
std::pair<int64_t, int64_t> BatchNormDims(const OpKernelContext* ctx, const Tensor& x, std::initializer_list<int> vecs) {
  WEFT_REQUIRE(x.rank() >= 2, "{}: x must have rank at least 2 (channels last), got shape {}", ctx->node().Describe(),
               x.shape().ToString());
  const int64_t C = x.dim(x.rank() - 1);
  for (int i : vecs) {
    const Tensor& t = ctx->input(i);
    WEFT_REQUIRE(t.rank() == 1 && t.dim(0) == C, "{} must have shape [{}] (the channels of x {}), got {}",
                 ctx->node().def().inputs.at(i).name, C, x.shape().ToString(), t.shape().ToString());
  }
  return {C == 0 ? 0 : x.num_elements() / C, C};
}

template <typename T>
class FusedBatchNormOp : public OpKernel {
 public:
  explicit FusedBatchNormOp(const Node& n)
      : OpKernel(n), epsilon_(n.attr<double>("epsilon")), training_(n.attr<bool>("is_training")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const auto [M, C] = BatchNormDims(ctx, ctx->input(0), {1, 2, 3, 4});
    Tensor in[5];
    for (int i = 0; i < 5; ++i) in[i] = OnDevice(gpu, ctx->input(i));
    Tensor* y = ctx->allocate_output(0, in[0].shape());
    Tensor* mean = ctx->allocate_output(1, TensorShape{C});
    Tensor* var = ctx->allocate_output(2, TensorShape{C});
    Tensor scratch(DTypeOf<T>(), TensorShape{2 * C}, gpu->allocator());
    LaunchBatchNorm<T>(in[0].data<T>(), in[1].data<T>(), in[2].data<T>(), in[3].data<T>(), in[4].data<T>(), y->data<T>(),
                       mean->data<T>(), var->data<T>(), scratch.data<T>(), M, C, static_cast<T>(epsilon_), training_,
                       gpu->compute_stream());
  }

 private:
  double epsilon_;
  bool training_;
};

template <typename T>
class FusedBatchNormGradOp : public OpKernel {
 public:
  explicit FusedBatchNormGradOp(const Node& n)
      : OpKernel(n), epsilon_(n.attr<double>("epsilon")), training_(n.attr<bool>("is_training")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    WEFT_REQUIRE(ctx->input(0).shape() == ctx->input(1).shape(), "y_backprop has shape {}, x has shape {}",
                 ctx->input(0).shape().ToString(), ctx->input(1).shape().ToString());
    const auto [M, C] = BatchNormDims(ctx, ctx->input(1), {2, 3, 4, 5, 6});
    Tensor in[7];
    for (int i = 0; i < 7; ++i) in[i] = OnDevice(gpu, ctx->input(i));
    Tensor* out[5];
    out[0] = ctx->allocate_output(0, in[1].shape());
    for (int i = 1; i < 5; ++i) out[i] = ctx->allocate_output(i, TensorShape{C});
    Tensor scratch(DTypeOf<T>(), TensorShape{3 * C}, gpu->allocator());
    LaunchBatchNormGrad<T>(in[0].data<T>(), in[1].data<T>(), in[2].data<T>(), in[3].data<T>(), in[4].data<T>(),
                           in[5].data<T>(), in[6].data<T>(), out[0]->data<T>(), out[1]->data<T>(), out[2]->data<T>(),
                           out[3]->data<T>(), out[4]->data<T>(), scratch.data<T>(), M, C, static_cast<T>(epsilon_),
                           training_, gpu->compute_stream());
  }

 private:
  double epsilon_;
  bool training_;
};

}  // namespace

void RegisterCudaBatchNormKernels(KernelRegistry& r) {
  RegisterFloats<FusedBatchNormOp>(r, "FusedBatchNorm");
  RegisterFloats<FusedBatchNormGradOp>(r, "FusedBatchNormGrad");
}

}  // namespace weft
