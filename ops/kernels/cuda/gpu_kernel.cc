// The host-side helpers of the GPU kernels (ops/kernels/cuda/gpu_kernel.h), and
// RegisterCudaKernels, which registers every op family's GPU kernels into KernelRegistry::Global()
// beside the CPU ones (ops/all_ops.cc) when the CUDA backend is loaded.
#include "ops/kernels/cuda/gpu_kernel.h"

#include "core/gpu_backend.h"

namespace weft {

// The .cu kernels take dtypes as DTypeCode (cuda_kernels.h): Cast passes a DType through as one.
static_assert(static_cast<int>(DType::kFloat32) == static_cast<int>(DTypeCode::kFloat32) &&
              static_cast<int>(DType::kFloat64) == static_cast<int>(DTypeCode::kFloat64) &&
              static_cast<int>(DType::kInt32) == static_cast<int>(DTypeCode::kInt32) &&
              static_cast<int>(DType::kInt64) == static_cast<int>(DTypeCode::kInt64) &&
              static_cast<int>(DType::kUInt8) == static_cast<int>(DTypeCode::kUInt8) &&
              static_cast<int>(DType::kBool) == static_cast<int>(DTypeCode::kBool));

std::vector<int64_t> HostInts(OpKernelContext* ctx, int i) {
  Tensor t = ctx->input(i);
  if (t.memory_kind() == MemoryKind::kDevice) t = GpuOf(ctx)->CopyToHost(t);
  std::vector<int64_t> v(static_cast<size_t>(t.num_elements()));
  for (int64_t k = 0; k < t.num_elements(); ++k) v[static_cast<size_t>(k)] = t.ElementAsInt64(k);
  return v;
}

Tensor OnDevice(GpuContext* gpu, const Tensor& t) {
  return t.memory_kind() == MemoryKind::kDevice ? t : gpu->CopyToDevice(t);
}

DeviceFlag::DeviceFlag(GpuContext* gpu) : gpu_(gpu), flag_(DType::kInt32, TensorShape{}, gpu->allocator()) {
  LaunchFill<int32_t>(flag_.data<int32_t>(), 0, 1, gpu->compute_stream());
}

int32_t DeviceFlag::Read() { return gpu_->CopyToHost(flag_).scalar<int32_t>()(); }

IndexCheck::IndexCheck(GpuContext* gpu, const Tensor& input, Check check) : input_(input), check_(std::move(check)) {
  if (input.memory_kind() == MemoryKind::kDevice) {
    flag_.emplace(gpu);
  } else {
    check_(input);
  }
}

void IndexCheck::Finish() {
  if (flag_ && flag_->Read() != 0) check_(input_.ToHost());
}

BroadcastOperands BroadcastInputs(OpKernelContext* ctx) {
  GpuContext* gpu = GpuOf(ctx);
  BroadcastOperands o{OnDevice(gpu, ctx->input(0)), OnDevice(gpu, ctx->input(1)), {}, {}};
  const std::vector<int64_t> da = Dims(o.a.shape()), db = Dims(o.b.shape());
  o.bi = MakeBroadcastIndexer(da, db);
  o.out_shape = TensorShape(BroadcastShape(da, db));
  return o;
}

void RegisterCudaKernels(KernelRegistry& r) {
  RegisterCudaFrameworkKernels(r);
  RegisterCudaStateKernels(r);
  RegisterCudaMathKernels(r);
  RegisterCudaArrayKernels(r);
  RegisterCudaNnKernels(r);
  RegisterCudaRandomKernels(r);
  RegisterCudaOptimizerKernels(r);
  RegisterCudaSendRecvKernels(r);
  RegisterCudaAttentionKernels(r);
}

// The module's entry point (core/gpu.h, GpuBackend): KernelRegistry::Global() calls it when the
// CUDA backend is loaded (ops/all_ops.cc).
extern "C" __attribute__((visibility("default"))) void weft_cuda_register_kernels(KernelRegistry& r) {
  RegisterCudaKernels(r);
}
[[maybe_unused]] static constexpr decltype(GpuBackend::register_kernels) kCheckRegister = &weft_cuda_register_kernels;

}  // namespace weft
