// Control-flow kernels (ops/control.cc). They only forward tensors (never copying them): the
// executor routes the results between frames and iterations and treats an unset output of
// Switch or Merge as dead (graph/executor_frames.h).
#include "ops/all_ops.h"
#include "ops/kernel.h"

#include <map>
#include <mutex>

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

// A LoopStack's storage. The handle tensor is an int64 scalar over a HandleBlock: `tag` is the
// block's address mixed with a constant, so a handle made here is told apart from any other int64
// scalar (a fed or computed one is InvalidArgument, never a read through a made-up pointer).
struct StackState {
  std::mutex mu;
  std::map<int32_t, Tensor> values;  // by forward iteration
};
struct alignas(kTensorAlignment) HandleBlock {
  int64_t tag;
  StackState* state;
};
constexpr uint64_t kStackTag = 0x5745465453544b21ull;  // "WEFTSTK!"

int64_t TagOf(const HandleBlock* b) { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(b) ^ kStackTag); }

StackState* StackOf(const OpKernelContext* ctx) {
  const Tensor& h = ctx->input(0);
  const std::shared_ptr<Buffer>& buf = h.buffer();
  const bool ok = h.dtype() == DType::kInt64 && h.shape().rank() == 0 && buf && buf->allocator() == nullptr &&
                  buf->size() == sizeof(HandleBlock) &&
                  static_cast<const HandleBlock*>(buf->data())->tag == TagOf(static_cast<const HandleBlock*>(buf->data()));
  WEFT_REQUIRE(ok, "{}: `handle` is not a stack made by a LoopStack node in this process (got {})", ctx->node().op(),
               h.DebugString());
  return static_cast<const HandleBlock*>(buf->data())->state;
}

int32_t IndexOf(const OpKernelContext* ctx) {
  const Tensor& i = ctx->input(1);
  WEFT_REQUIRE(i.dtype() == DType::kInt32 && i.shape().rank() == 0, "{}: `index` must be a scalar int32, got {}",
               ctx->node().op(), i.DebugString());
  const int32_t k = *i.data<int32_t>();
  WEFT_REQUIRE(k >= 0, "{}: `index` must be >= 0, got {}", ctx->node().op(), k);
  return k;
}

class LoopStackOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    auto* block = new HandleBlock{0, new StackState};
    block->tag = TagOf(block);
    auto buf = std::make_shared<Buffer>(block, sizeof(HandleBlock), MemoryKind::kHost, [block] {
      delete block->state;
      delete block;
    });
    ctx->set_output(0, Tensor::FromBuffer(DType::kInt64, TensorShape{}, std::move(buf)));
  }
};

class LoopStackPushOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    // A dead input (a cond branch not taken, the loop's last iteration): nothing to keep. The
    // executor runs this kernel anyway, so that its control edges stay live.
    if (ctx->input_dead()) return;
    StackState* st = StackOf(ctx);
    const int32_t k = IndexOf(ctx);
    {
      std::lock_guard<std::mutex> l(st->mu);
      WEFT_REQUIRE(st->values.emplace(k, ctx->input(2)).second, "LoopStackPush: index {} was pushed twice", k);
    }
    ctx->set_output(0, ctx->input(2));
  }
};

class LoopStackPopOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    StackState* st = StackOf(ctx);
    const int32_t k = IndexOf(ctx);
    Tensor v;
    {
      std::lock_guard<std::mutex> l(st->mu);
      auto it = st->values.find(k);
      if (it == st->values.end() && ctx->node().attr<bool>("absent_is_dead")) return;  // output dead
      WEFT_REQUIRE(it != st->values.end(), "LoopStackPop: nothing was pushed under index {} ({} values held)", k,
                   st->values.size());
      v = std::move(it->second);
      st->values.erase(it);
    }
    const DType want = ctx->node().attr<DType>("T");
    const TensorShape shape = ctx->node().attr<TensorShape>("elem_shape");
    WEFT_REQUIRE(v.dtype() == want && shape.IsCompatibleWith(v.shape()),
                 "LoopStackPop: the value under index {} is {}, but the node pops {} {}", k, v.DebugString(),
                 DTypeName(want), shape.ToString());
    ctx->set_output(0, std::move(v));
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
  RegisterUntyped<LoopStackOp>(r, "LoopStack");
  RegisterUntyped<LoopStackPushOp>(r, "LoopStackPush");
  RegisterUntyped<LoopStackPopOp>(r, "LoopStackPop");
}

}  // namespace weft
