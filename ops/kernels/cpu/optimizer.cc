// CPU kernels of the optimizer updates (ops/optimizer.cc). Each locks the variables it updates
// (std::scoped_lock: all at once, deadlock-free), checks they are initialized and shaped like
// var, and updates the storage in one pass over its arrays on the intra-op pool; the output is
// var's new value.
//
// Updates are copy-on-write (ops/kernels/cpu/var_update.h).
#include <algorithm>
#include <cmath>
#include <mutex>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/var_update.h"

namespace weft {

namespace {

// body(begin, end) over [0, n) in blocks of 4096 elements on the intra-op pool: the updates below
// do all their per-element work in one pass, so every array is read and written once, and a
// block's values are still in L1 when a later line of the body reads them.
template <typename F>
void ForElementBlocks(OpKernelContext* ctx, int64_t n, const F& body) {
  constexpr int64_t kBlock = 4096;
  ctx->intra_op_pool()->ParallelFor((n + kBlock - 1) / kBlock, [&](int64_t b, int64_t e) {
    body(b * kBlock, std::min(n, e * kBlock));
  });
}

// The name of the variable behind ref input i (its shared_name or node name).
std::string VarName(const Node& node, int i) {
  const Node* src = node.input(i).node;
  std::string shared = src->has_attr("shared_name") ? src->attr<std::string>("shared_name") : "";
  return shared.empty() ? src->name() : shared;
}

// Ref input i, checked: initialized, of dtype T, and (for i > 0) shaped like var (ref input 0);
// made the sole owner of its buffer (see the top of this file), so it can be updated in place.
// REQUIRES: the variable's mutex is held.
template <typename T>
Tensor& CheckedVar(OpKernelContext* ctx, Var* v, int i, const Tensor* like, bool make_writable = true) {
  const Node& node = ctx->node();
  const std::string& arg = node.def().inputs.at(i).name;
  if (!v->value.IsInitialized()) {
    throw Error(errors::FailedPrecondition("{} '{}' (variable '{}') is uninitialized; run its initializer first", arg,
                                           node.input(i).node->name(), VarName(node, i)));
  }
  WEFT_REQUIRE(v->value.dtype() == DTypeOf<T>(), "{} (variable '{}') holds {} but the update is {}", arg,
               VarName(node, i), v->value.DebugString(), DTypeName(DTypeOf<T>()));
  if (like != nullptr) {
    WEFT_REQUIRE(v->value.shape() == like->shape(), "{} (variable '{}') shape {} differs from var shape {}", arg,
                 VarName(node, i), v->value.shape().ToString(), like->shape().ToString());
  }
  return make_writable ? MutableVarValue(v, ctx->allocator(), OwnRefs(ctx, i, v)) : v->value;
}

// Input i, checked to be a scalar; returns its value.
template <typename T>
T Scalar(OpKernelContext* ctx, int i) {
  const Tensor& t = ctx->input(i);
  WEFT_REQUIRE(t.rank() == 0, "{} must be a scalar, got shape {}", ctx->node().def().inputs.at(i).name,
               t.shape().ToString());
  return t.scalar<T>()();
}

// Input i (a gradient), checked to have var's shape.
const Tensor& Grad(OpKernelContext* ctx, int i, const Tensor& var) {
  const Tensor& g = ctx->input(i);
  WEFT_REQUIRE(g.shape() == var.shape(), "{} shape {} differs from var '{}' shape {}",
               ctx->node().def().inputs.at(i).name, g.shape().ToString(), VarName(ctx->node(), 0),
               var.shape().ToString());
  return g;
}

// Distinct variables (an update reading and writing the same storage twice is a graph bug, and
// locking one mutex twice would deadlock).
void RequireDistinct(OpKernelContext* ctx, const std::vector<Var*>& vars) {
  for (size_t i = 0; i < vars.size(); ++i) {
    for (size_t j = i + 1; j < vars.size(); ++j) {
      WEFT_REQUIRE(vars[i] != vars[j], "{} and {} are the same variable '{}'", ctx->node().def().inputs.at(i).name,
                   ctx->node().def().inputs.at(j).name, VarName(ctx->node(), static_cast<int>(i)));
    }
  }
}

// var -= lr * grad
template <typename T>
class ApplyGradientDescentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    T lr = Scalar<T>(ctx, 1);
    Var* v = ctx->var(0);
    std::lock_guard<std::mutex> lock(v->mu);
    const Tensor& grad = Grad(ctx, 2, CheckedVar<T>(ctx, v, 0, nullptr, /*make_writable=*/false));
    const Tensor old = VarValueForOverwrite(v, ctx->allocator(), OwnRefs(ctx, 0, v));
    v->value.flat<T>().device(ctx->eigen_device()) = old.flat<T>() - grad.flat<T>() * lr;
    ctx->set_output(0, v->value);
  }
};

