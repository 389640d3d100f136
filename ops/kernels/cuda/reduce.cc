// GPU kernels of the reductions (ops/math.cc; the CPU ones are in ops/kernels/cpu/reduce.cc): Sum,
// Mean, Max, Min over any axes (keep_dims), SumToShape, ReducedShape (a host output, as Shape's),
// ArgMax / ArgMin (ties to the first index, as the CPU). The device code is reduce.cu's; the shape
// checks are the CPU kernels' (ops/kernels/cpu/math_kernels.h).
#include "ops/kernels/cpu/math_kernels.h"
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {

template <typename T>
void ReduceInto(OpKernelContext* ctx, ReduceKind kind, const Tensor& x, const std::vector<int64_t>& axes,
                const TensorShape& out_shape) {
  GpuContext* gpu = GpuOf(ctx);
  const Tensor dx = OnDevice(gpu, x);
  const ReduceIndexer ri = MakeReduceIndexer(Dims(dx.shape()), axes);
  Tensor* out = ctx->allocate_output(0, out_shape);
  if (ri.reduce_count == 0 && out->num_elements() > 0) {  // an empty reduction: its identity
    WEFT_REQUIRE(kind == ReduceKind::kSum, "{}: max/min/mean of an empty tensor {}", ctx->node().Describe(),
                 x.shape().ToString());
    LaunchFill<T>(out->data<T>(), T(0), out->num_elements(), gpu->compute_stream());
    return;
  }
  // A split reduction's partials (launch.h: ReduceSplits); freed at once, reused in stream order.
  const int64_t splits = ReduceSplits(ri.num_outputs, ri.reduce_count);
  Tensor partials;
  if (splits > 1) partials = Tensor(DTypeOf<T>(), TensorShape{ri.num_outputs * splits}, gpu->allocator());
  LaunchReduce<T>(kind, dx.data<T>(), out->data<T>(), ri, splits > 1 ? partials.data<T>() : nullptr,
                  gpu->compute_stream());
}

template void ReduceInto<float>(OpKernelContext*, ReduceKind, const Tensor&, const std::vector<int64_t>&,
                                const TensorShape&);
template void ReduceInto<double>(OpKernelContext*, ReduceKind, const Tensor&, const std::vector<int64_t>&,
                                 const TensorShape&);

namespace {

template <ReduceKind kKind>
struct Reduce {
  template <typename T>
  class Op : public OpKernel {
   public:
    explicit Op(const Node& n)
        : OpKernel(n), axis_(n.attr<std::vector<int64_t>>("axis")), keep_(n.attr<bool>("keep_dims")) {}
    void Compute(OpKernelContext* ctx) override {
      const Tensor& x = ctx->input(0);
      // The CPU kernels' check: the same bad axes (out of range, repeated) fail with the same message.
      const std::vector<bool> reduced = ReducedMask(x.shape(), axis_);
      std::vector<int64_t> axes;
      TensorShape out;
      for (int i = 0; i < x.rank(); ++i) {
        if (reduced[static_cast<size_t>(i)]) axes.push_back(i);
        if (!reduced[static_cast<size_t>(i)]) out.AddDim(x.dim(i));
        else if (keep_) out.AddDim(1);
      }
      ReduceInto<T>(ctx, kKind, x, axes, out);
    }

   private:
    std::vector<int64_t> axis_;
    bool keep_;
  };
};

// x summed down to the shape it was broadcast from (the gradient of a broadcasting op).
template <typename T>
class SumToShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const std::vector<int64_t> target = HostInts(ctx, 1);
    const int rx = x.rank(), rt = static_cast<int>(target.size());
    std::vector<int64_t> axes;
    bool ok = rt <= rx;
    for (int i = 0; ok && i < rx; ++i) {
      const int k = i - (rx - rt);
      if (k < 0 || target[static_cast<size_t>(k)] != x.dim(i)) {
        ok = k < 0 || target[static_cast<size_t>(k)] == 1;
        axes.push_back(i);
      }
    }
    const TensorShape target_shape(target);
    WEFT_REQUIRE(ok, "cannot sum {} down to {} (it does not broadcast to {})", x.shape().ToString(),
                 target_shape.ToString(), x.shape().ToString());
    if (x.shape() == target_shape) {
      ctx->set_output(0, x);
      return;
    }
    ReduceInto<T>(ctx, ReduceKind::kSum, x, axes, target_shape);
  }
};

// ReducedShape(shape): a host tensor, as Shape's output (its consumers read it on the host).
template <typename T>
class ReducedShapeOp : public OpKernel {
 public:
  explicit ReducedShapeOp(const Node& n) : OpKernel(n), axis_(n.attr<std::vector<int64_t>>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    WEFT_REQUIRE(ctx->input(0).rank() == 1, "shape must be a vector, got shape {}", ctx->input(0).shape().ToString());
    const std::vector<int64_t> dims = ReducedShapeDims(HostInts(ctx, 0), axis_);
    Tensor out(DTypeOf<T>(), TensorShape{static_cast<int64_t>(dims.size())});
    for (size_t i = 0; i < dims.size(); ++i) out.data<T>()[i] = static_cast<T>(dims[i]);
    ctx->set_output(0, out);
  }

 private:
  std::vector<int64_t> axis_;
};

template <typename T, bool kMax>
class ArgOp : public OpKernel {
 public:
  explicit ArgOp(const Node& n) : OpKernel(n), axis_(n.attr<int64_t>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0));
    int64_t p, r, s;
    const std::vector<int64_t> out_dims = ArgReduceDims(x.shape(), axis_, &p, &r, &s);
    Tensor* out = ctx->allocate_output(0, TensorShape(out_dims));
    if (out->dtype() == DType::kInt32) {
      LaunchArgReduce<T, int32_t>(x.data<T>(), out->data<int32_t>(), p, r, s, kMax, gpu->compute_stream());
    } else {
      LaunchArgReduce<T, int64_t>(x.data<T>(), out->data<int64_t>(), p, r, s, kMax, gpu->compute_stream());
    }
  }

 private:
  const int64_t axis_;
};
template <typename T> using ArgMaxOp = ArgOp<T, true>;
template <typename T> using ArgMinOp = ArgOp<T, false>;

}  // namespace

void RegisterCudaReduceKernels(KernelRegistry& r) {
  RegisterFloats<Reduce<ReduceKind::kSum>::Op>(r, "Sum");
  RegisterFloats<Reduce<ReduceKind::kMean>::Op>(r, "Mean");
  RegisterFloats<Reduce<ReduceKind::kMax>::Op>(r, "Max");
  RegisterFloats<Reduce<ReduceKind::kMin>::Op>(r, "Min");
  RegisterFloats<SumToShapeOp>(r, "SumToShape");
  RegisterTyped<ReducedShapeOp, int32_t, int64_t>(r, "ReducedShape", "T", "GPU");
  RegisterTyped<ArgMaxOp, float, double, int32_t, int64_t>(r, "ArgMax", "T", "GPU");
  RegisterTyped<ArgMinOp, float, double, int32_t, int64_t>(r, "ArgMin", "T", "GPU");
}

}  // namespace weft
