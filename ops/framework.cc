// Framework ops: the step's arguments and results, constants, placeholders, identity.
#include "ops/framework.h"

#include "ops/all_ops.h"
#include "ops/array.h"

namespace weft {

namespace {

// y = x:  dx = dy
std::vector<Output> IdentityGrad(const Scope&, const Node&, const std::vector<Output>& dy) { return {dy[0]}; }

}  // namespace

void RegisterFrameworkOps(OpRegistry& r) {
  r.Register("_Arg").Output("output", "T").TypeAttr("T", {}).Attr("index", AttrType::kInt)
      .Attr("shape", TensorShape::Unknown()).Stateful().Cheap()
      .Shape([](InferenceContext& c) { c.set_output(0, c.attr<TensorShape>("shape")); })
      .Doc("The step's argument `index` (a fed tensor); inserted by Session, not by users.");
  r.Register("_Retval").Input("input", "T").TypeAttr("T", {}).Attr("index", AttrType::kInt).Stateful().Cheap()
      .Doc("Makes its input the step's result `index` (a fetch); inserted by Session, not by users.");
  r.Register("Const").Output("output", "dtype").TypeAttr("dtype", {}).Attr("value", AttrType::kTensor)
      .NoGradient().Cheap()
      .Shape([](InferenceContext& c) {
        const Tensor v = c.attr<Tensor>("value");
        WEFT_REQUIRE(v.dtype() == c.attr<DType>("dtype"), "value is {} but dtype is {}", v.DebugString(),
                     DTypeName(c.attr<DType>("dtype")));
        c.set_output(0, v.shape());
      })
      .Doc("A constant tensor held in the graph.");
  r.Register("Placeholder").Output("output", "dtype").TypeAttr("dtype", {}).Attr("shape", TensorShape::Unknown())
      .Stateful()
      .Shape([](InferenceContext& c) { c.set_output(0, c.attr<TensorShape>("shape")); })
      .Doc("A value the caller must feed in every step that needs it; the shape may have unknown dims.");
  r.Register("Identity").Input("input", "T").Output("output", "T").TypeAttr("T", {}).Cheap()
      .Shape(UnchangedShape).Grad(IdentityGrad)
      .Doc("Returns its input (the same buffer).");
  r.Register("EnsureShape").Input("input", "T").Output("output", "T").TypeAttr("T", {})
      .Attr("shape", AttrType::kShape).Cheap().Grad(IdentityGrad)
      .Shape([](InferenceContext& c) {
        const TensorShape want = c.attr<TensorShape>("shape");
        WEFT_REQUIRE(c.input(0).IsCompatibleWith(want), "the input's shape {} is not compatible with {}",
                     c.input(0).ToString(), want.ToString());
        c.set_output(0, c.input(0).Merge(want));
      })
      .Doc("Returns its input (the same buffer) with the static shape merged with `shape` "
           "(tf.ensure_shape, Tensor.set_shape); a step whose input does not match is InvalidArgument.");
  r.Register("Assert").Input("condition", "bool").Attr("message", AttrType::kString).Stateful().NoGradient()
      .Doc("Fails the step with InvalidArgument(`message`) unless every element of `condition` is true "
           "(tf.debugging.assert_*, tf.Assert); no outputs: run it by fetching it or as a control input.");
  r.Register("StopGradient").Input("input", "T").Output("output", "T").TypeAttr("T", {}).Cheap()
      .Shape(UnchangedShape).NoGradient()
      .Doc("Returns its input; gradients do not flow through it.");
  r.Register("NoOp").Cheap().Doc("Does nothing; used to group control dependencies.");
}

namespace ops {

Output Const(const Scope& s, const Tensor& value) {
  return s.Op("Const", {}, {{"value", value}, {"dtype", value.dtype()}});
}

Output ScalarLike(const Scope& s, DType dtype, double v) {
  Tensor t(dtype, TensorShape{});
  Dispatch<WEFT_ALL_TYPES>(dtype, "ScalarLike", [&](auto tag) {
    using T = typename decltype(tag)::type;
    *t.data<T>() = static_cast<T>(v);
  });
  return Const(s, t);
}

Output Placeholder(const Scope& s, DType dtype, TensorShape shape) {
  return s.Op("Placeholder", {}, {{"dtype", dtype}, {"shape", std::move(shape)}});
}
Output Identity(const Scope& s, Output x) { return s.Op("Identity", {x}); }
Node* NoOp(const Scope& s) { return s.AddNode("NoOp", {}); }
Output StopGradient(const Scope& s, Output x) { return s.Op("StopGradient", {x}); }
Node* Group(const Scope& s, const std::vector<Output>& deps, const std::vector<Node*>& nodes) {
  return NoOp(s.WithControlDependencies(deps).WithControlDependencies(nodes));
}

}  // namespace ops
}  // namespace weft