// accum = momentum * accum + grad
// var -= lr * accum                              (use_nesterov = false)
// var -= lr * grad + lr * momentum * accum       (use_nesterov = true)
template <typename T>
class ApplyMomentumOp : public OpKernel {
 public:
  explicit ApplyMomentumOp(const Node& node) : OpKernel(node), nesterov_(node.attr<bool>("use_nesterov")) {}
  void Compute(OpKernelContext* ctx) override {
    T lr = Scalar<T>(ctx, 2), momentum = Scalar<T>(ctx, 4);
    Var *v = ctx->var(0), *a = ctx->var(1);
    RequireDistinct(ctx, {v, a});
    std::scoped_lock lock(v->mu, a->mu);
    const Tensor& checked = CheckedVar<T>(ctx, v, 0, nullptr, /*make_writable=*/false);
    auto accum = CheckedVar<T>(ctx, a, 1, &checked).template flat<T>();
    auto grad = Grad(ctx, 3, checked).template flat<T>();
    // var is written from its old value in one pass (no copy first when the backward pass
    // still holds it).
    const Tensor old_var = VarValueForOverwrite(v, ctx->allocator(), OwnRefs(ctx, 0, v));
    // One pass (ForElementBlocks): five streams instead of the six of two separate passes.
    const T* o = old_var.data<T>();
    const T* g = grad.data();
    T* acc = accum.data();
    T* out = v->value.data<T>();
    const bool nesterov = nesterov_;
    const T momentum_lr = momentum * lr;
    ForElementBlocks(ctx, accum.size(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T a_new = acc[i] * momentum + g[i];
        acc[i] = a_new;
        out[i] = nesterov ? o[i] - (g[i] * lr + a_new * momentum_lr) : o[i] - a_new * lr;
      }
    });
    ctx->set_output(0, v->value);
  }

 private:
  bool nesterov_;
};

// lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
// m = m + (grad - m) * (1 - beta1)
// v = v + (grad^2 - v) * (1 - beta2)
// var -= lr_t * m / (sqrt(v) + epsilon)
template <typename T>
class ApplyAdamOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    T beta1_power = Scalar<T>(ctx, 3), beta2_power = Scalar<T>(ctx, 4), lr = Scalar<T>(ctx, 5);
    T beta1 = Scalar<T>(ctx, 6), beta2 = Scalar<T>(ctx, 7), epsilon = Scalar<T>(ctx, 8);
    Var *vv = ctx->var(0), *mv = ctx->var(1), *sv = ctx->var(2);
    RequireDistinct(ctx, {vv, mv, sv});
    std::scoped_lock lock(vv->mu, mv->mu, sv->mu);
    Tensor& var = CheckedVar<T>(ctx, vv, 0, nullptr);
    auto m = CheckedVar<T>(ctx, mv, 1, &var).template flat<T>();
    auto v = CheckedVar<T>(ctx, sv, 2, &var).template flat<T>();
    auto grad = Grad(ctx, 9, var).template flat<T>();
    const T lr_t = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    const T one_minus_beta1 = T(1) - beta1, one_minus_beta2 = T(1) - beta2;
    // One pass (ForElementBlocks): seven streams instead of the ten of three separate passes.
    T* mp = m.data();
    T* vp = v.data();
    T* out = var.data<T>();
    const T* g = grad.data();
    ForElementBlocks(ctx, m.size(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T m_new = mp[i] + (g[i] - mp[i]) * one_minus_beta1;
        const T v_new = vp[i] + (g[i] * g[i] - vp[i]) * one_minus_beta2;
        mp[i] = m_new;
        vp[i] = v_new;
        out[i] -= (m_new * lr_t) / (std::sqrt(v_new) + epsilon);
      }
    });
    ctx->set_output(0, var);
  }
};

}  // namespace

void RegisterOptimizerKernels(KernelRegistry& r) {
  RegisterTyped<ApplyGradientDescentOp, float, double>(r, "ApplyGradientDescent");
  RegisterTyped<ApplyMomentumOp, float, double>(r, "ApplyMomentum");
  RegisterTyped<ApplyAdamOp, float, double>(r, "ApplyAdam");
}

}  // namespace weft
