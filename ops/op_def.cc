#include "ops/op_def.h"

#include <fmt/format.h>
#include <strings.h>

#include <optional>

#include "graph/graph.h"

namespace weft {

const AttrDef* OpDef::FindAttr(std::string_view n) const {
  for (const AttrDef& a : attrs) if (a.name == n) return &a;
  return nullptr;
}

ArgDef OpDefBuilder::MakeArg(std::string name, std::string type) {
  ArgDef a;
  a.name = std::move(name);
  try {
    a.fixed_type = ParseDType(type);
  } catch (const Error&) {
    a.type_attr = std::move(type);
  }
  return a;
}

OpDefBuilder& OpDefBuilder::Input(std::string name, std::string type) {
  def_->inputs.push_back(MakeArg(std::move(name), std::move(type)));
  return *this;
}
OpDefBuilder& OpDefBuilder::RefInput(std::string name, std::string type) {
  ArgDef a = MakeArg(std::move(name), std::move(type));
  a.is_ref = true;
  def_->inputs.push_back(std::move(a));
  return *this;
}
OpDefBuilder& OpDefBuilder::InputList(std::string name, std::string type, std::string number_attr) {
  ArgDef a = MakeArg(std::move(name), std::move(type));
  a.number_attr = number_attr;
  def_->inputs.push_back(std::move(a));
  if (!def_->FindAttr(number_attr)) def_->attrs.push_back({number_attr, AttrType::kInt, std::nullopt, {}});
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string name, std::string type) {
  def_->outputs.push_back(MakeArg(std::move(name), std::move(type)));
  return *this;
}
OpDefBuilder& OpDefBuilder::OutputList(std::string name, std::string type, std::string number_attr) {
  ArgDef a = MakeArg(std::move(name), std::move(type));
  a.number_attr = number_attr;
  def_->outputs.push_back(std::move(a));
  if (!def_->FindAttr(number_attr)) def_->attrs.push_back({number_attr, AttrType::kInt, std::nullopt, {}});
  return *this;
}
OpDefBuilder& OpDefBuilder::TypeAttr(std::string name, std::vector<DType> allowed, std::optional<DType> dflt) {
  std::optional<AttrValue> d;
  if (dflt) d = AttrValue(*dflt);
  def_->attrs.push_back({std::move(name), AttrType::kType, d, std::move(allowed)});
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string name, AttrType type) {
  def_->attrs.push_back({std::move(name), type, std::nullopt, {}});
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string name, AttrValue default_value) {
  const AttrType t = TypeOf(default_value);
  def_->attrs.push_back({std::move(name), t, std::move(default_value), {}});
  return *this;
}
OpDefBuilder& OpDefBuilder::Shape(ShapeFn fn) { def_->shape_fn = std::move(fn); return *this; }
OpDefBuilder& OpDefBuilder::Grad(GradFn fn) { def_->grad_fn = std::move(fn); return *this; }
OpDefBuilder& OpDefBuilder::NoGradient() { def_->no_gradient = true; return *this; }
OpDefBuilder& OpDefBuilder::Stateful() { def_->is_stateful = true; return *this; }
OpDefBuilder& OpDefBuilder::Cheap() { def_->cheap = true; return *this; }
OpDefBuilder& OpDefBuilder::Doc(std::string doc) { def_->doc = std::move(doc); return *this; }

OpDefBuilder OpRegistry::Register(std::string name) {
  if (ops_.count(name)) throw Error(errors::AlreadyExists("op '{}' registered twice", name));
  auto def = std::make_unique<OpDef>();
  def->name = name;
  OpDef* raw = def.get();
  ops_.emplace(std::move(name), std::move(def));
  return OpDefBuilder(raw);
}

const OpDef* OpRegistry::Find(std::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

const OpDef& OpRegistry::Lookup(std::string_view name) const {
  if (const OpDef* d = Find(name)) return *d;
  // Suggest names that differ only in case, or share a prefix.
  std::vector<std::string> close;
  for (const auto& [n, d] : ops_) {
    if (n.size() >= 3 && name.size() >= 3 &&
        (strncasecmp(n.c_str(), std::string(name).c_str(), 3) == 0)) close.push_back(n);
  }
  if (close.empty()) throw Error(errors::NotFound("unknown op '{}'", name));
  throw Error(errors::NotFound("unknown op '{}' (did you mean {}?)", name, fmt::join(close, ", ")));
}

std::vector<std::string> OpRegistry::OpNames() const {
  std::vector<std::string> names;
  for (const auto& [n, d] : ops_) names.push_back(n);
  return names;
}

// ---- InferenceContext

InferenceContext::InferenceContext(const Node& node, std::vector<TensorShape> input_shapes,
                                   std::vector<const Tensor*> input_values)
    : node_(node), input_shapes_(std::move(input_shapes)), input_values_(std::move(input_values)) {
  outputs_.assign(node.num_outputs(), TensorShape::Unknown());
}

int InferenceContext::num_outputs() const { return node_.num_outputs(); }
DType InferenceContext::input_dtype(int i) const { return node_.input_dtypes().at(i); }
DType InferenceContext::output_dtype(int i) const { return node_.output_dtype(i); }

template <typename T> T InferenceContext::attr(std::string_view name) const { return node_.attr<T>(name); }
template bool InferenceContext::attr<bool>(std::string_view) const;
template int64_t InferenceContext::attr<int64_t>(std::string_view) const;
template int InferenceContext::attr<int>(std::string_view) const;
template double InferenceContext::attr<double>(std::string_view) const;
template float InferenceContext::attr<float>(std::string_view) const;
template std::string InferenceContext::attr<std::string>(std::string_view) const;
template DType InferenceContext::attr<DType>(std::string_view) const;
template TensorShape InferenceContext::attr<TensorShape>(std::string_view) const;
template std::vector<int64_t> InferenceContext::attr<std::vector<int64_t>>(std::string_view) const;
template std::vector<double> InferenceContext::attr<std::vector<double>>(std::string_view) const;
template Tensor InferenceContext::attr<Tensor>(std::string_view) const;

void InferenceContext::set_output(int i, TensorShape shape) {
  WEFT_REQUIRE(i >= 0 && i < num_outputs(), "shape function sets output {} of {}", i, num_outputs());
  outputs_[i] = std::move(shape);
}

namespace {

// What the graph tells, before anything runs, about the value of an int vector or scalar output:
// one entry per element, -1 where that element is unknown; nullopt when not even its length is
// known. TensorFlow's partial shape from a shape tensor: `reshape(x, [shape(x)[0], -1, 4, 8])`
// is packed from a Shape slice and constants, so its last two dims are known when the graph is
// built, and the layers after it can size their weights.
std::optional<std::vector<int64_t>> PartialIntValue(const Output& o, int depth) {
  const Node& n = *o.node;
  const TensorShape& shape = o.shape();
  auto unknown = [&]() -> std::optional<std::vector<int64_t>> {
    if (shape.unknown_rank() || shape.rank() > 1) return std::nullopt;
    if (shape.rank() == 0) return std::vector<int64_t>{-1};
    // Longer than any rank: not a shape (the caller's rank check names it).
    if (shape.dim(0) < 0 || shape.dim(0) > TensorShape::kMaxRank) return std::nullopt;
    return std::vector<int64_t>(shape.dim(0), -1);
  };
  if (depth > 16 || !IsInteger(n.output_dtype(o.index))) return unknown();
  const std::string& op = n.op();
  if (op == "Const") {
    const Tensor t = n.attr<Tensor>("value");
    if (t.rank() > 1 || t.num_elements() > TensorShape::kMaxRank) return std::nullopt;
    std::vector<int64_t> v(t.num_elements());
    for (int64_t k = 0; k < t.num_elements(); ++k) v[k] = t.ElementAsInt64(k);
    return v;
  }
  if (op == "Shape") {
    const TensorShape& in = n.input(0).shape();
    if (in.unknown_rank()) return unknown();
    std::vector<int64_t> v(in.rank());
    for (int k = 0; k < in.rank(); ++k) v[k] = in.dim(k) < 0 ? -1 : in.dim(k);
    return v;
  }
  if (op == "Cast" || op == "Identity" || op == "Reshape" || op == "ExpandDims" || op == "Squeeze") {
    // The same elements in another shape: only a scalar or a vector is tracked.
    auto in = PartialIntValue(n.input(0), depth + 1);
    if (in && (shape.unknown_rank() || shape.num_elements() == static_cast<int64_t>(in->size()) || shape.rank() <= 1))
      return in;
    return unknown();
  }
  if (op == "Concat" && n.attr<int64_t>("axis") == 0) {
    std::vector<int64_t> v;
    for (const Output& in : n.inputs()) {
      auto part = PartialIntValue(in, depth + 1);
      if (!part) return unknown();
      v.insert(v.end(), part->begin(), part->end());
    }
    return v;
  }
  if (op == "StridedSlice" && n.attr<int64_t>("shrink_axis_mask") == 1 && n.attr<int64_t>("begin_mask") == 0) {
    // x[k] of a vector: the scalar `tf.shape(x)[k]`.
    const auto begin = n.attr<std::vector<int64_t>>("begin");
    auto in = PartialIntValue(n.input(0), depth + 1);
    if (in && begin.size() == 1) {
      const int64_t len = static_cast<int64_t>(in->size());
      const int64_t k = begin[0] < 0 ? begin[0] + len : begin[0];
      if (k >= 0 && k < len) return std::vector<int64_t>{(*in)[k]};
    }
  }
  return unknown();
}

}  // namespace

TensorShape InferenceContext::InputAsShape(int i) const {
  if (input_tensor(i) == nullptr && i < node_.num_inputs()) {
    if (auto v = PartialIntValue(node_.input(i), 0)) {
      const TensorShape& s = input(i);
      if (s.rank() == 1 && s.dim(0) == static_cast<int64_t>(v->size())) {
        for (int64_t& d : *v) d = d < 0 ? -1 : d;  // -1 (Reshape's "the rest") is unknown here too
        return TensorShape(*v);
      }
    }
  }
  if (const Tensor* t = input_tensor(i)) {
    WEFT_REQUIRE(t->rank() == 1, "input {} must be a vector of dims, got {}", i, t->DebugString());
    std::vector<int64_t> dims(t->num_elements());
    for (int64_t k = 0; k < t->num_elements(); ++k) {
      dims[k] = t->ElementAsInt64(k);
      WEFT_REQUIRE(dims[k] >= -1, "input {} has negative dimension {} in {}", i, dims[k], t->ValuesString());
    }
    return TensorShape(dims);
  }
  const TensorShape& s = input(i);
  if (s.rank() == 1 && s.dim(0) >= 0) return TensorShape::UnknownOfRank(s.dim(0));  // checks the rank limit
  return TensorShape::Unknown();
}

TensorShape InferenceContext::WithRank(const TensorShape& s, int rank, std::string_view what) const {
  if (s.unknown_rank()) return TensorShape::UnknownOfRank(rank);
  WEFT_REQUIRE(s.rank() == rank, "{} must have rank {}, got shape {}", what, rank, s.ToString());
  return s;
}

TensorShape InferenceContext::WithRankAtLeast(const TensorShape& s, int rank, std::string_view what) const {
  if (s.unknown_rank()) return s;
  WEFT_REQUIRE(s.rank() >= rank, "{} must have rank at least {}, got shape {}", what, rank, s.ToString());
  return s;
}

int64_t InferenceContext::MergeDim(int64_t a, int64_t b, std::string_view what) const {
  if (a < 0) return b;
  if (b < 0) return a;
  WEFT_REQUIRE(a == b, "{}: dimensions differ ({} vs {})", what, a, b);
  return a;
}

void UnchangedShape(InferenceContext& c) { c.set_output(0, c.input(0)); }
void BroadcastBinaryShape(InferenceContext& c) { c.set_output(0, BroadcastShapes(c.input(0), c.input(1))); }
void ScalarShape(InferenceContext& c) { c.set_output(0, TensorShape{}); }

}  // namespace weft
