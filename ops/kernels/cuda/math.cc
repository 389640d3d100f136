// GPU kernels of the math and nn families that are plain CUDA (ops/kernels/cuda/*.cu): binary
// ops and comparisons with broadcasting, unary ops and activations, BiasAdd, reductions, softmax and its losses,
// batch norm, Cast, Fill. RegisterCudaKernels registers every GPU kernel (this file's and the others').
#include <type_traits>

#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {

static_assert(static_cast<int>(DType::kFloat32) == static_cast<int>(DTypeCode::kFloat32) &&
              static_cast<int>(DType::kFloat64) == static_cast<int>(DTypeCode::kFloat64) &&
              static_cast<int>(DType::kInt32) == static_cast<int>(DTypeCode::kInt32) &&
              static_cast<int>(DType::kInt64) == static_cast<int>(DTypeCode::kInt64) &&
              static_cast<int>(DType::kUInt8) == static_cast<int>(DTypeCode::kUInt8) &&
              static_cast<int>(DType::kBool) == static_cast<int>(DTypeCode::kBool));

std::vector<int64_t> HostInts(OpKernelContext* ctx, int i) {
  Tensor t = ctx->input(i);
  if (t.memory_kind() == MemoryKind::kDevice) t = GpuOf(ctx)->CopyToHost(t);
  std::vector<int64_t> v(static_cast<size_t>(t.num_elements()));
  for (int64_t k = 0; k < t.num_elements(); ++k) v[static_cast<size_t>(k)] = t.ElementAsInt64(k);
  return v;
}

Tensor OnDevice(GpuContext* gpu, const Tensor& t) {
  return t.memory_kind() == MemoryKind::kDevice ? t : gpu->CopyToDevice(t);
}

DeviceFlag::DeviceFlag(GpuContext* gpu) : gpu_(gpu), flag_(DType::kInt32, TensorShape{}, gpu->allocator()) {
  LaunchFill<int32_t>(flag_.data<int32_t>(), 0, 1, gpu->compute_stream());
}

int32_t DeviceFlag::Read() { return gpu_->CopyToHost(flag_).scalar<int32_t>()(); }

BroadcastOperands BroadcastInputs(OpKernelContext* ctx) {
  GpuContext* gpu = GpuOf(ctx);
  BroadcastOperands o{OnDevice(gpu, ctx->input(0)), OnDevice(gpu, ctx->input(1)), {}, {}};
  const std::vector<int64_t> da = Dims(o.a.shape()), db = Dims(o.b.shape());
  o.bi = MakeBroadcastIndexer(da, db);
  o.out_shape = TensorShape(BroadcastShape(da, db));
  return o;
}

namespace {

// Binary ops with numpy broadcasting: arithmetic (Kind = BinaryKind, output T) and the
// comparisons and logical ops (Kind = CompareKind, output bool).
template <typename T, typename Kind, Kind kKind>
class BinaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const BroadcastOperands in = BroadcastInputs(ctx);
    Tensor* out = ctx->allocate_output(0, in.out_shape);
    if constexpr (std::is_same_v<Kind, BinaryKind>) {
      LaunchBinary<T>(kKind, in.a.data<T>(), in.b.data<T>(), out->data<T>(), out->num_elements(), in.bi,
                      GpuOf(ctx)->compute_stream());
    } else {
      LaunchCompare<T>(kKind, in.a.data<T>(), in.b.data<T>(), out->data<bool>(), out->num_elements(), in.bi,
                       GpuOf(ctx)->compute_stream());
    }
  }
};

class LogicalNotOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0));
    Tensor* y = ctx->allocate_output(0, x.shape());
    LaunchLogicalNot(x.data<bool>(), y->data<bool>(), x.num_elements(), gpu->compute_stream());
  }
};

// AddN: out = x0 + x1, then out += xk (elementwise, same shapes, in place on the stream).
template <typename T>
class AddNOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x0 = OnDevice(gpu, ctx->input(0));
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      WEFT_REQUIRE(ctx->input(i).shape() == x0.shape(), "input {} has shape {} but input 0 has {}", i,
                   ctx->input(i).shape().ToString(), x0.shape().ToString());
    }
    if (ctx->num_inputs() == 1) {
      ctx->set_output(0, x0);
      return;
    }
    Tensor* out = ctx->allocate_output(0, x0.shape());
    const BroadcastIndexer same = MakeBroadcastIndexer(Dims(x0.shape()), Dims(x0.shape()));
    const T* acc = x0.data<T>();
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      const Tensor xi = OnDevice(gpu, ctx->input(i));
      LaunchBinary<T>(BinaryKind::kAdd, acc, xi.data<T>(), out->data<T>(), out->num_elements(), same,
                      gpu->compute_stream());
      acc = out->data<T>();
    }
  }
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

