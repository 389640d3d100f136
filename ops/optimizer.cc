// Optimizer updates, applied in place to variables: `var` (and the slots accum, m, v) are ref
// inputs from Variable nodes; the kernels (ops/kernels/cpu/optimizer.cc) update the session's
// storage under the variable's mutex and output a copy of the updated value, so the update can
// be fetched or used as a target. Not differentiable (no gradient function): Gradients reports
// one on a path from the loss.
#include "ops/optimizer.h"

#include "ops/all_ops.h"

namespace weft {

namespace {

const std::vector<DType> kOptimizerTypes = {DType::kFloat32, DType::kFloat64};

// Inputs `names` (by index) must be scalars; input `grad_index` and the slots in `same` must
// have var's shape (input 0). Unknown dims and ranks pass.
void CheckUpdate(InferenceContext& c, const std::vector<std::pair<int, const char*>>& scalars,
                 const std::vector<std::pair<int, const char*>>& same) {
  const TensorShape& var = c.input(0);
  for (auto [i, name] : scalars) c.WithRank(c.input(i), 0, name);
  for (auto [i, name] : same) {
    WEFT_REQUIRE(var.IsCompatibleWith(c.input(i)), "{} shape {} differs from var shape {}", name,
                 c.input(i).ToString(), var.ToString());
  }
  c.set_output(0, var);
}

void GradientDescentShape(InferenceContext& c) { CheckUpdate(c, {{1, "lr"}}, {{2, "grad"}}); }
void MomentumShape(InferenceContext& c) {
  CheckUpdate(c, {{2, "lr"}, {4, "momentum"}}, {{1, "accum"}, {3, "grad"}});
}
void AdamShape(InferenceContext& c) {
  CheckUpdate(c, {{3, "beta1_power"}, {4, "beta2_power"}, {5, "lr"}, {6, "beta1"}, {7, "beta2"}, {8, "epsilon"}},
              {{1, "m"}, {2, "v"}, {9, "grad"}});
}

}  // namespace

void RegisterOptimizerOps(OpRegistry& r) {
  r.Register("ApplyGradientDescent")
      .RefInput("var", "T").Input("lr", "T").Input("grad", "T").Output("out", "T")
      .TypeAttr("T", kOptimizerTypes)
      .Shape(GradientDescentShape).Stateful()
      .Doc("var -= lr * grad, in place; outputs the updated value.");
  r.Register("ApplyMomentum")
      .RefInput("var", "T").RefInput("accum", "T").Input("lr", "T").Input("grad", "T").Input("momentum", "T")
      .Output("out", "T")
      .TypeAttr("T", kOptimizerTypes)
      .Attr("use_nesterov", false)
      .Shape(MomentumShape).Stateful()
      .Doc("accum = momentum * accum + grad; var -= lr * accum, or with use_nesterov "
           "var -= lr * (grad + momentum * accum); in place, outputs the updated var.");
  r.Register("ApplyAdam")
      .RefInput("var", "T").RefInput("m", "T").RefInput("v", "T")
      .Input("beta1_power", "T").Input("beta2_power", "T").Input("lr", "T")
      .Input("beta1", "T").Input("beta2", "T").Input("epsilon", "T").Input("grad", "T")
      .Output("out", "T")
      .TypeAttr("T", kOptimizerTypes)
      .Shape(AdamShape).Stateful()
      .Doc("Adam: lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); m += (1 - beta1) * (grad - m); "
           "v += (1 - beta2) * (grad^2 - v); var -= lr_t * m / (sqrt(v) + epsilon); in place, outputs var.");
}

namespace ops {

Output ApplyGradientDescent(const Scope& s, Output var, Output lr, Output grad) {
  return s.Op("ApplyGradientDescent", {var, lr, grad});
}
Output ApplyMomentum(const Scope& s, Output var, Output accum, Output lr, Output grad, Output momentum,
                     bool use_nesterov) {
  return s.Op("ApplyMomentum", {var, accum, lr, grad, momentum}, {{"use_nesterov", use_nesterov}});
}
Output ApplyAdam(const Scope& s, Output var, Output m, Output v, Output beta1_power, Output beta2_power, Output lr,
                 Output beta1, Output beta2, Output epsilon, Output grad) {
  return s.Op("ApplyAdam", {var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad});
}

}  // namespace ops

}  // namespace weft
