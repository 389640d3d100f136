#include "ops/all_ops.h"
#include "ops/kernel.h"

namespace weft {
namespace {

class ArgOp : public OpKernel {
 public:
  explicit ArgOp(const Node& n) : OpKernel(n), index_(n.attr<int64_t>("index")) {}
  void Compute(OpKernelContext* ctx) override {
    CallFrame* f = ctx->call_frame();
    if (f == nullptr || index_ >= static_cast<int64_t>(f->args.size())) {
      throw Error(errors::Internal("step has no argument {}", index_));
    }
    ctx->set_output(0, f->args[index_]);
  }

 private:
  int64_t index_;
};

class RetvalOp : public OpKernel {
 public:
  explicit RetvalOp(const Node& n) : OpKernel(n), index_(n.attr<int64_t>("index")) {}
  void Compute(OpKernelContext* ctx) override {
    CallFrame* f = ctx->call_frame();
    if (f == nullptr || index_ >= static_cast<int64_t>(f->rets.size())) {
      throw Error(errors::Internal("step has no result slot {}", index_));
    }
    f->rets[index_] = ctx->input(0);
  }

 private:
  int64_t index_;
};

class ConstOp : public OpKernel {
 public:
  explicit ConstOp(const Node& n) : OpKernel(n), value_(n.attr<Tensor>("value")) {}
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, value_); }

 private:
  Tensor value_;  // shared read-only with consumers: kernels never write their inputs
};

class PlaceholderOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {
    throw Error(errors::InvalidArgument("placeholder '{}' ({}{}) must be fed", node().name(),
                                        DTypeName(node().output_dtype(0)), node().output_shape(0).ToString()));
  }
};

class IdentityOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

// The shape attr was merged into the static shape; this checks the one the step really has, so
// that kernels planned from the static shape never see another.
class EnsureShapeOp : public OpKernel {
 public:
  explicit EnsureShapeOp(const Node& n) : OpKernel(n), shape_(n.attr<TensorShape>("shape")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (!x.shape().IsCompatibleWith(shape_)) {
      throw Error(errors::InvalidArgument("the tensor's shape {} is not compatible with the ensured {}",
                                          x.shape().ToString(), shape_.ToString()));
    }
    ctx->set_output(0, x);
  }

 private:
  TensorShape shape_;
};

class AssertOp : public OpKernel {
 public:
  explicit AssertOp(const Node& n) : OpKernel(n), message_(n.attr<std::string>("message")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& c = ctx->input(0);
    const bool* v = c.data<bool>();
    const int64_t n = c.shape().num_elements();
    for (int64_t i = 0; i < n; ++i) {
      if (!v[i] && c.shape().rank() == 0) throw Error(errors::InvalidArgument("assertion failed: {}", message_));
      if (!v[i]) {
        throw Error(errors::InvalidArgument("assertion failed: {} (element {} of the condition {} is false)", message_,
                                            i, c.shape().ToString()));
      }
    }
  }

 private:
  std::string message_;
};

class NoOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {}
};

}  // namespace

void RegisterFrameworkKernels(KernelRegistry& r) {
  RegisterUntyped<ArgOp>(r, "_Arg");
  RegisterUntyped<RetvalOp>(r, "_Retval");
  RegisterUntyped<ConstOp>(r, "Const");
  RegisterUntyped<PlaceholderOp>(r, "Placeholder");
  RegisterUntyped<IdentityOp>(r, "Identity");
  RegisterUntyped<IdentityOp>(r, "StopGradient");
  RegisterUntyped<EnsureShapeOp>(r, "EnsureShape");
  RegisterUntyped<AssertOp>(r, "Assert");
  RegisterUntyped<NoOpKernel>(r, "NoOp");
#if defined(WEFT_CUDA)
  // These pass tensors along without touching their bytes: the same kernels serve the GPU.
  RegisterUntyped<IdentityOp>(r, "Identity", "GPU");
  RegisterUntyped<IdentityOp>(r, "StopGradient", "GPU");
  RegisterUntyped<EnsureShapeOp>(r, "EnsureShape", "GPU");
  RegisterUntyped<NoOpKernel>(r, "NoOp", "GPU");
#endif
}

}  // namespace weft
