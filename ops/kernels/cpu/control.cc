// Control-flow kernels (ops/control.cc). They only forward tensors (never copying them): the
// executor routes the results between frames and iterations and treats an unset output of
// Switch or Merge as dead (graph/executor_frames.h).
#include "ops/all_ops.h"
#include "ops/kernel.h"

namespace weft {
namespace {

// Enter, Exit, NextIteration, LoopCond: output 0 = input 0.
class ForwardOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

class LoopCondOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& p = ctx->input(0);
    WEFT_REQUIRE(p.shape().rank() == 0, "LoopCond's input must be a scalar bool, got {}", p.DebugString());
    ctx->set_output(0, p);
  }
};

// data to output_true when pred, else to output_false; the other output stays unset (dead).
class SwitchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& pred = ctx->input(1);
    WEFT_REQUIRE(pred.shape().rank() == 0, "Switch's pred must be a scalar bool, got {}", pred.DebugString());
    ctx->set_output(*pred.data<bool>() ? 1 : 0, ctx->input(0));
  }
};

// The first live (set) input and its index; both outputs unset (dead) when none is live.
class MergeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (!ctx->input(i).IsInitialized()) continue;
      ctx->set_output(0, ctx->input(i));
      ctx->set_output(1, Tensor::Scalar<int32_t>(i));
      return;
    }
  }
};

}  // namespace

void RegisterControlKernels(KernelRegistry& r) {
  for (const char* op : {"Enter", "Exit", "NextIteration"}) {
    r.Register(op, "CPU", "", DType::kInvalid, [](const Node& n) -> std::unique_ptr<OpKernel> {
      return std::make_unique<ForwardOp>(n);
    });
  }
  RegisterUntyped<LoopCondOp>(r, "LoopCond");
  RegisterUntyped<SwitchOp>(r, "Switch");
  RegisterUntyped<MergeOp>(r, "Merge");
}

}  // namespace weft
