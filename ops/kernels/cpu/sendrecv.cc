// _Send / _Recv kernels: hand the tensor to the step's rendezvous, or wait for it there.
#include <fmt/format.h>

#include "runtime/rendezvous.h"
#include "graph/graph.h"
#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/sendrecv.h"

namespace weft {

std::string SendRecvKeyOf(const Node& n) {
  RendezvousKey k;
  k.src_device = n.attr<std::string>("send_device");
  k.src_incarnation = static_cast<uint64_t>(n.attr<int64_t>("send_device_incarnation"));
  k.dst_device = n.attr<std::string>("recv_device");
  k.tensor_name = n.attr<std::string>("tensor_name");
  return k.ToString();
}

std::string SendRecvKeyIn(const std::string& root_key, const OpKernelContext& ctx) {
  if (ctx.frame_id() == 0 && ctx.iter_id() == 0) return root_key;
  // The key ends in "0:0" (the root frame's); inside a loop it names the frame and iteration.
  return fmt::format("{}{}:{}", std::string_view(root_key).substr(0, root_key.size() - 3), ctx.frame_id(),
                     ctx.iter_id());
}

Rendezvous* RequireRendezvous(OpKernelContext* ctx) {
  if (ctx->rendezvous() == nullptr) {
    throw Error(errors::FailedPrecondition("{}: the step has no rendezvous (a partitioned graph must be run by Session)",
                                           ctx->node().Describe()));
  }
  return ctx->rendezvous();
}

namespace {

class SendOp : public OpKernel {
 public:
  explicit SendOp(const Node& node) : OpKernel(node), key_(SendRecvKeyOf(node)) {}
  void Compute(OpKernelContext* ctx) override {
    RendezvousArgs args;
    args.memory = ctx->input(0).IsInitialized() && ctx->input(0).buffer() ? ctx->input(0).buffer()->kind()
                                                                           : MemoryKind::kHost;
    // A dead input (a branch not taken) is sent as dead: the Recv's consumers do not run either.
    ThrowIfError(RequireRendezvous(ctx)->Send(SendRecvKeyIn(key_, *ctx), args, ctx->input(0), ctx->input_dead()));
  }

 private:
  std::string key_;
};

class RecvOp : public AsyncOpKernel {
 public:
  explicit RecvOp(const Node& node) : AsyncOpKernel(node), key_(SendRecvKeyOf(node)) {}
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    Rendezvous* r = RequireRendezvous(ctx);
    const std::string describe = ctx->node().Describe();
    r->RecvAsync(SendRecvKeyIn(key_, *ctx), {}, [ctx, done = std::move(done), describe](const Status& s,
                                                                                    const Tensor& value, bool dead) {
      if (!s.ok()) {
        done(s);
        return;
      }
      if (dead) {  // the output stays unset: dead for the executor
        done(Status());
        return;
      }
      if (value.dtype() != ctx->node().output_dtype(0)) {
        done(errors::Internal("{}: received {} but expected dtype {}", describe, value.DebugString(),
                              DTypeName(ctx->node().output_dtype(0))));
        return;
      }
      ctx->set_output(0, value);
      done(Status());
    });
  }

 private:
  std::string key_;
};

}  // namespace

void RegisterSendRecvKernels(KernelRegistry& r) {
  RegisterUntyped<SendOp>(r, "_Send");
  RegisterUntyped<RecvOp>(r, "_Recv");
}

}  // namespace weft
