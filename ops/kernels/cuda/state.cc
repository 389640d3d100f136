// GPU kernels that hold or move state: Const (copied to the device once), Assign, the optimizer
// updates (SGD, momentum, Adam) on variables in device memory, _Send/_Recv between the GPU and
// the host, the random ops and Dropout (their generator state), AssignAdd/AssignSub, and Shape / Reshape / Gather. Variables, Identity and NoOp touch no bytes: their CPU kernels are registered for the
// GPU too (ops/kernels/cpu/{state,framework}.cc).
//
// Copy-on-write as on the CPU (ops/kernels/cpu/var_update.h): an update writes in place only when
// the variable owns its buffer alone; otherwise it first moves to a fresh device copy, so a kernel
// queued later that reads the old value (the backward pass) still sees it.
//
// Transfers: _Send on a GPU copies the tensor to pinned host memory on the device-to-host stream
// (after the compute work queued so far) and hands the host tensor to the rendezvous; _Recv on a
// GPU takes the host tensor and copies it in on the host-to-device stream, ordered before later
// compute work by an event. Across processes the UCX rendezvous then carries host memory.
#include <mutex>

#include "runtime/rendezvous.h"
#include "ops/kernels/cpu/array_kernels.h"
#include "ops/kernels/cpu/var_update.h"
#include "ops/kernels/cuda/gpu_kernel.h"
#include "ops/kernels/random_state.h"
#include "ops/kernels/sendrecv.h"

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

// A device copy of `t` (same shape and dtype), queued on the compute stream.
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

// v's value, writable in place on the device (copied first when others hold it). REQUIRES v->mu.
Tensor& WritableDeviceValue(OpKernelContext* ctx, Var* v, int ref_input) {
  if (v->value.memory_kind() != MemoryKind::kDevice || v->value.buffer().use_count() > 1 + OwnRefs(ctx, ref_input, v)) {
    v->value = DeviceClone(GpuOf(ctx), v->value);
  }
  return v->value;
}

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

template <typename T>
class ApplyGradientDescentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Var* v = ctx->var(0);
    std::lock_guard<std::mutex> l(v->mu);
    Tensor& var = CheckedDeviceVar<T>(ctx, v, 0, nullptr);
    const Tensor lr = DeviceInput<T>(ctx, 1, nullptr), grad = DeviceInput<T>(ctx, 2, &var);
    LaunchApplyGradientDescent<T>(var.data<T>(), lr.data<T>(), grad.data<T>(), var.num_elements(),
                                  GpuOf(ctx)->compute_stream());
    ctx->set_output(0, var);
  }
};

template <typename T>
class ApplyMomentumOp : public OpKernel {
 public:
  explicit ApplyMomentumOp(const Node& n) : OpKernel(n), nesterov_(n.attr<bool>("use_nesterov")) {}
  void Compute(OpKernelContext* ctx) override {
    Var *v = ctx->var(0), *a = ctx->var(1);
    WEFT_REQUIRE(v != a, "var and accum are the same variable");
    std::scoped_lock l(v->mu, a->mu);
    Tensor& var = CheckedDeviceVar<T>(ctx, v, 0, nullptr);
    Tensor& accum = CheckedDeviceVar<T>(ctx, a, 1, &var);
    const Tensor lr = DeviceInput<T>(ctx, 2, nullptr), grad = DeviceInput<T>(ctx, 3, &var);
    const Tensor momentum = DeviceInput<T>(ctx, 4, nullptr);
    LaunchApplyMomentum<T>(var.data<T>(), accum.data<T>(), lr.data<T>(), grad.data<T>(), momentum.data<T>(), nesterov_,
                           var.num_elements(), GpuOf(ctx)->compute_stream());
    ctx->set_output(0, var);
  }

 private:
  bool nesterov_;
};

