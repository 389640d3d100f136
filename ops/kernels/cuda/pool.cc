// Pooling on the GPU through cuDNN's legacy API, over weft's NHWC tensors (ops/nn.cc; the CPU
// ones are in ops/kernels/cpu/pool.cc). SAME pooling with uneven padding (the odd pixel after) is
// Unimplemented here: cuDNN pads symmetrically.
#include "ops/kernels/cpu/nn_kernels.h"
#include "ops/kernels/cuda/cudnn_desc.h"
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace {

using namespace cudnn_internal;

// Pooling: max (first maximum wins, deterministic) or average over the window's real pixels.
struct PoolSetup {
  Conv2DGeometry g;
};

PoolSetup MakePoolSetup(const Node& node, const std::vector<int64_t>& in) {
  WEFT_REQUIRE(in.size() == 4, "{}: input [{}] must be NHWC", node.Describe(), fmt::join(in, ","));
  const auto ksize = CheckPair(node.attr<std::vector<int64_t>>("ksize"), "ksize");
  const auto strides = CheckPair(node.attr<std::vector<int64_t>>("strides"), "strides");
  const bool same = ParsePadding(node.attr<std::string>("padding"));
  PoolSetup p{MakeGeometry(in[0], in[1], in[2], in[3], ksize[0], ksize[1], strides, {1, 1}, same)};
  const Conv2DGeometry& g = p.g;
  const int64_t th = std::max<int64_t>((g.oh - 1) * g.sh + g.kh - g.ih, 0), tw = std::max<int64_t>((g.ow - 1) * g.sw + g.kw - g.iw, 0);
  if (same && (th != 2 * g.pad_top || tw != 2 * g.pad_left)) {
    throw Error(errors::Unimplemented("{}: SAME pooling with uneven padding ({}x{}) is not supported on the GPU yet",
                                      node.Describe(), th, tw));
  }
  return p;
}

template <typename T, bool kMax>
class PoolOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0));
    const Conv2DGeometry g = MakePoolSetup(node(), Dims(x.shape())).g;
    Tensor* y = ctx->allocate_output(0, TensorShape{g.n, g.oh, g.ow, g.c});
    if (y->num_elements() == 0) return;
    TensorDesc xd, yd;
    PoolDesc pd;
    SetNhwc<T>(xd, g.n, g.ih, g.iw, g.c);
    SetNhwc<T>(yd, g.n, g.oh, g.ow, g.c);
    SetPool(pd, g);
    const T alpha = 1, beta = 0;
    std::lock_guard<std::mutex> l(gpu->library_mu());
    WEFT_CUDNN_CHECK(cudnnPoolingForward(gpu->cudnn(), pd.get(), &alpha, xd.get(), x.raw_data(), &beta, yd.get(), y->raw_data()));
  }

  static void SetPool(const PoolDesc& pd, const Conv2DGeometry& g) {
    WEFT_CUDNN_CHECK(cudnnSetPooling2dDescriptor(pd.get(),
                                                 kMax ? CUDNN_POOLING_MAX_DETERMINISTIC : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                                 CUDNN_PROPAGATE_NAN, I(g.kh), I(g.kw), I(g.pad_top), I(g.pad_left), I(g.sh),
                                                 I(g.sw)));
  }
};

// MaxPoolGrad(orig_input, orig_output, grad) and AvgPoolGrad(orig_input_shape, grad). cuDNN's
// backward pass reads y and x (average pooling ignores their values).
template <typename T, bool kMax>
class PoolGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const std::vector<int64_t> in = kMax ? Dims(ctx->input(0).shape()) : HostInts(ctx, 0);
    const Conv2DGeometry g = MakePoolSetup(node(), in).g;
    const Tensor dy = OnDevice(gpu, ctx->input(kMax ? 2 : 1));
    WEFT_REQUIRE(dy.shape() == TensorShape({g.n, g.oh, g.ow, g.c}), "{}: grad {} but the pooled output is [{},{},{},{}]",
                 node().Describe(), dy.shape().ToString(), g.n, g.oh, g.ow, g.c);
    Tensor* dx = ctx->allocate_output(0, TensorShape(in));
    if (dx->num_elements() == 0) return;
    // Average pooling reads neither x nor y: uninitialized scratch of x's shape and dy stand in.
    const Tensor x = kMax ? OnDevice(gpu, ctx->input(0)) : Tensor(dy.dtype(), TensorShape(in), gpu->allocator());
    const Tensor y = kMax ? OnDevice(gpu, ctx->input(1)) : dy;
    TensorDesc xd, yd;
    PoolDesc pd;
    SetNhwc<T>(xd, g.n, g.ih, g.iw, g.c);
    SetNhwc<T>(yd, g.n, g.oh, g.ow, g.c);
    PoolOp<T, kMax>::SetPool(pd, g);
    const T alpha = 1, beta = 0;
    std::lock_guard<std::mutex> l(gpu->library_mu());
    WEFT_CUDNN_CHECK(cudnnPoolingBackward(gpu->cudnn(), pd.get(), &alpha, yd.get(), y.raw_data(), yd.get(), dy.raw_data(),
                                          xd.get(), x.raw_data(), &beta, xd.get(), dx->raw_data()));
  }
};

template <typename T> using MaxPoolOp = PoolOp<T, true>;
template <typename T> using AvgPoolOp = PoolOp<T, false>;
template <typename T> using MaxPoolGradOp = PoolGradOp<T, true>;
template <typename T> using AvgPoolGradOp = PoolGradOp<T, false>;

}  // namespace

void RegisterCudaPoolKernels(KernelRegistry& r) {
  RegisterTyped<MaxPoolOp, float, double>(r, "MaxPool", "T", "GPU");
  RegisterTyped<AvgPoolOp, float, double>(r, "AvgPool", "T", "GPU");
  RegisterTyped<MaxPoolGradOp, float, double>(r, "MaxPoolGrad", "T", "GPU");
  RegisterTyped<AvgPoolGradOp, float, double>(r, "AvgPoolGrad", "T", "GPU");
}

}  // namespace weft
