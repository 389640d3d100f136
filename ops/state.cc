// Variables, TF1-style: the value lives in the session's VarStore under the variable's name;
// ops that update it take the Variable node's output as a ref input.
#include "ops/state.h"

#include "ops/all_ops.h"

namespace weft {

namespace {

void AssignShape(InferenceContext& c) {
  if (c.attr<bool>("validate_shape")) {
    WEFT_REQUIRE(c.input(0).IsCompatibleWith(c.input(1)), "value shape {} differs from variable shape {}",
                 c.input(1).ToString(), c.input(0).ToString());
    c.set_output(0, c.input(0).Merge(c.input(1)));
  } else {
    c.set_output(0, c.input(1));
  }
}

void UpdateShape(InferenceContext& c) {
  WEFT_REQUIRE(c.input(0).IsCompatibleWith(c.input(1)), "value shape {} differs from variable shape {}",
               c.input(1).ToString(), c.input(0).ToString());
  c.set_output(0, c.input(0).Merge(c.input(1)));
}

}  // namespace

void RegisterStateOps(OpRegistry& r) {
  r.Register("Variable").Output("ref", "dtype").TypeAttr("dtype", {}).Attr("shape", TensorShape::Unknown())
      .Attr("shared_name", "").Stateful()
      .Shape([](InferenceContext& c) { c.set_output(0, c.attr<TensorShape>("shape")); })
      .Doc("A mutable tensor that lives across steps (in the session's variable store, under "
           "`shared_name` or the node name). Reading it before the first Assign is FailedPrecondition.");
  r.Register("Assign").RefInput("ref", "T").Input("value", "T").Output("output_ref", "T").TypeAttr("T", {})
      .Attr("validate_shape", true).Stateful().NoGradient().Shape(AssignShape)
      .Doc("Sets the variable to `value` (copied); returns the new value.");
  const std::vector<DType> numbers = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};
  r.Register("AssignAdd").RefInput("ref", "T").Input("value", "T").Output("output_ref", "T")
      .TypeAttr("T", numbers).Stateful().NoGradient().Shape(UpdateShape)
      .Doc("Adds `value` to the variable in place; returns the new value.");
  r.Register("AssignSub").RefInput("ref", "T").Input("value", "T").Output("output_ref", "T")
      .TypeAttr("T", numbers).Stateful().NoGradient().Shape(UpdateShape)
      .Doc("Subtracts `value` from the variable in place; returns the new value.");
}

namespace ops {

Output Variable(const Scope& s, TensorShape shape, DType dtype) {
  return s.Op("Variable", {}, {{"shape", std::move(shape)}, {"dtype", dtype}});
}
Output Assign(const Scope& s, Output ref, Output value, bool validate_shape) {
  return s.Op("Assign", {ref, value}, {{"validate_shape", validate_shape}});
}
Output AssignAdd(const Scope& s, Output ref, Output value) { return s.Op("AssignAdd", {ref, value}); }
Output AssignSub(const Scope& s, Output ref, Output value) { return s.Op("AssignSub", {ref, value}); }

}  // namespace ops
}  // namespace weft
