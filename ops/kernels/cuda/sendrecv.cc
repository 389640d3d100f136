// GPU _Send / _Recv (ops/sendrecv.cc): _Send on a GPU copies the tensor to pinned host memory on
// the device-to-host stream (after the compute work queued so far) and hands the host tensor to the
// rendezvous; _Recv on a GPU takes the host tensor and copies it in on the host-to-device stream,
// ordered before later compute work by an event, unless the pair is marked `_host_memory` (int
// shapes, indices, labels: graph/partition.h): those stay on the host, where the GPU kernels read
// shapes and check indices without waiting for the device, and copy in only what they use there.
// Across processes the UCX rendezvous then carries host memory.
#include "runtime/rendezvous.h"
#include "ops/kernels/cuda/gpu_kernel.h"
#include "ops/kernels/sendrecv.h"

namespace weft {
namespace {

class GpuSendOp : public OpKernel {
 public:
  explicit GpuSendOp(const Node& n) : OpKernel(n), key_(SendRecvKeyOf(n)) {}
  void Compute(OpKernelContext* ctx) override {
    Tensor t = ctx->input(0);
    if (t.IsInitialized() && t.memory_kind() == MemoryKind::kDevice) t = GpuOf(ctx)->CopyToHost(t);
    RendezvousArgs args;
    args.memory = t.memory_kind();
    ThrowIfError(RequireRendezvous(ctx)->Send(SendRecvKeyIn(key_, *ctx), args, t, ctx->input_dead()));
  }

 private:
  std::string key_;
};

class GpuRecvOp : public AsyncOpKernel {
 public:
  explicit GpuRecvOp(const Node& n)
      : AsyncOpKernel(n),
        key_(SendRecvKeyOf(n)),
        host_memory_(n.has_attr("_host_memory") && n.attr<bool>("_host_memory")) {}
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    Rendezvous* r = RequireRendezvous(ctx);
    GpuContext* gpu = GpuOf(ctx);
    r->RecvAsync(SendRecvKeyIn(key_, *ctx), {}, [this, ctx, gpu, done = std::move(done)](const Status& s,
                                                                                      const Tensor& value, bool dead) {
      if (!s.ok()) return done(s);
      if (dead) return done(Status());  // the output stays unset: dead for the executor
      if (value.dtype() != ctx->node().output_dtype(0)) {
        return done(errors::Internal("{}: received {} but expected dtype {}", ctx->node().Describe(),
                                     value.DebugString(), DTypeName(ctx->node().output_dtype(0))));
      }
      try {
        const bool keep = host_memory_ || value.memory_kind() == MemoryKind::kDevice;
        ctx->set_output(0, keep ? value : gpu->CopyToDevice(value));
      } catch (const Error& e) {
        return done(e.status().WithContext(ctx->node().Describe()));
      }
      done(Status());
    });
  }

 private:
  std::string key_;
  bool host_memory_;
};

}  // namespace

void RegisterCudaSendRecvKernels(KernelRegistry& r) {
  RegisterUntyped<GpuSendOp>(r, "_Send", "GPU");
  RegisterUntyped<GpuRecvOp>(r, "_Recv", "GPU");
}

}  // namespace weft
