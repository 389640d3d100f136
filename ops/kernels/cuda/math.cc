// GPU kernels of the elementwise math ops (ops/math.cc; the CPU ones are in
// ops/kernels/cpu/math*.cc): binary arithmetic and comparisons with numpy broadcasting, the logical
// ops, unary arithmetic, AddN and Cast, elementwise.cu's kernels. RegisterCudaMathKernels registers
// the whole family: reductions (reduce.cc) and products (matmul.cc) too.
#include <type_traits>

#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
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

void RegisterCudaMathKernels(KernelRegistry& r) {
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
  RegisterFloats<Unary<UnaryKind::kErf>::Op>(r, "Erf");  // exact GELU (gpt_small)
  RegisterFloats<AddNOp>(r, "AddN");
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kBool}) {
    r.Register("Cast", "GPU", "SrcT", t, [](const Node& n) -> std::unique_ptr<OpKernel> { return std::make_unique<CastOp>(n); });
  }
  RegisterCudaReduceKernels(r);
  RegisterCudaMatMulKernels(r);
}

}  // namespace weft
