// GPU kernels of the optimizer updates (ops/optimizer.cc): SGD, momentum (nesterov) and Adam on
// variables in device memory, copy-on-write (ops/kernels/cuda/var_update.h); the update kernels
// are train.cu's, with the CPU kernels' formulas (ops/kernels/cpu/optimizer.cc).
#include <mutex>

#include "ops/kernels/cuda/var_update.h"

namespace weft {
namespace {

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

}  // namespace

void RegisterCudaOptimizerKernels(KernelRegistry& r) {
  RegisterTyped<ApplyGradientDescentOp, float, double>(r, "ApplyGradientDescent", "T", "GPU");
  RegisterTyped<ApplyMomentumOp, float, double>(r, "ApplyMomentum", "T", "GPU");
  RegisterTyped<ApplyAdamOp, float, double>(r, "ApplyAdam", "T", "GPU");
}

}  // namespace weft
