// GPU kernels of the nn ops (ops/nn.cc; the CPU ones are in ops/kernels/cpu/nn.cc): the
// activations Relu, Sigmoid, Tanh, Gelu and their gradient ops, BiasAdd and BiasAddGrad, Softmax and the
// softmax cross-entropy losses (elementwise.cu, reduce.cu). RegisterCudaNnKernels registers the
// whole family: convolutions (conv.cc), pooling (pool.cc) and batch norm (batchnorm.cc) too.
//
// Shape key: C = the last axis (channels / classes), rows = elements / C.
#include "ops/kernels/cpu/nn_kernels.h"
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace {

template <ActivationGradKind kKind>
struct ActivationGrad {
  template <typename T>
  class Op : public OpKernel {
   public:
    using OpKernel::OpKernel;
    void Compute(OpKernelContext* ctx) override {
      GpuContext* gpu = GpuOf(ctx);
      const Tensor a = OnDevice(gpu, ctx->input(0)), b = OnDevice(gpu, ctx->input(1));
      WEFT_REQUIRE(a.shape() == b.shape(), "{}: shapes {} and {} differ", ctx->node().Describe(), a.shape().ToString(),
                   b.shape().ToString());
      Tensor* out = ctx->allocate_output(0, a.shape());
      LaunchActivationGrad<T>(kKind, a.data<T>(), b.data<T>(), out->data<T>(), a.num_elements(), gpu->compute_stream());
    }
  };
};

// Gelu and GeluGrad: the exact or the tanh form, by the node's `approximate`.
template <typename T>
class GeluOp : public OpKernel {
 public:
  explicit GeluOp(const Node& node) : OpKernel(node), approximate_(node.attr<bool>("approximate")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0));
    Tensor* y = ctx->allocate_output(0, x.shape());
    LaunchUnary<T>(approximate_ ? UnaryKind::kGeluTanh : UnaryKind::kGelu, x.data<T>(), y->data<T>(),
                   x.num_elements(), gpu->compute_stream());
  }

 private:
  bool approximate_;
};
template <typename T>
class GeluGradOp : public OpKernel {
 public:
  explicit GeluGradOp(const Node& node) : OpKernel(node), approximate_(node.attr<bool>("approximate")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor dy = OnDevice(gpu, ctx->input(0)), x = OnDevice(gpu, ctx->input(1));
    WEFT_REQUIRE(dy.shape() == x.shape(), "inputs must have one shape, got {} and {}", dy.shape().ToString(),
                 x.shape().ToString());
    Tensor* out = ctx->allocate_output(0, x.shape());
    LaunchActivationGrad<T>(approximate_ ? ActivationGradKind::kGeluTanhGrad : ActivationGradKind::kGeluGrad,
                            dy.data<T>(), x.data<T>(), out->data<T>(), x.num_elements(), gpu->compute_stream());
  }

 private:
  bool approximate_;
};

template <typename T>
class BiasAddOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0)), bias = OnDevice(gpu, ctx->input(1));
    WEFT_REQUIRE(x.rank() >= 1 && bias.rank() == 1 && bias.dim(0) == x.dim(x.rank() - 1),
                 "BiasAdd: bias {} must be a vector of x's last dim (x {})", bias.shape().ToString(), x.shape().ToString());
    Tensor* y = ctx->allocate_output(0, x.shape());
    LaunchBiasAdd<T>(x.data<T>(), bias.data<T>(), y->data<T>(), x.num_elements(), bias.dim(0), gpu->compute_stream());
  }
};

// out_backprop [..., C] summed over every axis but the last.
template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    WEFT_REQUIRE(dy.rank() >= 1, "BiasAddGrad: out_backprop must have rank >= 1, got {}", dy.shape().ToString());
    std::vector<int64_t> axes;
    for (int i = 0; i + 1 < dy.rank(); ++i) axes.push_back(i);
    ReduceInto<T>(ctx, ReduceKind::kSum, dy, axes, TensorShape{dy.dim(dy.rank() - 1)});
  }
};

// Rows of the last dim: [rows, cols].
void RowsCols(const OpKernelContext* ctx, const Tensor& t, int64_t* rows, int64_t* cols) {
  WEFT_REQUIRE(t.rank() >= 1, "{}: logits must have rank >= 1, got {}", ctx->node().Describe(), t.shape().ToString());
  *cols = t.dim(t.rank() - 1);
  *rows = *cols == 0 ? 0 : t.num_elements() / *cols;
}