template <typename T>
class ApplyAdamOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Var *vv = ctx->var(0), *mv = ctx->var(1), *sv = ctx->var(2);
    WEFT_REQUIRE(vv != mv && vv != sv && mv != sv, "var, m and v must be distinct variables");
    std::scoped_lock l(vv->mu, mv->mu, sv->mu);
    Tensor& var = CheckedDeviceVar<T>(ctx, vv, 0, nullptr);
    Tensor& m = CheckedDeviceVar<T>(ctx, mv, 1, &var);
    Tensor& v = CheckedDeviceVar<T>(ctx, sv, 2, &var);
    Tensor s[6];
    for (int i = 0; i < 6; ++i) s[i] = DeviceInput<T>(ctx, 3 + i, nullptr);  // beta powers, lr, betas, epsilon
    const Tensor grad = DeviceInput<T>(ctx, 9, &var);
    LaunchApplyAdam<T>(var.data<T>(), m.data<T>(), v.data<T>(), s[0].data<T>(), s[1].data<T>(), s[2].data<T>(),
                       s[3].data<T>(), s[4].data<T>(), s[5].data<T>(), grad.data<T>(), var.num_elements(),
                       GpuOf(ctx)->compute_stream());
    ctx->set_output(0, var);
  }
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

class GpuSendOp : public OpKernel {
 public:
  explicit GpuSendOp(const Node& n) : OpKernel(n), key_(SendRecvKeyOf(n)) {}
  void Compute(OpKernelContext* ctx) override {
    Tensor t = ctx->input(0);
    if (t.IsInitialized() && t.memory_kind() == MemoryKind::kDevice) t = GpuOf(ctx)->CopyToHost(t);
    RendezvousArgs args;
    args.memory = t.memory_kind();
    ThrowIfError(RequireRendezvous(ctx)->Send(key_, args, t, /*is_dead=*/false));
  }

 private:
  std::string key_;
};

class GpuRecvOp : public AsyncOpKernel {
 public:
  explicit GpuRecvOp(const Node& n) : AsyncOpKernel(n), key_(SendRecvKeyOf(n)) {}
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    Rendezvous* r = RequireRendezvous(ctx);
    GpuContext* gpu = GpuOf(ctx);
    r->RecvAsync(key_, {}, [ctx, gpu, done = std::move(done)](const Status& s, const Tensor& value, bool) {
      if (!s.ok()) return done(s);
      if (value.dtype() != ctx->node().output_dtype(0)) {
        return done(errors::Internal("{}: received {} but expected dtype {}", ctx->node().Describe(),
                                     value.DebugString(), DTypeName(ctx->node().output_dtype(0))));
      }
      try {
        ctx->set_output(0, value.memory_kind() == MemoryKind::kDevice ? value : gpu->CopyToDevice(value));
      } catch (const Error& e) {
        return done(e.status().WithContext(ctx->node().Describe()));
      }
      done(Status());
    });
  }

 private:
  std::string key_;
};

// Shape(x) describes x: a host tensor (consumers read it on the host, a GPU consumer copies it in).
template <typename T>
class ShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const TensorShape& s = ctx->input(0).shape();
    Tensor out(DTypeOf<T>(), TensorShape{s.rank()});
    for (int i = 0; i < s.rank(); ++i) out.data<T>()[i] = static_cast<T>(s.dim(i));
    ctx->set_output(0, out);
  }
};

// Reshape(x, shape): the same device buffer under a new shape (shape read on the host).
class ReshapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ctx->set_output(0, x.Reshaped(ResolveReshape(x.shape(), HostInts(ctx, 1))));
  }
};

// Gather(params, indices) along attr axis; an index out of range is InvalidArgument naming its
// position (checked after the kernel, which writes zeros there).
template <typename T>
class GatherOp : public OpKernel {
 public:
  explicit GatherOp(const Node& n) : OpKernel(n), axis_(n.attr<int64_t>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor params = OnDevice(gpu, ctx->input(0)), indices = OnDevice(gpu, ctx->input(1));
    const GatherDims g = MakeGatherDims(params.shape(), indices.shape(), axis_, "Gather");
    Tensor* y = ctx->allocate_output(0, TensorShape(g.out_dims));
    if (y->num_elements() == 0) return;
    DeviceFlag bad(gpu);
    if (indices.dtype() == DType::kInt32) {
      LaunchGather<T, int32_t>(params.data<T>(), indices.data<int32_t>(), y->data<T>(), g.outer, indices.num_elements(),
                               g.inner, g.n, bad.get(), gpu->compute_stream());
    } else {
      LaunchGather<T, int64_t>(params.data<T>(), indices.data<int64_t>(), y->data<T>(), g.outer, indices.num_elements(),
                               g.inner, g.n, bad.get(), gpu->compute_stream());
    }
    const int32_t pos = bad.Read();
    WEFT_REQUIRE(pos == 0, "Gather: indices[{}] is out of range [0, {}) for params of shape {}", pos - 1, g.n,
                 params.shape().ToString());
  }

