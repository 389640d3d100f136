// Helpers of the host side of the GPU kernels (ops/kernels/cuda/*.cc): the device's context, typed
// pointers to device memory, and the few host reads a GPU kernel needs (shape vectors).
//
//   GpuContext* gpu = GpuOf(ctx);                     // throws unless the kernel runs on a GPU
//   const float* x = DevicePtr<float>(ctx->input(0));
//   std::vector<int64_t> dims = HostInts(ctx, 0);     // a small int tensor, copied if on the device
//
// GPU kernels queue their work on the compute stream and return: the next kernel on the device
// follows in stream order, and copies to other streams join it by events (core/cuda/gpu_context.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda/gpu_context.h"
#include "runtime/collectives/reduce.h"
#include "ops/kernel.h"
#include "ops/kernels/cuda/cuda_kernels.h"

namespace weft {

// Every GPU kernel (gpu_kernel.cc), family by family as the CPU kernels (ops/all_ops.cc): each
// op's GPU kernel is in the file of ops/kernels/cuda/ named like the file of its CPU kernel.
void RegisterCudaKernels(KernelRegistry& r);
void RegisterCudaFrameworkKernels(KernelRegistry& r);  // framework.cc: Const
void RegisterCudaStateKernels(KernelRegistry& r);      // state.cc: Assign, AssignAdd, AssignSub
void RegisterCudaMathKernels(KernelRegistry& r);       // math.cc: elementwise, comparisons, Cast, AddN; and:
void RegisterCudaReduceKernels(KernelRegistry& r);     //   reduce.cc: Sum .. Min, SumToShape, ReducedShape, ArgMax
void RegisterCudaMatMulKernels(KernelRegistry& r);     //   matmul.cc: MatMul, BatchMatMul (cuBLAS)
void RegisterCudaArrayKernels(KernelRegistry& r);      // array.cc: Shape, Reshape, Transpose .. Fill; and:
void RegisterCudaArrayIndexKernels(KernelRegistry& r); //   array_index.cc: Gather, GatherGrad
void RegisterCudaNnKernels(KernelRegistry& r);         // nn.cc: activations, BiasAdd, softmax, losses; and:
void RegisterCudaConvKernels(KernelRegistry& r);       //   conv.cc: Conv2D and its gradients (cuDNN)
void RegisterCudaPoolKernels(KernelRegistry& r);       //   pool.cc: MaxPool, AvgPool and their gradients (cuDNN)
void RegisterCudaBatchNormKernels(KernelRegistry& r);  //   batchnorm.cc: FusedBatchNorm(Grad)
void RegisterCudaRandomKernels(KernelRegistry& r);     // random.cc: RandomUniform .. TruncatedNormal, Dropout
void RegisterCudaOptimizerKernels(KernelRegistry& r);  // optimizer.cc: ApplyGradientDescent, ApplyMomentum, ApplyAdam
void RegisterCudaSendRecvKernels(KernelRegistry& r);   // sendrecv.cc: _Send, _Recv
void RegisterCudaAttentionKernels(KernelRegistry& r);  // attention.cc: FusedCausalAttention(Grad)

// The collectives' merges on `gpu` (collective.cc; the GPU collective kernels use it).
std::shared_ptr<const Reducer> NewCudaReducer(GpuContext* gpu);

// The kernel's GPU, made current on the calling thread: the executor's threads run kernels of
// every device, launches and library calls go to the current device's context, and a kernel's
// streams are its own GPU's. Every GPU kernel calls it before its first CUDA call.
inline GpuContext* GpuOf(const OpKernelContext* ctx) {
  if (ctx->device().gpu == nullptr) {
    throw Error(errors::Internal("{}: a GPU kernel runs on {}, which has no GPU context", ctx->node().Describe(),
                                 ctx->device().device_name));
  }
  ctx->device().gpu->Activate();
  return ctx->device().gpu;
}

template <typename T>
const T* DevicePtr(const Tensor& t) {
  return t.data<T>();
}
template <typename T>
T* MutableDevicePtr(Tensor* t) {
  return t->data<T>();
}

inline std::vector<int64_t> Dims(const TensorShape& s) {
  std::vector<int64_t> d(static_cast<size_t>(s.rank()));
  for (int i = 0; i < s.rank(); ++i) d[static_cast<size_t>(i)] = s.dim(i);
  return d;
}

// The values of input i (int32 or int64), read on the host; a device tensor is copied first
// (after the compute work queued so far).
std::vector<int64_t> HostInts(OpKernelContext* ctx, int i);

// A device tensor on `gpu` with t's values: t itself when it is already there.
Tensor OnDevice(GpuContext* gpu, const Tensor& t);

// Inputs 0 and 1 of a broadcasting binary op on the device, their index map and the output shape
// (throws InvalidArgument naming both shapes when they do not broadcast).
struct BroadcastOperands {
  Tensor a, b;
  BroadcastIndexer bi;
  TensorShape out_shape;
};
BroadcastOperands BroadcastInputs(OpKernelContext* ctx);

// A zeroed device int32 that kernels set on bad input (gather and sparse losses); Check reads it
// back after the kernel and throws InvalidArgument with `what(value)` when it is not zero.
class DeviceFlag {
 public:
  explicit DeviceFlag(GpuContext* gpu);
  int32_t* get() { return flag_.data<int32_t>(); }
  int32_t Read();  // waits for the compute stream

