// GPU kernels of the array ops: Transpose and Tile (one indexed copy,
// launch.h's CopyIndexer), Concat and Split (one cudaMemcpy2DAsync per piece: each piece is a
// column block of the [outer, axis * inner] view), GatherGrad (atomic scatter-add), ReducedShape
// (a host output, as Shape's), ArgMax/ArgMin.
// Shape checks are the CPU kernels' (ops/kernels/cpu/array_kernels.h, math_kernels.h).
#include <fmt/ranges.h>

#include "ops/kernels/cpu/array_kernels.h"
#include "ops/kernels/cpu/math_kernels.h"
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace {

size_t CopyableElementSize(const OpKernelContext* ctx, const Tensor& x) {
  const size_t esz = DTypeSize(x.dtype());
  WEFT_REQUIRE(esz == 1 || esz == 2 || esz == 4 || esz == 8, "{}: the GPU kernel copies elements of 1, 2, 4 or 8 "
               "bytes, not {} ({})", ctx->node().Describe(), DTypeName(x.dtype()), esz);
  return esz;
}

class TransposeOp : public OpKernel {
 public:
  explicit TransposeOp(const Node& n) : OpKernel(n), perm_(n.attr<std::vector<int64_t>>("perm")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0));
    bool identity;
    const std::vector<int64_t> dims = TransposeDims(x.shape(), perm_, &identity);
    if (identity) return ctx->set_output(0, x);
    const size_t esz = CopyableElementSize(ctx, x);
    Tensor* y = ctx->allocate_output(0, TensorShape(dims));
    LaunchIndexedCopy(x.raw_data(), y->raw_data(), y->num_elements(), esz, MakeTransposeIndexer(Dims(x.shape()), perm_),
                      gpu->compute_stream());
  }

 private:
  const std::vector<int64_t> perm_;
};

class TileOp : public OpKernel {
 public:
  explicit TileOp(const Node& n) : OpKernel(n), multiples_(n.attr<std::vector<int64_t>>("multiples")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0));
    const std::vector<int64_t> dims = TileDims(x.shape(), multiples_);
    const size_t esz = CopyableElementSize(ctx, x);
    Tensor* y = ctx->allocate_output(0, TensorShape(dims));
    LaunchIndexedCopy(x.raw_data(), y->raw_data(), y->num_elements(), esz, MakeTileIndexer(Dims(x.shape()), multiples_),
                      gpu->compute_stream());
  }

 private:
  const std::vector<int64_t> multiples_;
};

// The [outer, width] block at column `col` of `big` (rows of big_width elements) from or into `part`.
void CopyColumns(GpuContext* gpu, const Tensor& part, const Tensor& big, int64_t outer, int64_t width, int64_t col,
                 int64_t big_width, bool into_big) {
  if (outer == 0 || width == 0) return;
  const size_t esz = DTypeSize(big.dtype());
  char* big_ptr = static_cast<char*>(big.raw_data()) + static_cast<size_t>(col) * esz;
  const size_t big_pitch = static_cast<size_t>(big_width) * esz, pitch = static_cast<size_t>(width) * esz;
  if (into_big) {
    WEFT_CUDA_CHECK(cudaMemcpy2DAsync(big_ptr, big_pitch, part.raw_data(), pitch, pitch, static_cast<size_t>(outer),
                                      cudaMemcpyDeviceToDevice, gpu->compute_stream()));
  } else {
    WEFT_CUDA_CHECK(cudaMemcpy2DAsync(part.raw_data(), pitch, big_ptr, big_pitch, pitch, static_cast<size_t>(outer),
                                      cudaMemcpyDeviceToDevice, gpu->compute_stream()));
  }
}

class ConcatOp : public OpKernel {
 public:
  explicit ConcatOp(const Node& n) : OpKernel(n), axis_(n.attr<int64_t>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    int axis;
    int64_t outer, inner;
    const std::vector<int64_t> dims = ConcatDims(ctx, axis_, &axis, &outer, &inner);
    Tensor* y = ctx->allocate_output(0, TensorShape(dims));
    int64_t col = 0;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor xi = OnDevice(gpu, ctx->input(i));
      const int64_t width = xi.dim(axis) * inner;
      CopyColumns(gpu, xi, *y, outer, width, col, dims[static_cast<size_t>(axis)] * inner, true);
      col += width;
    }
  }

 private:
  const int64_t axis_;
};

class SplitOp : public OpKernel {
 public:
  explicit SplitOp(const Node& n)
      : OpKernel(n), axis_(n.attr<int64_t>("axis")), num_split_(n.attr<int64_t>("num_split")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0));
    const int axis = SplitAxis(x.shape(), axis_, num_split_);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; ++k) outer *= x.dim(k);
    for (int k = axis + 1; k < x.rank(); ++k) inner *= x.dim(k);
    const int64_t size = x.dim(axis) / num_split_;
    for (int64_t i = 0; i < num_split_; ++i) {
      std::vector<int64_t> dims = x.shape().dims();
      dims[static_cast<size_t>(axis)] = size;
      Tensor* y = ctx->allocate_output(static_cast<int>(i), TensorShape(dims));
      CopyColumns(gpu, *y, x, outer, size * inner, i * size * inner, x.dim(axis) * inner, false);
    }
  }

 private:
  const int64_t axis_, num_split_;
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
    DeviceFlag bad(gpu);
    if (indices.dtype() == DType::kInt32) {
      LaunchGatherGrad<T, int32_t>(dy.data<T>(), indices.data<int32_t>(), dx->data<T>(), g.outer,
                                   indices.num_elements(), g.inner, g.n, bad.get(), gpu->compute_stream());
    } else {
      LaunchGatherGrad<T, int64_t>(dy.data<T>(), indices.data<int64_t>(), dx->data<T>(), g.outer,
                                   indices.num_elements(), g.inner, g.n, bad.get(), gpu->compute_stream());
    }
    const int32_t pos = bad.Read();
    WEFT_REQUIRE(pos == 0, "GatherGrad: indices[{}] is out of range [0, {}) for params of shape {}", pos - 1, g.n,
                 shape.ToString());
  }

 private:
  const int64_t axis_;
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

void RegisterCudaArrayKernels(KernelRegistry& r) {
  RegisterUntyped<TransposeOp>(r, "Transpose", "GPU");
  RegisterUntyped<TileOp>(r, "Tile", "GPU");
  RegisterUntyped<ConcatOp>(r, "Concat", "GPU");
  RegisterUntyped<SplitOp>(r, "Split", "GPU");
  RegisterTyped<GatherGradOp, float, double>(r, "GatherGrad", "T", "GPU");
  RegisterTyped<ReducedShapeOp, int32_t, int64_t>(r, "ReducedShape", "T", "GPU");
  RegisterTyped<ArgMaxOp, float, double, int32_t, int64_t>(r, "ArgMax", "T", "GPU");
  RegisterTyped<ArgMinOp, float, double, int32_t, int64_t>(r, "ArgMin", "T", "GPU");
}

}  // namespace weft