 private:
  const int64_t axis_;
};

// RandomUniform, RandomNormal, TruncatedNormal: the CPU kernels' numbers (same seed, same stream
// position), made on the device.
template <typename T, int kKind>  // 0 uniform, 1 normal, 2 truncated normal
class RandomOp : public OpKernel {
 public:
  explicit RandomOp(const Node& n)
      : OpKernel(n), state_(n), shape_(n.attr<TensorShape>("shape")),
        a_(n.attr<double>(kKind == 0 ? "minval" : "mean")), b_(n.attr<double>(kKind == 0 ? "maxval" : "stddev")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    Tensor* out = ctx->allocate_output(0, shape_);
    const int64_t n = out->num_elements();
    if (n == 0) return;
    const uint64_t base = state_.Reserve(n);
    if constexpr (kKind == 0) {
      LaunchRandomUniform<T>(out->data<T>(), n, state_.key(), base, static_cast<T>(a_), static_cast<T>(b_),
                             gpu->compute_stream());
    } else {
      LaunchRandomNormal<T>(out->data<T>(), n, state_.key(), base, static_cast<T>(a_), static_cast<T>(b_), kKind == 2,
                            gpu->compute_stream());
    }
  }

 private:
  RandomState state_;
  TensorShape shape_;
  double a_, b_;
};
// Dropout(x): y = x * mask, mask = (u >= rate) / (1 - rate) with u the CPU kernel's uniforms
// (same seed, same stream position: the same mask on either device).
template <typename T>
class DropoutOp : public OpKernel {
 public:
  explicit DropoutOp(const Node& n) : OpKernel(n), state_(n), rate_(n.attr<double>("rate")) {
    WEFT_REQUIRE(rate_ >= 0.0 && rate_ < 1.0, "rate must be in [0, 1), got {}", rate_);
  }
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0));
    // Copies of the outputs (they share the buffers): allocating one output may move the other.
    Tensor y = *ctx->allocate_output(0, x.shape());
    Tensor mask = *ctx->allocate_output(1, x.shape());
    const int64_t n = x.num_elements();
    if (n == 0) return;
    LaunchDropout<T>(x.data<T>(), y.data<T>(), mask.data<T>(), n, state_.key(), state_.Reserve(n),
                     static_cast<T>(rate_), static_cast<T>(1.0 / (1.0 - rate_)), gpu->compute_stream());
  }

 private:
  RandomState state_;
  double rate_;
};

template <typename T> using RandomUniformOp = RandomOp<T, 0>;
template <typename T> using RandomNormalOp = RandomOp<T, 1>;
template <typename T> using TruncatedNormalOp = RandomOp<T, 2>;

}  // namespace

void RegisterCudaStateKernels(KernelRegistry& r) {
  RegisterUntyped<ConstOp>(r, "Const", "GPU");
  RegisterUntyped<AssignOp>(r, "Assign", "GPU");
  RegisterTyped<AssignAddOp, float, double, int32_t, int64_t>(r, "AssignAdd", "T", "GPU");
  RegisterTyped<AssignSubOp, float, double, int32_t, int64_t>(r, "AssignSub", "T", "GPU");
  RegisterTyped<ApplyGradientDescentOp, float, double>(r, "ApplyGradientDescent", "T", "GPU");
  RegisterTyped<ApplyMomentumOp, float, double>(r, "ApplyMomentum", "T", "GPU");
  RegisterTyped<ApplyAdamOp, float, double>(r, "ApplyAdam", "T", "GPU");
  RegisterUntyped<GpuSendOp>(r, "_Send", "GPU");
  RegisterUntyped<GpuRecvOp>(r, "_Recv", "GPU");
  RegisterTyped<ShapeOp, int32_t, int64_t>(r, "Shape", "out_type", "GPU");
  RegisterUntyped<ReshapeOp>(r, "Reshape", "GPU");
  RegisterTyped<GatherOp, float, double>(r, "Gather", "T", "GPU");
  RegisterTyped<RandomUniformOp, float, double>(r, "RandomUniform", "dtype", "GPU");
  RegisterTyped<RandomNormalOp, float, double>(r, "RandomNormal", "dtype", "GPU");
  RegisterTyped<TruncatedNormalOp, float, double>(r, "TruncatedNormal", "dtype", "GPU");
  RegisterTyped<DropoutOp, float, double>(r, "Dropout", "T", "GPU");
}

}  // namespace weft
