#include "ops/all_ops.h"

#include "ops/kernel.h"
#include "ops/op_def.h"
#if defined(WEFT_CUDA)
#include "ops/kernels/cuda/gpu_kernel.h"
#endif

namespace weft {

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();  // never destroyed: nodes point at its OpDefs
    RegisterFrameworkOps(*r);
    RegisterStateOps(*r);
    RegisterMathOps(*r);
    RegisterArrayOps(*r);
    RegisterNnOps(*r);
    RegisterRandomOps(*r);
    RegisterOptimizerOps(*r);
    RegisterSendRecvOps(*r);
    RegisterCollectiveOps(*r);
    RegisterSearchOps(*r);
    RegisterImageOps(*r);
    RegisterControlOps(*r);
    RegisterRnnOps(*r);
    return r;
  }();
  return *registry;
}

KernelRegistry& KernelRegistry::Global() {
  static KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    RegisterFrameworkKernels(*r);
    RegisterStateKernels(*r);
    RegisterMathKernels(*r);
    RegisterArrayKernels(*r);
    RegisterNnKernels(*r);
    RegisterRandomKernels(*r);
    RegisterOptimizerKernels(*r);
    RegisterSendRecvKernels(*r);
    RegisterCollectiveKernels(*r);
    RegisterSearchKernels(*r);
    RegisterImageKernels(*r);
    RegisterControlKernels(*r);
    RegisterRnnKernels(*r);
#if defined(WEFT_CUDA)
    RegisterCudaKernels(*r);  // device type "GPU" (ops/kernels/cuda/)
#endif
    return r;
  }();
  return *registry;
}

}  // namespace weft
