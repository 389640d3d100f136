// GPU kernels of the array ops that move whole tensors (ops/array.cc; the CPU ones are in
// ops/kernels/cpu/array.cc): Shape (a host output: its consumers read it on the host), Reshape (the
// same device buffer), Transpose and Tile (one indexed copy, launch.h's CopyIndexer), Concat and
// Split (one cudaMemcpy2DAsync per piece: each piece is a column block of the [outer, axis * inner]
// view), BroadcastTo, Fill, ZerosLike and OnesLike. Size, Rank, ExpandDims and Squeeze touch no
// bytes: their CPU kernels are registered for the GPU too. Gather and GatherGrad are in
// array_index.cc. Shape checks are the CPU kernels' (ops/kernels/cpu/array_kernels.h).
#include "ops/kernels/cpu/array_kernels.h"
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace {

// Shape(x) describes x: a host tensor (consumers read it on the host, a GPU consumer copies it in).
template <typename T>
class ShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const TensorShape& s = ctx->input(0).shape();
    Tensor out(DTypeOf<T>(), TensorShape{s.rank()});
    for (int i = 0; i < s.rank(); ++i) out.data<T>()[i] = static_cast<T>(s.dim(i));
    ctx->set_output(0, out);
  }
};

// Reshape(x, shape): the same device buffer under a new shape (shape read on the host).
class ReshapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ctx->set_output(0, x.Reshaped(ResolveReshape(x.shape(), HostInts(ctx, 1))));
  }
};

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

// BroadcastTo(x, shape): x repeated along the dims where it has size 1 or is missing.
template <typename T>
class BroadcastToOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0));
    const std::vector<int64_t> target = HostInts(ctx, 1), dx = Dims(x.shape());
    WEFT_REQUIRE(BroadcastShape(dx, target) == target, "BroadcastTo: {} does not broadcast to {}", x.shape().ToString(),
                 TensorShape(target).ToString());
    Tensor* out = ctx->allocate_output(0, TensorShape(target));
    LaunchBroadcast<T>(x.data<T>(), out->data<T>(), out->num_elements(), MakeBroadcastIndexer(dx, target),
                       gpu->compute_stream());
  }
};

// Fill(dims, value), ZerosLike(x), OnesLike(x).
template <typename T>
class FillOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const std::string& op = ctx->node().op();
    T value = T(op == "OnesLike" ? 1 : 0);
    TensorShape shape = ctx->input(0).shape();
    if (op == "Fill") {
      shape = TensorShape(HostInts(ctx, 0));
      Tensor v = ctx->input(1);
      WEFT_REQUIRE(v.rank() == 0, "{}: value must be a scalar, got {}", ctx->node().Describe(), v.shape().ToString());
      if (v.memory_kind() == MemoryKind::kDevice) v = gpu->CopyToHost(v);
      value = v.scalar<T>()();
    }
    Tensor* y = ctx->allocate_output(0, shape);
    LaunchFill<T>(y->data<T>(), value, y->num_elements(), gpu->compute_stream());
  }
};

}  // namespace

void RegisterCudaArrayKernels(KernelRegistry& r) {
  RegisterTyped<ShapeOp, int32_t, int64_t>(r, "Shape", "out_type", "GPU");
  RegisterUntyped<ReshapeOp>(r, "Reshape", "GPU");
  RegisterUntyped<TransposeOp>(r, "Transpose", "GPU");
  RegisterUntyped<TileOp>(r, "Tile", "GPU");
  RegisterUntyped<ConcatOp>(r, "Concat", "GPU");
  RegisterUntyped<SplitOp>(r, "Split", "GPU");
  RegisterFloats<BroadcastToOp>(r, "BroadcastTo");
  for (const char* op : {"Fill", "ZerosLike", "OnesLike"}) RegisterFloats<FillOp>(r, op);
  RegisterCudaArrayIndexKernels(r);
}

}  // namespace weft
