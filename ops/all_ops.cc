#include "ops/all_ops.h"

#include "ops/kernel.h"
#include "ops/op_def.h"
#include "core/gpu_backend.h"

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
    RegisterLayerNormOps(*r);
    RegisterAttentionOps(*r);
    RegisterSegmentOps(*r);
    RegisterLinalgOps(*r);
    RegisterSignalOps(*r);
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
    RegisterAttentionKernels(*r);
    RegisterSegmentKernels(*r);
    RegisterLinalgKernels(*r);
    RegisterSignalKernels(*r);
    // Device type "GPU" (ops/kernels/cuda/), when the CUDA backend is loaded (core/gpu.h).
    if (const GpuBackend* gpu = LoadGpuBackend()) gpu->register_kernels(*r);
    return r;
  }();
  return *registry;
}

}  // namespace weft