template <UnaryKind kKind>
struct Unary {
  template <typename T>
  class Op : public OpKernel {
   public:
    using OpKernel::OpKernel;
    void Compute(OpKernelContext* ctx) override {
      GpuContext* gpu = GpuOf(ctx);
      const Tensor x = OnDevice(gpu, ctx->input(0));
      Tensor* y = ctx->allocate_output(0, x.shape());
      LaunchUnary<T>(kKind, x.data<T>(), y->data<T>(), x.num_elements(), gpu->compute_stream());
    }
  };
};

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

// Reduces x over `axes` into a new tensor of `out_shape` (same element count as the kept dims).
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
  LaunchReduce<T>(kind, dx.data<T>(), out->data<T>(), ri, gpu->compute_stream());
}

template <ReduceKind kKind>
struct Reduce {
  template <typename T>
  class Op : public OpKernel {
   public:
    explicit Op(const Node& n)
        : OpKernel(n), axis_(n.attr<std::vector<int64_t>>("axis")), keep_(n.attr<bool>("keep_dims")) {}
    void Compute(OpKernelContext* ctx) override {
      const Tensor& x = ctx->input(0);
      std::vector<int64_t> axes = axis_;
      if (axes.empty()) {
        for (int i = 0; i < x.rank(); ++i) axes.push_back(i);
      }
      std::vector<bool> reduced(static_cast<size_t>(x.rank()), false);
      for (int64_t a : axes) {
        WEFT_REQUIRE(a >= -x.rank() && a < x.rank(), "{}: axis {} out of range for {}", ctx->node().Describe(), a,
                     x.shape().ToString());
        reduced[static_cast<size_t>(a < 0 ? a + x.rank() : a)] = true;
      }
      TensorShape out;
      for (int i = 0; i < x.rank(); ++i) {
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
class SoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor z = OnDevice(gpu, ctx->input(0)), labels = OnDevice(gpu, ctx->input(1));
    WEFT_REQUIRE(z.rank() == 2 && labels.shape() == z.shape(), "{}: logits {} and labels {} must be [batch, classes]",
                 ctx->node().Describe(), z.shape().ToString(), labels.shape().ToString());
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
    WEFT_REQUIRE(z.rank() == 2 && labels.rank() == 1 && labels.dim(0) == z.dim(0),
                 "{}: logits {} must be [batch, classes] and labels {} [batch]", ctx->node().Describe(),
                 z.shape().ToString(), labels.shape().ToString());
    Tensor* loss = ctx->allocate_output(0, TensorShape{z.dim(0)});
    Tensor* backprop = ctx->allocate_output(1, z.shape());
    DeviceFlag bad(gpu);
    if (labels.dtype() == DType::kInt32) {
      LaunchSparseSoftmaxXent<T, int32_t>(z.data<T>(), labels.data<int32_t>(), loss->data<T>(), backprop->data<T>(),
                                          z.dim(0), z.dim(1), bad.get(), gpu->compute_stream());
    } else {
      LaunchSparseSoftmaxXent<T, int64_t>(z.data<T>(), labels.data<int64_t>(), loss->data<T>(), backprop->data<T>(),
                                          z.dim(0), z.dim(1), bad.get(), gpu->compute_stream());
    }
    // As the CPU kernel: a label outside [0, classes) is an error naming the row.
    const int32_t row = bad.Read();
    WEFT_REQUIRE(row == 0, "{}: label of row {} is outside [0, {})", ctx->node().Describe(), row - 1, z.dim(1));
  }
};

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

class CastOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0));
    const DType dst = ctx->node().attr<DType>("DstT");
    WEFT_REQUIRE(dst != DType::kFloat16 && dst != DType::kBFloat16 && dst != DType::kInvalid,
                 "{}: the GPU Cast converts between float32, float64, int32, int64, uint8 and bool, not to {}",
                 ctx->node().Describe(), DTypeName(dst));
    if (x.dtype() == dst) {
      ctx->set_output(0, x);
      return;
    }
    Tensor* y = ctx->allocate_output(0, x.shape());
    LaunchCast(static_cast<int>(x.dtype()), static_cast<int>(dst), x.raw_data(), y->raw_data(), x.num_elements(),
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

template <template <typename> class K>
void RegisterFloats(KernelRegistry& r, const std::string& op) {
  RegisterTyped<K, float, double>(r, op, "T", "GPU");
}

template <BinaryKind kKind>
struct Binary {
  template <typename T>
  using Op = BinaryOp<T, BinaryKind, kKind>;
};

template <CompareKind kKind>
struct Compare {
  template <typename T>
  using Op = BinaryOp<T, CompareKind, kKind>;
};

}  // namespace

