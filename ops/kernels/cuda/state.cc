// GPU kernels of the state ops (ops/state.cc) that write a variable: Assign, and AssignAdd /
// AssignSub (the step counter, int64) in place on the device. Variable itself touches no bytes:
// its CPU kernel is registered for the GPU too (ops/kernels/cpu/state.cc). Variables hold device
// tensors, updated copy-on-write (ops/kernels/cuda/var_update.h).
#include <mutex>

#include "ops/kernels/cuda/var_update.h"

namespace weft {

Tensor DeviceClone(GpuContext* gpu, const Tensor& t) {
  Tensor c(t.dtype(), t.shape(), gpu->allocator());
  if (t.bytes() > 0) {
    WEFT_CUDA_CHECK(cudaMemcpyAsync(c.raw_data(), t.raw_data(), t.bytes(),
                                    t.memory_kind() == MemoryKind::kDevice ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice,
                                    gpu->compute_stream()));
    if (t.memory_kind() != MemoryKind::kDevice) WEFT_CUDA_CHECK(cudaStreamSynchronize(gpu->compute_stream()));
  }
  return c;
}

Tensor& WritableDeviceValue(OpKernelContext* ctx, Var* v, int ref_input) {
  if (v->value.memory_kind() != MemoryKind::kDevice || v->value.buffer().use_count() > 1 + OwnRefs(ctx, ref_input, v)) {
    v->value = DeviceClone(GpuOf(ctx), v->value);
  }
  return v->value;
}

namespace {

class AssignOp : public OpKernel {
 public:
  explicit AssignOp(const Node& n) : OpKernel(n), validate_(n.attr<bool>("validate_shape")) {}
  void Compute(OpKernelContext* ctx) override {
    Var* v = ctx->var(0);
    const Tensor& value = ctx->input(1);
    std::lock_guard<std::mutex> l(v->mu);
    if (validate_) CheckAssignShape(node(), v, value);
    v->value = DeviceClone(GpuOf(ctx), value);  // the assigned tensor may be read on elsewhere
    ctx->set_output(0, v->value);
  }

 private:
  bool validate_;
};

// AssignAdd / AssignSub (the step counter, int64): var op= value in place on the device.
template <typename T, BinaryKind kKind>
class AssignUpdateOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Var* v = ctx->var(0);
    std::lock_guard<std::mutex> l(v->mu);
    Tensor& var = CheckedDeviceVar<T>(ctx, v, 0, nullptr);
    const Tensor value = DeviceInput<T>(ctx, 1, &var);
    const std::vector<int64_t> dims = Dims(var.shape());
    LaunchBinary<T>(kKind, var.data<T>(), value.data<T>(), var.data<T>(), var.num_elements(),
                    MakeBroadcastIndexer(dims, dims), GpuOf(ctx)->compute_stream());
    ctx->set_output(0, var);
  }
};
template <typename T> using AssignAddOp = AssignUpdateOp<T, BinaryKind::kAdd>;
template <typename T> using AssignSubOp = AssignUpdateOp<T, BinaryKind::kSub>;

}  // namespace

void RegisterCudaStateKernels(KernelRegistry& r) {
  RegisterUntyped<AssignOp>(r, "Assign", "GPU");
  RegisterTyped<AssignAddOp, float, double, int32_t, int64_t>(r, "AssignAdd", "T", "GPU");
  RegisterTyped<AssignSubOp, float, double, int32_t, int64_t>(r, "AssignSub", "T", "GPU");
}

}  // namespace weft
