// GPU kernels of the framework ops (ops/framework.cc): Const, copied to the device once per
// kernel. Identity, StopGradient and NoOp touch no bytes: their CPU kernels are registered for
// the GPU too (ops/kernels/cpu/framework.cc).
#include <mutex>

#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace {

class ConstOp : public OpKernel {
 public:
  explicit ConstOp(const Node& n) : OpKernel(n), host_(n.attr<Tensor>("value")) {}
  void Compute(OpKernelContext* ctx) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!device_.IsInitialized()) device_ = GpuOf(ctx)->CopyToDevice(host_);
    ctx->set_output(0, device_);
  }

 private:
  Tensor host_;
  std::mutex mu_;
  Tensor device_;  // guarded by mu_; read-only once made
};

}  // namespace

void RegisterCudaFrameworkKernels(KernelRegistry& r) { RegisterUntyped<ConstOp>(r, "Const", "GPU"); }

}  // namespace weft
