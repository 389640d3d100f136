// The op registry: every op is declared once, with its inputs, outputs, typed attrs (with
// defaults), shape function, gradient builder and doc line. Ops live in ops/<family>.cc:
//
//   r.Register("MatMul")
//       .Input("a", "T").Input("b", "T").Output("product", "T")
//       .TypeAttr("T", {DType::kFloat32, DType::kFloat64})
//       .Attr("transpose_a", false).Attr("transpose_b", false)
//       .Shape(MatMulShape)
//       .Grad(MatMulGrad)      // adds graph nodes; see graph/gradients.h
//       .Doc("Matrix product of two rank-2 tensors, optionally transposing either.");
//
// An argument's type is a fixed dtype name ("int32") or the name of a type attr ("T") that
// the builder infers from the inputs. Thread-safety: registration happens once, on first use
// of OpRegistry::Global(); lookups afterwards are read-only and thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/attr.h"

namespace weft {

class Node;
class Scope;
struct Output;
class InferenceContext;

// Adds the gradient of `op` to the graph: given dy (one per output of op; never null, zeros
// are filled in for outputs that got no gradient) returns dx, one per input of op (a null
// Output means "no gradient flows to this input").
using GradFn = std::function<std::vector<Output>(const Scope& s, const Node& op, const std::vector<Output>& dy)>;
using ShapeFn = std::function<void(InferenceContext& c)>;

struct ArgDef {
  std::string name;
  DType fixed_type = DType::kInvalid;  // set when the type is fixed
  std::string type_attr;               // else: the attr holding the type
  std::string number_attr;             // set for a list of N tensors of one type
  bool is_ref = false;                 // input refers to a Variable's storage (state ops)
};

struct AttrDef {
  std::string name;
  AttrType type;
  std::optional<AttrValue> default_value;
  std::vector<DType> allowed_types;  // for kType attrs; empty = any
};

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs, outputs;
  std::vector<AttrDef> attrs;
  ShapeFn shape_fn;
  GradFn grad_fn;  // empty: not differentiable (Gradients reports the op by name)
  std::string doc;
  bool is_stateful = false;          // never folded, deduplicated or pruned as a pure function
  bool no_gradient = false;          // declared as having zero gradient (e.g. comparisons, Shape)
  bool cheap = false;                // executor runs it inline instead of scheduling it

  const AttrDef* FindAttr(std::string_view n) const;
};

class OpDefBuilder {
 public:
  explicit OpDefBuilder(OpDef* def) : def_(def) {}
  OpDefBuilder& Input(std::string name, std::string type);
  OpDefBuilder& RefInput(std::string name, std::string type);
  OpDefBuilder& InputList(std::string name, std::string type, std::string number_attr);
  OpDefBuilder& Output(std::string name, std::string type);
  OpDefBuilder& OutputList(std::string name, std::string type, std::string number_attr);
  OpDefBuilder& TypeAttr(std::string name, std::vector<DType> allowed, std::optional<DType> dflt = {});
  OpDefBuilder& Attr(std::string name, AttrType type);            // required
  OpDefBuilder& Attr(std::string name, AttrValue default_value);  // optional with default
  OpDefBuilder& Attr(std::string name, const char* default_value) { return Attr(std::move(name), AttrValue(std::string(default_value))); }
  OpDefBuilder& Attr(std::string name, bool default_value) { return Attr(std::move(name), AttrValue(default_value)); }
  OpDefBuilder& Attr(std::string name, int default_value) { return Attr(std::move(name), AttrValue(int64_t{default_value})); }
  OpDefBuilder& Attr(std::string name, int64_t default_value) { return Attr(std::move(name), AttrValue(default_value)); }
  OpDefBuilder& Attr(std::string name, float default_value) { return Attr(std::move(name), AttrValue(double{default_value})); }
  OpDefBuilder& Attr(std::string name, double default_value) { return Attr(std::move(name), AttrValue(default_value)); }
  OpDefBuilder& Shape(ShapeFn fn);
  OpDefBuilder& Grad(GradFn fn);
  OpDefBuilder& NoGradient();
  OpDefBuilder& Stateful();
  OpDefBuilder& Cheap();
  OpDefBuilder& Doc(std::string doc);

 private:
  ArgDef MakeArg(std::string name, std::string type);
  OpDef* def_;
};

class OpRegistry {
 public:
  // The registry with every built-in op (registered on first call).
  static OpRegistry& Global();
  // Starts the declaration of a new op; throws AlreadyExists on a duplicate name.
  OpDefBuilder Register(std::string name);
  // Throws NotFound "unknown op 'X'" (with close names) when absent.
  const OpDef& Lookup(std::string_view name) const;
  const OpDef* Find(std::string_view name) const;
  std::vector<std::string> OpNames() const;

 private:
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops_;
};

// What a shape function sees: the node being built, its input dtypes and shapes, constant
// input values when the producer is a Const, and the attrs. Throwing Error (WEFT_REQUIRE) is
// how a shape function reports a problem; the builder adds the node's name and op.
class InferenceContext {
 public:
  InferenceContext(const Node& node, std::vector<TensorShape> input_shapes, std::vector<const Tensor*> input_values);

  const Node& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(input_shapes_.size()); }
  int num_outputs() const;
  const TensorShape& input(int i) const { return input_shapes_.at(i); }
  DType input_dtype(int i) const;
  DType output_dtype(int i) const;
  // The value of input i when known at construction (its producer is a Const), else null.
  const Tensor* input_tensor(int i) const { return input_values_.at(i); }
  // Reads a rank-1 int input that describes a shape (as Reshape's `shape`): known dims where the
  // value is known; unknown-rank when it is not (or the rank when only its length is known).
  TensorShape InputAsShape(int i) const;
  template <typename T> T attr(std::string_view name) const;

  void set_output(int i, TensorShape shape);
  const std::vector<TensorShape>& outputs() const { return outputs_; }

  // Checks rank (unknown passes); returns the shape with unknown rank replaced by `rank` unknowns.
  TensorShape WithRank(const TensorShape& s, int rank, std::string_view what) const;
  TensorShape WithRankAtLeast(const TensorShape& s, int rank, std::string_view what) const;
  // Two dims that must agree (unknowns agree with anything); returns the known one.
  int64_t MergeDim(int64_t a, int64_t b, std::string_view what) const;

 private:
  const Node& node_;
  std::vector<TensorShape> input_shapes_;
  std::vector<const Tensor*> input_values_;
  std::vector<TensorShape> outputs_;
};

// Shape functions shared by many ops.
void UnchangedShape(InferenceContext& c);     // output 0 = input 0
void BroadcastBinaryShape(InferenceContext& c);  // output 0 = broadcast(input 0, input 1)
void ScalarShape(InferenceContext& c);

}  // namespace weft