 private:
  GpuContext* gpu_;
  Tensor flag_;
};

// The check of an int input (Gather's indices, a sparse loss's labels) that the CPU kernel rejects
// with `check(host tensor)` (which throws). An input in host memory (fed, or received with
// `_host_memory`) is checked at construction, before the launch, and the kernel gets no flag:
// nothing waits for the device. A device-resident input gets a DeviceFlag the kernel sets; Finish
// reads it (waiting for the compute stream) and, when set, runs `check` on a host copy so the
// error is the CPU kernel's.
class IndexCheck {
 public:
  using Check = std::function<void(const Tensor& host)>;
  IndexCheck(GpuContext* gpu, const Tensor& input, Check check);
  int32_t* flag() { return flag_ ? flag_->get() : nullptr; }  // null: checked on the host
  void Finish();  // after the launch

 private:
  Tensor input_;
  Check check_;
  std::optional<DeviceFlag> flag_;
};

// Reduces x over `axes` into output 0 of `out_shape` (same element count as the kept dims); over
// no terms a Sum is 0 and the others InvalidArgument. T: float, double (reduce.cc; nn.cc's
// BiasAddGrad is one).
template <typename T>
void ReduceInto(OpKernelContext* ctx, ReduceKind kind, const Tensor& x, const std::vector<int64_t>& axes,
                const TensorShape& out_shape);

// K<float> and K<double> as `op`'s GPU kernels, typed by attr T.
template <template <typename> class K>
void RegisterFloats(KernelRegistry& r, const std::string& op) {
  RegisterTyped<K, float, double>(r, op, "T", "GPU");
}

// y = f(x) elementwise (elementwise.cu's LaunchUnary), the kernel of the unary math ops (Neg ..
// Reciprocal, math.cc) and of the activations (Relu, Sigmoid, Tanh, nn.cc).
template <UnaryKind kKind>
struct Unary {
  template <typename T>
  class Op : public OpKernel {
   public:
    using OpKernel::OpKernel;
    void Compute(OpKernelContext* ctx) override {
      GpuContext* gpu = GpuOf(ctx);
      const Tensor x = OnDevice(gpu, ctx->input(0));
      Tensor* y = ctx->allocate_output(0, x.shape());
      LaunchUnary<T>(kKind, x.data<T>(), y->data<T>(), x.num_elements(), gpu->compute_stream());
    }
  };
};

}  // namespace weft
