// GPU kernels of the array ops that address parts of a tensor (ops/array.cc; the CPU ones are in
// ops/kernels/cpu/array_index.cc): Gather and GatherGrad (atomic scatter-add: repeated indices
// accumulate; with SessionOptions::gpu.deterministic, in index order), train.cu's kernels. Bad
// indices fail with the CPU kernel's InvalidArgument: checked on the host when they are in host
// memory, else found on the device (IndexCheck, gpu_kernel.h).
#include "ops/kernels/cpu/array_kernels.h"
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace {

// Gather(params, indices) along attr axis; an index out of range is InvalidArgument naming its
// position (checked after the kernel, which writes zeros there).
template <typename T>
class GatherOp : public OpKernel {
 public:
  explicit GatherOp(const Node& n) : OpKernel(n), axis_(n.attr<int64_t>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor params = OnDevice(gpu, ctx->input(0)), indices = OnDevice(gpu, ctx->input(1));
    const GatherDims g = MakeGatherDims(params.shape(), indices.shape(), axis_, "Gather");
    Tensor* y = ctx->allocate_output(0, TensorShape(g.out_dims));
    if (y->num_elements() == 0) return;
    IndexCheck bad(gpu, ctx->input(1), [&](const Tensor& host) { ReadIndices(host, g.n, "Gather", params.shape()); });
    if (indices.dtype() == DType::kInt32) {
      LaunchGather<T, int32_t>(params.data<T>(), indices.data<int32_t>(), y->data<T>(), g.outer, indices.num_elements(),
                               g.inner, g.n, bad.flag(), gpu->compute_stream());
    } else {
      LaunchGather<T, int64_t>(params.data<T>(), indices.data<int64_t>(), y->data<T>(), g.outer, indices.num_elements(),
                               g.inner, g.n, bad.flag(), gpu->compute_stream());
    }
    bad.Finish();
  }

 private:
  const int64_t axis_;
};

// GatherGrad(dy, indices, params_shape): zeros of params_shape with dy's rows added at the indices.
template <typename T>
class GatherGradOp : public OpKernel {
 public:
  explicit GatherGradOp(const Node& n) : OpKernel(n), axis_(n.attr<int64_t>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor dy = OnDevice(gpu, ctx->input(0)), indices = OnDevice(gpu, ctx->input(1));
    const TensorShape shape(HostInts(ctx, 2));
    const GatherDims g = MakeGatherDims(shape, indices.shape(), axis_, "GatherGrad");
    WEFT_REQUIRE(dy.shape() == TensorShape(g.out_dims), "GatherGrad: dy has shape {}, expected {}",
                 dy.shape().ToString(), TensorShape(g.out_dims).ToString());
    Tensor* dx = ctx->allocate_output(0, shape);
    if (dx->num_elements() == 0) return;
    WEFT_CUDA_CHECK(cudaMemsetAsync(dx->raw_data(), 0, dx->bytes(), gpu->compute_stream()));
    if (dy.num_elements() == 0) return;
    IndexCheck bad(gpu, ctx->input(1), [&](const Tensor& host) { ReadIndices(host, g.n, "GatherGrad", shape); });
    const bool deterministic = ctx->device().gpu_options.deterministic;  // SessionOptions::gpu
    if (indices.dtype() == DType::kInt32) {
      LaunchGatherGrad<T, int32_t>(dy.data<T>(), indices.data<int32_t>(), dx->data<T>(), g.outer,
                                   indices.num_elements(), g.inner, g.n, deterministic, bad.flag(),
                                   gpu->compute_stream());
    } else {
      LaunchGatherGrad<T, int64_t>(dy.data<T>(), indices.data<int64_t>(), dx->data<T>(), g.outer,
                                   indices.num_elements(), g.inner, g.n, deterministic, bad.flag(),
                                   gpu->compute_stream());
    }
    bad.Finish();
  }

 private:
  const int64_t axis_;
};

}  // namespace

void RegisterCudaArrayIndexKernels(KernelRegistry& r) {
  RegisterTyped<GatherOp, float, double>(r, "Gather", "T", "GPU");
  RegisterTyped<GatherGradOp, float, double>(r, "GatherGrad", "T", "GPU");
}

}  // namespace weft
