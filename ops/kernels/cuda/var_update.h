// Variables in device memory, for the GPU state and optimizer kernels (state.cc, optimizer.cc):
// the checks and the copy-on-write of ops/kernels/cpu/var_update.h, on the device.
//
//   std::lock_guard<std::mutex> l(v->mu);
//   Tensor& var = CheckedDeviceVar<float>(ctx, v, 0, nullptr);  // writable in place
//   const Tensor lr = DeviceInput<float>(ctx, 1, nullptr);      // a scalar, on the device
//
// Copy-on-write as on the CPU: an update writes in place only when the variable owns its buffer
// alone; otherwise it first moves to a fresh device copy, so a kernel queued later that reads the
// old value (the backward pass) still sees it.
#pragma once

#include <string>

#include "ops/kernels/cpu/var_update.h"
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {

// A device copy of `t` (same shape and dtype), queued on the compute stream.
Tensor DeviceClone(GpuContext* gpu, const Tensor& t);

// v's value, writable in place on the device (copied first when others hold it). REQUIRES v->mu.
Tensor& WritableDeviceValue(OpKernelContext* ctx, Var* v, int ref_input);

// Ref input i checked like the CPU's CheckedVar: initialized, dtype T, shaped like `like`.
template <typename T>
Tensor& CheckedDeviceVar(OpKernelContext* ctx, Var* v, int i, const Tensor* like) {
  const Node& node = ctx->node();
  if (!v->value.IsInitialized()) {
    throw Error(errors::FailedPrecondition("{} '{}' is uninitialized; run its initializer first",
                                           node.def().inputs.at(i).name, node.input(i).node->name()));
  }
  WEFT_REQUIRE(v->value.dtype() == DTypeOf<T>(), "{} holds {} but the update is {}", node.def().inputs.at(i).name,
               v->value.DebugString(), DTypeName(DTypeOf<T>()));
  if (like != nullptr) {
    WEFT_REQUIRE(v->value.shape() == like->shape(), "{} shape {} differs from var shape {}",
                 node.def().inputs.at(i).name, v->value.shape().ToString(), like->shape().ToString());
  }
  return WritableDeviceValue(ctx, v, i);
}

// Input i on the device, checked to be a scalar (lr, momentum, ...) or shaped like var (grad).
template <typename T>
Tensor DeviceInput(OpKernelContext* ctx, int i, const Tensor* like) {
  const Tensor& t = ctx->input(i);
  const std::string& name = ctx->node().def().inputs.at(i).name;
  if (like == nullptr) {
    WEFT_REQUIRE(t.rank() == 0, "{} must be a scalar, got shape {}", name, t.shape().ToString());
  } else {
    WEFT_REQUIRE(t.shape() == like->shape(), "{} shape {} differs from var shape {}", name, t.shape().ToString(),
                 like->shape().ToString());
  }
  return OnDevice(GpuOf(ctx), t);
}

}  // namespace weft
