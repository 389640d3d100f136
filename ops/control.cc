// Control-flow ops, TensorFlow's model (graph/control_flow.h, docs/control-flow.md): Switch and
// Merge make conditionals, Enter / Exit / NextIteration / LoopCond make while loops. Their
// kernels only forward values; the executor gives them their meaning (dead outputs, frames,
// iterations). The builders ops::Cond and ops::WhileLoop are in ops/control_builders.cc.
#include "ops/control.h"

#include "ops/all_ops.h"
#include "ops/framework.h"
#include "ops/math.h"

namespace weft {

namespace {

// Merge's output: the inputs' shape where they agree, unknown dims (or rank) where they do not
// (a loop variable declared with a looser shape invariant, a cond's two branches).
void MergeShape(InferenceContext& c) {
  TensorShape s = c.input(0);
  for (int i = 1; i < c.num_inputs(); ++i) s = MostSpecificCommonShape(s, c.input(i));
  c.set_output(0, s);
  c.set_output(1, TensorShape{});
}

void SwitchShape(InferenceContext& c) {
  c.WithRank(c.input(1), 0, "pred");
  c.set_output(0, c.input(0));
  c.set_output(1, c.input(0));
}

// Switch(x, pred) -> (x if !pred, x if pred):  dx = Merge(dy_false, dy_true) (one of the two is
// dead, the one of the branch not taken).
std::vector<Output> SwitchGrad(const Scope& s, const Node&, const std::vector<Output>& dy) {
  return {ops::Merge(s, {dy[0], dy[1]}).output, Output()};
}

// Merge(x0, x1, ...) -> (x_k, k):  dx_i = dy where k == i, dead elsewhere: Switch(dy, k == i)'s
// true output. value_index says which input was taken, so no predicate has to be found.
std::vector<Output> MergeGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  WEFT_REQUIRE(!IsLoopMerge(op), "{} is a while_loop's Merge: Gradients differentiates a loop as a whole "
                                 "(graph/while_gradients.h), never its Merge alone", op.Describe());
  std::vector<Output> dx;
  const Output index(const_cast<Node*>(&op), 1);
  for (int i = 0; i < op.num_inputs(); ++i) {
    const Output taken = ops::Equal(s, index, ops::Const(s, static_cast<int32_t>(i)));
    dx.push_back(ops::Switch(s, dy[0], taken).output_true);
  }
  return dx;
}

// Gradients differentiates a loop as a whole (graph/while_gradients.h) and never calls this; it
// is reached only by a loop node outside a frame Gradients recognised (a hand-built graph).
std::vector<Output> LoopGrad(const Scope&, const Node& op, const std::vector<Output>&) {
  throw Error(errors::Unimplemented("{} is differentiated with its whole tf.while_loop (graph/while_gradients.h), "
                                    "not on its own", op.Describe()));
}

}  // namespace

TensorShape MostSpecificCommonShape(const TensorShape& a, const TensorShape& b) {
  if (a.unknown_rank() || b.unknown_rank() || a.rank() != b.rank()) return TensorShape::Unknown();
  std::vector<int64_t> dims(a.dims());
  for (int i = 0; i < a.rank(); ++i) {
    if (dims[i] != b.dim(i)) dims[i] = TensorShape::kUnknownDim;
  }
  return TensorShape(dims);
}

bool IsLoopMerge(const Node& merge) {
  for (const Output& in : merge.inputs()) {
    if (in.node->op() == "NextIteration") return true;
  }
  return false;
}