void RegisterCudaKernels(KernelRegistry& r) {
  RegisterFloats<Binary<BinaryKind::kAdd>::Op>(r, "Add");
  RegisterFloats<Binary<BinaryKind::kSub>::Op>(r, "Sub");
  RegisterFloats<Binary<BinaryKind::kMul>::Op>(r, "Mul");
  RegisterFloats<Binary<BinaryKind::kDiv>::Op>(r, "Div");
  RegisterFloats<Binary<BinaryKind::kPow>::Op>(r, "Pow");
  RegisterFloats<Binary<BinaryKind::kMaximum>::Op>(r, "Maximum");
  RegisterFloats<Binary<BinaryKind::kMinimum>::Op>(r, "Minimum");
#define WEFT_NUMBERS float, double, int32_t, int64_t
  RegisterTyped<Compare<CompareKind::kEqual>::Op, WEFT_NUMBERS, bool>(r, "Equal", "T", "GPU");
  RegisterTyped<Compare<CompareKind::kNotEqual>::Op, WEFT_NUMBERS, bool>(r, "NotEqual", "T", "GPU");
  RegisterTyped<Compare<CompareKind::kLess>::Op, WEFT_NUMBERS>(r, "Less", "T", "GPU");
  RegisterTyped<Compare<CompareKind::kLessEqual>::Op, WEFT_NUMBERS>(r, "LessEqual", "T", "GPU");
  RegisterTyped<Compare<CompareKind::kGreater>::Op, WEFT_NUMBERS>(r, "Greater", "T", "GPU");
  RegisterTyped<Compare<CompareKind::kGreaterEqual>::Op, WEFT_NUMBERS>(r, "GreaterEqual", "T", "GPU");
#undef WEFT_NUMBERS
  RegisterUntyped<Compare<CompareKind::kLogicalAnd>::Op<bool>>(r, "LogicalAnd", "GPU");
  RegisterUntyped<Compare<CompareKind::kLogicalOr>::Op<bool>>(r, "LogicalOr", "GPU");
  RegisterUntyped<LogicalNotOp>(r, "LogicalNot", "GPU");
  RegisterFloats<Unary<UnaryKind::kNeg>::Op>(r, "Neg");
  RegisterFloats<Unary<UnaryKind::kAbs>::Op>(r, "Abs");
  RegisterFloats<Unary<UnaryKind::kSquare>::Op>(r, "Square");
  RegisterFloats<Unary<UnaryKind::kSqrt>::Op>(r, "Sqrt");
  RegisterFloats<Unary<UnaryKind::kRsqrt>::Op>(r, "Rsqrt");
  RegisterFloats<Unary<UnaryKind::kExp>::Op>(r, "Exp");
  RegisterFloats<Unary<UnaryKind::kLog>::Op>(r, "Log");
  RegisterFloats<Unary<UnaryKind::kReciprocal>::Op>(r, "Reciprocal");
  RegisterFloats<Unary<UnaryKind::kRelu>::Op>(r, "Relu");
  RegisterFloats<Unary<UnaryKind::kSigmoid>::Op>(r, "Sigmoid");
  RegisterFloats<Unary<UnaryKind::kTanh>::Op>(r, "Tanh");
  RegisterFloats<ActivationGrad<ActivationGradKind::kReluGrad>::Op>(r, "ReluGrad");
  RegisterFloats<ActivationGrad<ActivationGradKind::kSigmoidGrad>::Op>(r, "SigmoidGrad");
  RegisterFloats<ActivationGrad<ActivationGradKind::kTanhGrad>::Op>(r, "TanhGrad");
  RegisterFloats<AddNOp>(r, "AddN");
  RegisterFloats<BroadcastToOp>(r, "BroadcastTo");
  RegisterFloats<BiasAddOp>(r, "BiasAdd");
  RegisterFloats<BiasAddGradOp>(r, "BiasAddGrad");
  RegisterFloats<Reduce<ReduceKind::kSum>::Op>(r, "Sum");
  RegisterFloats<Reduce<ReduceKind::kMean>::Op>(r, "Mean");
  RegisterFloats<Reduce<ReduceKind::kMax>::Op>(r, "Max");
  RegisterFloats<Reduce<ReduceKind::kMin>::Op>(r, "Min");
  RegisterFloats<SumToShapeOp>(r, "SumToShape");
  RegisterFloats<SoftmaxOp>(r, "Softmax");
  RegisterFloats<SoftmaxXentOp>(r, "SoftmaxCrossEntropyWithLogits");
  RegisterFloats<SparseSoftmaxXentOp>(r, "SparseSoftmaxCrossEntropyWithLogits");
  RegisterFloats<FusedBatchNormOp>(r, "FusedBatchNorm");
  RegisterFloats<FusedBatchNormGradOp>(r, "FusedBatchNormGrad");
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kBool}) {
    r.Register("Cast", "GPU", "SrcT", t, [](const Node& n) -> std::unique_ptr<OpKernel> { return std::make_unique<CastOp>(n); });
  }
  for (const char* op : {"Fill", "ZerosLike", "OnesLike"}) RegisterFloats<FillOp>(r, op);
  RegisterCudaMatMulKernels(r);
  RegisterCudaNnKernels(r);
  RegisterCudaStateKernels(r);
  RegisterCudaArrayKernels(r);
}

}  // namespace weft