template <typename T>
class SoftmaxOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor z = OnDevice(gpu, ctx->input(0));
    int64_t rows, cols;
    RowsCols(ctx, z, &rows, &cols);
    Tensor* y = ctx->allocate_output(0, z.shape());
    LaunchSoftmax<T>(z.data<T>(), y->data<T>(), rows, cols, gpu->compute_stream());
  }
};

template <typename T>
class SoftmaxGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor y = OnDevice(gpu, ctx->input(0)), dy = OnDevice(gpu, ctx->input(1));
    WEFT_REQUIRE(y.shape() == dy.shape(), "{}: softmax {} and its gradient {} must have one shape", ctx->node().Describe(),
                 y.shape().ToString(), dy.shape().ToString());
    int64_t rows, cols;
    RowsCols(ctx, y, &rows, &cols);
    Tensor* dx = ctx->allocate_output(0, y.shape());
    LaunchSoftmaxGrad<T>(y.data<T>(), dy.data<T>(), dx->data<T>(), rows, cols, gpu->compute_stream());
  }
};

template <typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor z = OnDevice(gpu, ctx->input(0)), labels = OnDevice(gpu, ctx->input(1));
    CheckSoftmaxXentInputs(z, labels);
    Tensor* loss = ctx->allocate_output(0, TensorShape{z.dim(0)});
    Tensor* backprop = ctx->allocate_output(1, z.shape());
    LaunchSoftmaxXent<T>(z.data<T>(), labels.data<T>(), loss->data<T>(), backprop->data<T>(), z.dim(0), z.dim(1),
                         gpu->compute_stream());
  }
};

template <typename T>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor z = OnDevice(gpu, ctx->input(0)), labels = OnDevice(gpu, ctx->input(1));
    CheckSparseSoftmaxXentInputs(z, labels);
    Tensor* loss = ctx->allocate_output(0, TensorShape{z.dim(0)});
    Tensor* backprop = ctx->allocate_output(1, z.shape());
    // As the CPU kernel: a label outside [0, classes) is an error naming the first such label and
    // its row.
    const int64_t classes = z.dim(1);
    IndexCheck bad(gpu, ctx->input(1), [classes](const Tensor& host) { CheckLabels(host, classes); });
    if (labels.dtype() == DType::kInt32) {
      LaunchSparseSoftmaxXent<T, int32_t>(z.data<T>(), labels.data<int32_t>(), loss->data<T>(), backprop->data<T>(),
                                          z.dim(0), z.dim(1), bad.flag(), gpu->compute_stream());
    } else {
      LaunchSparseSoftmaxXent<T, int64_t>(z.data<T>(), labels.data<int64_t>(), loss->data<T>(), backprop->data<T>(),
                                          z.dim(0), z.dim(1), bad.flag(), gpu->compute_stream());
    }
    bad.Finish();
  }
};

}  // namespace

void RegisterCudaNnKernels(KernelRegistry& r) {
  RegisterFloats<Unary<UnaryKind::kRelu>::Op>(r, "Relu");
  RegisterFloats<Unary<UnaryKind::kSigmoid>::Op>(r, "Sigmoid");
  RegisterFloats<Unary<UnaryKind::kTanh>::Op>(r, "Tanh");
  RegisterFloats<ActivationGrad<ActivationGradKind::kReluGrad>::Op>(r, "ReluGrad");
  RegisterFloats<ActivationGrad<ActivationGradKind::kSigmoidGrad>::Op>(r, "SigmoidGrad");
  RegisterFloats<ActivationGrad<ActivationGradKind::kTanhGrad>::Op>(r, "TanhGrad");
  RegisterFloats<GeluOp>(r, "Gelu");
  RegisterFloats<GeluGradOp>(r, "GeluGrad");
  RegisterFloats<BiasAddOp>(r, "BiasAdd");
  RegisterFloats<BiasAddGradOp>(r, "BiasAddGrad");
  RegisterFloats<SoftmaxOp>(r, "Softmax");
  RegisterFloats<SoftmaxGradOp>(r, "SoftmaxGrad");
  RegisterFloats<SoftmaxXentOp>(r, "SoftmaxCrossEntropyWithLogits");
  RegisterFloats<SparseSoftmaxXentOp>(r, "SparseSoftmaxCrossEntropyWithLogits");
  RegisterCudaConvKernels(r);
  RegisterCudaPoolKernels(r);
  RegisterCudaBatchNormKernels(r);
}

}  // namespace weft
