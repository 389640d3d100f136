#include <cstring>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/var_update.h"

namespace weft {
namespace {

// True when some consumer reads the value (not through a ref input): then an uninitialized
// variable is an error here, where its name is known.
bool HasValueConsumer(const Node& n) {
  for (const auto& [dst, i] : n.out_edges()) {
    if (i < 0) continue;
    if (i >= static_cast<int>(dst->def().inputs.size()) || !dst->def().inputs[i].is_ref) return true;
  }
  return false;
}

class VariableOp : public OpKernel {
 public:
  explicit VariableOp(const Node& n)
      : OpKernel(n), name_(n.attr<std::string>("shared_name")), check_init_(HasValueConsumer(n)) {
    if (name_.empty()) name_ = n.name();
  }
  void Compute(OpKernelContext* ctx) override {
    WEFT_REQUIRE(ctx->device().vars != nullptr, "no variable store on {}", ctx->device().device_name);
    Var* v = ctx->device().vars->LookupOrCreate(name_);
    std::lock_guard<std::mutex> l(v->mu);
    if (!v->value.IsInitialized()) {
      if (check_init_) {
        throw Error(errors::FailedPrecondition("attempting to use uninitialized variable '{}'", name_));
      }
      return;  // only ref consumers (Assign, ...): they reach the storage through ctx->var()
    }
    ctx->set_output(0, v->value);
  }

 private:
  std::string name_;
  bool check_init_;
};

class AssignOp : public OpKernel {
 public:
  explicit AssignOp(const Node& n) : OpKernel(n), validate_(n.attr<bool>("validate_shape")) {}
  void Compute(OpKernelContext* ctx) override {
    Var* v = ctx->var(0);
    const Tensor& value = ctx->input(1);
    std::lock_guard<std::mutex> l(v->mu);
    if (validate_) CheckAssignShape(node(), v, value);
    if (v->value.IsInitialized() && v->value.shape() == value.shape() && v->value.dtype() == value.dtype()) {
      Tensor& dst = MutableVarValue(v, ctx->allocator(), OwnRefs(ctx, 0, v));
      if (value.bytes()) std::memcpy(dst.raw_data(), value.raw_data(), value.bytes());
    } else {
      v->value = value.Clone(ctx->allocator());
    }
    ctx->set_output(0, v->value);
  }

 private:
  bool validate_;
};

template <typename T, bool kAdd>
class AssignUpdateOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Var* v = ctx->var(0);
    const Tensor& value = ctx->input(1);
    std::lock_guard<std::mutex> l(v->mu);
    if (!v->value.IsInitialized()) {
      throw Error(errors::FailedPrecondition("attempting to use uninitialized variable '{}'",
                                             node().input(0).node->name()));
    }
    WEFT_REQUIRE(v->value.shape() == value.shape(), "update of shape {} for variable '{}' of shape {}",
                 value.shape().ToString(), node().input(0).node->name(), v->value.shape().ToString());
    auto var = MutableVarValue(v, ctx->allocator(), OwnRefs(ctx, 0, v)).flat<T>();
    if constexpr (kAdd) {
      var.device(ctx->eigen_device()) += value.flat<T>();
    } else {
      var.device(ctx->eigen_device()) -= value.flat<T>();
    }
    ctx->set_output(0, v->value);
  }
};

template <typename T> using AssignAddOp = AssignUpdateOp<T, true>;
template <typename T> using AssignSubOp = AssignUpdateOp<T, false>;

}  // namespace

void RegisterStateKernels(KernelRegistry& r) {
  RegisterUntyped<VariableOp>(r, "Variable");
#if defined(WEFT_CUDA)
  RegisterUntyped<VariableOp>(r, "Variable", "GPU");  // hands out the storage: no bytes touched
#endif
  RegisterUntyped<AssignOp>(r, "Assign");
  RegisterTyped<AssignAddOp, float, double, int32_t, int64_t>(r, "AssignAdd");
  RegisterTyped<AssignSubOp, float, double, int32_t, int64_t>(r, "AssignSub");
}

}  // namespace weft