void RegisterControlOps(OpRegistry& r) {
  r.Register("Switch").Input("data", "T").Input("pred", "bool").Output("output_false", "T")
      .Output("output_true", "T").TypeAttr("T", {}).Stateful().Cheap().Shape(SwitchShape).Grad(SwitchGrad)
      .Doc("Forwards `data` to output_true when the scalar `pred` is true, else to output_false; the other "
           "output is dead (its consumers do not run).");
  r.Register("Merge").InputList("inputs", "T", "N").Output("output", "T").Output("value_index", "int32")
      .TypeAttr("T", {}).Stateful().Cheap().Shape(MergeShape).Grad(MergeGrad)
      .Doc("Forwards the first live input and its index; dead when every input is dead. In a loop, takes the "
           "Enter's value in iteration 0 and NextIteration's afterwards.");
  r.Register("Enter").Input("data", "T").Output("output", "T").TypeAttr("T", {})
      .Attr("frame_name", AttrType::kString).Attr("is_constant", false).Attr("parallel_iterations", 10)
      .Stateful().Cheap().Shape(UnchangedShape).Grad(LoopGrad)
      .Doc("Makes `data` available in the child frame `frame_name` (a while loop): in its iteration 0, or in "
           "every iteration when is_constant (a loop invariant). At most parallel_iterations iterations of the "
           "frame run at once.");
  r.Register("Exit").Input("data", "T").Output("output", "T").TypeAttr("T", {}).Stateful().Cheap()
      .Shape(UnchangedShape).Grad(LoopGrad)
      .Doc("Makes `data` available in the parent frame: a while loop's result.");
  r.Register("NextIteration").Input("data", "T").Output("output", "T").TypeAttr("T", {}).Stateful().Cheap()
      .Shape(UnchangedShape).Grad(LoopGrad)
      .Doc("Makes `data` available in the next iteration of its frame (a while loop's back edge into Merge).");
  r.Register("LoopCond").Input("input", "bool").Output("output", "bool").Stateful().Cheap()
      .Shape([](InferenceContext& c) {
        c.WithRank(c.input(0), 0, "input");
        c.set_output(0, TensorShape{});
      })
      .NoGradient()
      .Doc("A while loop's predicate: forwards the scalar bool that says whether the loop runs another "
           "iteration.");
  // The stacks of while-loop gradients (graph/while_gradients.h): the forward loop pushes each
  // value its backward loop needs under the forward iteration number, the backward loop pops it
  // under the same number counting down. Indexed rather than LIFO, so parallel iterations may push
  // in any order.
  r.Register("LoopStack").Output("handle", "int64").Stateful().Shape([](InferenceContext& c) {
        c.set_output(0, TensorShape{});
      })
      .Doc("A new empty stack of tensors for this step; `handle` names it (only to LoopStackPush / LoopStackPop, "
           "on the same process). The stack and what it holds are freed with the last copy of the handle.");
  r.Register("LoopStackPush").Input("handle", "int64").Input("index", "int32").Input("value", "T")
      .Output("output", "T").TypeAttr("T", {}).Stateful().Cheap().NoGradient()
      .Shape([](InferenceContext& c) {
        c.WithRank(c.input(0), 0, "handle");
        c.WithRank(c.input(1), 0, "index");
        c.set_output(0, c.input(2));
      })
      .Doc("Keeps `value` in the stack `handle` under `index` (>= 0, each index once) and returns it. Runs on a "
           "dead value too (a cond branch not taken): keeps nothing, its output is unset and its control edges "
           "are live.");
  r.Register("LoopStackPop").Input("handle", "int64").Input("index", "int32").Output("output", "T")
      .TypeAttr("T", {}).Attr("elem_shape", TensorShape::Unknown()).Attr("absent_is_dead", false).Stateful().Cheap()
      .NoGradient()
      .Shape([](InferenceContext& c) {
        c.WithRank(c.input(0), 0, "handle");
        c.WithRank(c.input(1), 0, "index");
        c.set_output(0, c.attr<TensorShape>("elem_shape"));
      })
      .Doc("Removes the value pushed under `index` from the stack `handle` and returns it. InvalidArgument if it "
           "is not a T of elem_shape, or if none is there, unless absent_is_dead: then the output is dead (the "
           "value of a cond branch that the forward iteration did not take).");
}

namespace ops {

SwitchOutputs Switch(const Scope& s, Output data, Output pred) {
  Node* n = s.AddNode("Switch", {data, pred});
  return {Output(n, 0), Output(n, 1)};
}

MergeOutputs Merge(const Scope& s, const std::vector<Output>& inputs) {
  Node* n = s.AddNode("Merge", inputs, {{"N", static_cast<int64_t>(inputs.size())}});
  return {Output(n, 0), Output(n, 1)};
}

Output LoopStack(const Scope& s) { return s.Op("LoopStack", {}); }

Output LoopStackPush(const Scope& s, Output handle, Output index, Output value) {
  return s.Op("LoopStackPush", {handle, index, value});
}

Output LoopStackPop(const Scope& s, Output handle, Output index, DType dtype, TensorShape elem_shape,
                    bool absent_is_dead) {
  return s.Op("LoopStackPop", {handle, index},
              {{"T", dtype}, {"elem_shape", std::move(elem_shape)}, {"absent_is_dead", absent_is_dead}});
}

}  // namespace ops

}  // namespace weft
