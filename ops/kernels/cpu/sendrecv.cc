// _Send / _Recv kernels: hand the tensor to the step's rendezvous, or wait for it there.
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
    ThrowIfError(RequireRendezvous(ctx)->Send(key_, args, ctx->input(0), /*is_dead=*/false));
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
    r->RecvAsync(key_, {}, [ctx, done = std::move(done), describe](const Status& s, const Tensor& value, bool) {
      if (!s.ok()) {
        done(s);
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
