#include "graph/graph.h"

#include <fmt/format.h>

#include <charconv>
#include <queue>
#include <set>

#include "core/checked.h"

namespace weft {

DType Output::dtype() const { return node->output_dtype(index); }
const TensorShape& Output::shape() const { return node->output_shape(index); }
std::string Output::name() const { return fmt::format("{}:{}", node->name(), index); }
bool Output::operator<(const Output& o) const {
  const int a = node ? node->id() : -1, b = o.node ? o.node->id() : -1;
  return a != b ? a < b : index < o.index;
}

std::string Node::Describe() const { return fmt::format("{} '{}'", def_->name, name_); }

namespace {

// Fills attrs and type attrs of a new node from its spec; returns input/output dtypes.
void ResolveTypes(const OpDef& def, const NodeSpec& spec, AttrMap& attrs, std::vector<DType>& in_types,
                  std::vector<DType>& out_types) {
  // Unknown attrs and attr types.
  for (auto& [name, value] : attrs) {
    if (name.starts_with('_')) continue;  // framework attrs ("_colocate_with"), not part of the op's schema
    const AttrDef* a = def.FindAttr(name);
    WEFT_REQUIRE(a != nullptr, "unknown attr '{}' for op {}", name, def.name);
    AttrType got = TypeOf(value);
    if (got != a->type) {
      if (a->type == AttrType::kFloat && got == AttrType::kInt) {
        value = static_cast<double>(std::get<int64_t>(value));
      } else if (a->type == AttrType::kFloatList && got == AttrType::kIntList) {
        const auto& l = std::get<std::vector<int64_t>>(value);
        value = std::vector<double>(l.begin(), l.end());
      } else if (a->type == AttrType::kShape && got == AttrType::kIntList) {
        value = TensorShape(std::get<std::vector<int64_t>>(value));
      } else {
        throw Error(errors::InvalidArgument("attr '{}' must be {}, got {} ({})", name, AttrTypeName(a->type),
                                            AttrTypeName(got), AttrValueString(value)));
      }
    }
  }
  // List lengths.
  int fixed = 0, lists = 0;
  for (const ArgDef& a : def.inputs) (a.number_attr.empty() ? fixed : lists)++;
  const int n_in = static_cast<int>(spec.inputs.size());
  if (lists == 0) {
    WEFT_REQUIRE(n_in == fixed, "expects {} inputs, got {}", fixed, n_in);
  } else {
    WEFT_REQUIRE(n_in >= fixed, "expects at least {} inputs, got {}", fixed, n_in);
    for (const ArgDef& a : def.inputs) {
      if (a.number_attr.empty()) continue;
      const int64_t n = n_in - fixed;
      auto it = attrs.find(a.number_attr);
      if (it != attrs.end()) {
        WEFT_REQUIRE(std::get<int64_t>(it->second) == n, "attr '{}' = {} but {} inputs given for '{}'",
                     a.number_attr, std::get<int64_t>(it->second), n, a.name);
      }
      attrs[a.number_attr] = n;
    }
  }
  // Type attrs from inputs.
  std::map<std::string, std::string> type_source;
  int k = 0;
  for (const ArgDef& a : def.inputs) {
    const int count = a.number_attr.empty() ? 1 : static_cast<int>(std::get<int64_t>(attrs[a.number_attr]));
    for (int j = 0; j < count; ++j, ++k) {
      const DType got = spec.inputs[k].dtype();
      const std::string arg = count > 1 || !a.number_attr.empty() ? fmt::format("{}[{}]", a.name, j) : a.name;
      if (!a.type_attr.empty()) {
        auto it = attrs.find(a.type_attr);
        if (it == attrs.end()) {
          attrs[a.type_attr] = got;
          type_source[a.type_attr] = arg;
        } else if (std::get<DType>(it->second) != got) {
          auto src = type_source.find(a.type_attr);
          throw Error(errors::InvalidArgument(
              "input '{}' ({}) has dtype {} but {} is {}{}", arg, spec.inputs[k].name(), DTypeName(got), a.type_attr,
              DTypeName(std::get<DType>(it->second)),
              src == type_source.end() ? std::string(" (attr)") : fmt::format(" (from input '{}')", src->second)));
        }
      } else {
        WEFT_REQUIRE(got == a.fixed_type, "input '{}' ({}) must be {}, got {}", arg, spec.inputs[k].name(),
                     DTypeName(a.fixed_type), DTypeName(got));
      }
      in_types.push_back(got);
    }
  }
  // Defaults, required attrs, allowed types.
  for (const AttrDef& a : def.attrs) {
    auto it = attrs.find(a.name);
    if (it == attrs.end()) {
      WEFT_REQUIRE(a.default_value.has_value(), "missing attr '{}' ({})", a.name, AttrTypeName(a.type));
      attrs[a.name] = *a.default_value;
    } else if (a.type == AttrType::kType && !a.allowed_types.empty()) {
      const DType t = std::get<DType>(it->second);
      if (std::find(a.allowed_types.begin(), a.allowed_types.end(), t) == a.allowed_types.end()) {
        std::vector<std::string_view> names;
        for (DType d : a.allowed_types) names.push_back(DTypeName(d));
        throw Error(errors::InvalidArgument("attr '{}' = {} is not allowed (allowed: {})", a.name, DTypeName(t),
                                            fmt::join(names, ", ")));
      }
    }
  }
  for (const ArgDef& a : def.outputs) {
    const DType t = a.type_attr.empty() ? a.fixed_type : std::get<DType>(attrs.at(a.type_attr));
    const int64_t count = a.number_attr.empty() ? 1 : std::get<int64_t>(attrs.at(a.number_attr));
    // A list output's length sizes the node itself (one dtype, shape and edge slot per output); a
    // graph file can say anything, so it is bounded here for every op, before any shape function or
    // kernel sees it.
    CheckAttrRange(count, 0, kMaxListArity, a.number_attr);
    for (int64_t j = 0; j < count; ++j) out_types.push_back(t);
  }
}

}  // namespace

Node* Graph::AddNode(NodeSpec spec) {
  const OpDef& def = OpRegistry::Global().Lookup(spec.op);
  WEFT_REQUIRE(!spec.name.empty(), "{} node needs a name", spec.op);
  const std::string who = fmt::format("{} '{}'", spec.op, spec.name);
  if (by_name_.count(spec.name)) throw Error(errors::AlreadyExists("{}: a node with this name exists", who));
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const Output& in = spec.inputs[i];
    if (!in.valid() || FindNode(in.node->name()) != in.node) {
      throw Error(errors::InvalidArgument("{}: input {} is {}", who, i,
                                          in.valid() ? "from another graph" : "a null Output"));
    }
    if (in.index < 0 || in.index >= in.node->num_outputs()) {
      throw Error(errors::InvalidArgument("{}: input {} refers to output {} of {}, which has {} outputs", who, i,
                                          in.index, in.node->Describe(), in.node->num_outputs()));
    }
  }
  for (Node* c : spec.control_inputs) {
    if (c == nullptr || FindNode(c->name()) != c) {
      throw Error(errors::InvalidArgument("{}: control input not in this graph", who));
    }
  }
  auto node = std::make_unique<Node>();
  node->name_ = spec.name;
  node->def_ = &def;
  node->attrs_ = std::move(spec.attrs);
  node->requested_device_ = spec.device;
  try {
    ResolveTypes(def, spec, node->attrs_, node->input_dtypes_, node->output_dtypes_);
    node->inputs_ = spec.inputs;
    int k = 0;
    for (const ArgDef& a : def.inputs) {
      if (a.is_ref) {
        const Node* src = spec.inputs.at(k).node;
        WEFT_REQUIRE(src->op() == "Variable", "ref input '{}' must come from a Variable, got {}", a.name,
                     src->Describe());
      }
      k += a.number_attr.empty() ? 1 : static_cast<int>(std::get<int64_t>(node->attrs_.at(a.number_attr)));
    }
    node->output_shapes_.assign(node->output_dtypes_.size(), TensorShape::Unknown());
    if (def.shape_fn) {
      std::vector<TensorShape> shapes;
      std::vector<const Tensor*> values;
      for (const Output& in : spec.inputs) {
        shapes.push_back(in.shape());
        const Tensor* v = nullptr;
        if (in.node->op() == "Const") {
          auto it = in.node->attrs_.find("value");
          if (it != in.node->attrs_.end()) v = std::get_if<Tensor>(&it->second);
        }
        values.push_back(v);
      }
      InferenceContext ctx(*node, std::move(shapes), std::move(values));
      def.shape_fn(ctx);
      node->output_shapes_ = ctx.outputs();
    }
  } catch (const Error& e) {
    throw Error(e.status().WithContext(who));
  }
  Node* raw = node.get();
  raw->id_ = static_cast<int>(nodes_.size());
  for (size_t i = 0; i < spec.inputs.size(); ++i) spec.inputs[i].node->out_edges_.emplace_back(raw, static_cast<int>(i));
  for (Node* c : spec.control_inputs) {
    raw->control_inputs_.push_back(c);
    c->out_edges_.emplace_back(raw, -1);
  }
  by_name_[raw->name_] = raw;
  nodes_.push_back(std::move(node));
  ++num_live_;
  ++version_;
  return raw;
}

Node* Graph::CopyNode(const Node& src, std::vector<Output> inputs, std::vector<Node*> control_inputs,
                      std::string name) {
  auto node = std::make_unique<Node>();
  node->name_ = name.empty() ? src.name_ : std::move(name);
  if (by_name_.count(node->name_)) throw Error(errors::AlreadyExists("node '{}' exists", node->name_));
  node->def_ = src.def_;
  node->attrs_ = src.attrs_;
  node->input_dtypes_ = src.input_dtypes_;
  node->output_dtypes_ = src.output_dtypes_;
  node->output_shapes_ = src.output_shapes_;
  node->requested_device_ = src.requested_device_;
  node->assigned_device_ = src.assigned_device_;
  Node* raw = node.get();
  raw->id_ = static_cast<int>(nodes_.size());
  raw->inputs_ = std::move(inputs);
  for (size_t i = 0; i < raw->inputs_.size(); ++i) raw->inputs_[i].node->out_edges_.emplace_back(raw, static_cast<int>(i));
  for (Node* c : control_inputs) {
    raw->control_inputs_.push_back(c);
    c->out_edges_.emplace_back(raw, -1);
  }
  by_name_[raw->name_] = raw;
  nodes_.push_back(std::move(node));
  ++num_live_;
  ++version_;
  return raw;
}

void Graph::RemoveNode(Node* n) {
  WEFT_REQUIRE(n->out_edges_.empty(), "cannot remove {}: it still has {} consumers", n->Describe(), n->out_edges_.size());
  auto drop = [n](Node* src, int index) {
    auto& e = src->out_edges_;
    for (auto it = e.begin(); it != e.end(); ++it) {
      if (it->first == n && it->second == index) {
        e.erase(it);
        return;
      }
    }
  };
  for (size_t i = 0; i < n->inputs_.size(); ++i) drop(n->inputs_[i].node, static_cast<int>(i));
  for (Node* c : n->control_inputs_) drop(c, -1);
  by_name_.erase(n->name_);
  const int id = n->id_;
  nodes_[id].reset();
  --num_live_;
  ++version_;
}

void Graph::UpdateInput(Node* dst, int i, Output src) {
  WEFT_REQUIRE(src.dtype() == dst->input_dtypes_.at(i), "{}: input {} must be {}, got {} ({})", dst->Describe(), i,
               DTypeName(dst->input_dtypes_.at(i)), DTypeName(src.dtype()), src.name());
  Node* old = dst->inputs_[i].node;
  auto& e = old->out_edges_;
  for (auto it = e.begin(); it != e.end(); ++it) {
    if (it->first == dst && it->second == i) {
      e.erase(it);
      break;
    }
  }
  dst->inputs_[i] = src;
  src.node->out_edges_.emplace_back(dst, i);
  ++version_;
}

void Graph::AddControlEdge(Node* src, Node* dst) {
  for (Node* c : dst->control_inputs_) if (c == src) return;
  dst->control_inputs_.push_back(src);
  src->out_edges_.emplace_back(dst, -1);
  ++version_;
}

void Graph::ReplaceUses(Output from, Output to) {
  std::vector<std::pair<Node*, int>> edges;
  for (auto& e : from.node->out_edges_) {
    if (e.second >= 0 && e.first->inputs_[e.second] == from) edges.push_back(e);
  }
  for (auto& [dst, i] : edges) UpdateInput(dst, i, to);
}

void Graph::ReplaceControlUses(Node* from, Node* to) {
  std::vector<Node*> dsts;
  for (auto& e : from->out_edges_) if (e.second < 0) dsts.push_back(e.first);
  for (Node* d : dsts) {
    auto& ci = d->control_inputs_;
    ci.erase(std::remove(ci.begin(), ci.end(), from), ci.end());
    AddControlEdge(to, d);
  }
  auto& e = from->out_edges_;
  e.erase(std::remove_if(e.begin(), e.end(), [](auto& p) { return p.second < 0; }), e.end());
}

Node* Graph::FindNode(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Output Graph::FindOutput(std::string_view tensor_name) const {
  std::string_view node_name = tensor_name;
  int index = 0;
  const size_t colon = tensor_name.rfind(':');
  if (colon != std::string_view::npos) {
    std::string_view idx = tensor_name.substr(colon + 1);
    auto [p, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), index);
    if (ec != std::errc() || p != idx.data() + idx.size() || index < 0) {
      throw Error(errors::InvalidArgument("bad tensor name '{}' (expected 'node' or 'node:index')", tensor_name));
    }
    node_name = tensor_name.substr(0, colon);
  }
  Node* n = FindNode(node_name);
  if (n == nullptr) throw Error(errors::NotFound("no tensor '{}': no node named '{}'", tensor_name, node_name));
  if (index >= n->num_outputs()) {
    throw Error(errors::NotFound("no tensor '{}': {} has {} outputs", tensor_name, n->Describe(), n->num_outputs()));
  }
  return Output(n, index);
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> r;
  r.reserve(num_live_);
  for (const auto& n : nodes_) if (n) r.push_back(n.get());
  return r;
}

std::string Graph::UniqueName(std::string_view base) {
  std::string name(base);
  if (!by_name_.count(name)) return name;
  int& counter = name_counters_[name];
  std::string candidate;
  do {
    candidate = fmt::format("{}_{}", base, ++counter);
  } while (by_name_.count(candidate));
  return candidate;
}

std::unique_ptr<Graph> Graph::Clone() const {
  auto g = std::make_unique<Graph>();
  g->seed_ = seed_;
  g->op_seed_counter_ = op_seed_counter_;
  std::map<const Node*, Node*> map;
  auto mapped = [&](const Output& o) {
    auto it = map.find(o.node);
    return it == map.end() ? Output() : Output(it->second, o.index);
  };
  BackEdges back;
  for (Node* n : TopologicalOrder(nodes())) {
    std::vector<Output> ins = back.Inputs(*n, mapped);
    std::vector<Node*> ctrl;
    for (Node* c : n->control_inputs()) ctrl.push_back(map.at(c));
    map[n] = g->CopyNode(*n, std::move(ins), std::move(ctrl));
    back.Copied(map[n]);
  }
  back.Apply(g.get(), mapped);
  return g;
}

std::vector<Output> BackEdges::Inputs(const Node& n, const Map& mapped) {
  last_.clear();
  std::vector<Output> ins;
  for (int i = 0; i < n.num_inputs(); ++i) {
    Output m = mapped(n.input(i));
    if (!m.valid() && i > 0 && n.input(i).node->op() == "NextIteration") {
      last_.emplace_back(i, n.input(i));
      m = ins[0];
    }
    if (!m.valid()) {
      throw Error(errors::Internal("{}: input {} ('{}') has no copy yet", n.Describe(), i, n.input(i).name()));
    }
    ins.push_back(m);
  }
  return ins;
}

void BackEdges::Copied(Node* copy) {
  for (const auto& [i, original] : last_) pending_.push_back({copy, i, original});
  last_.clear();
}

void BackEdges::Apply(Graph* g, const Map& mapped) {
  for (const Pending& p : pending_) g->UpdateInput(p.copy, p.input, mapped(p.original));
  pending_.clear();
}

std::vector<Node*> TopologicalOrder(const std::vector<Node*>& nodes) {
  // Kahn's algorithm taking the smallest ready id first, so the order is deterministic and equals
  // id order whenever that is already topological (always, unless edges were added afterwards).
  std::set<const Node*> in_set(nodes.begin(), nodes.end());
  std::map<const Node*, int> pending;
  auto later = [](const Node* a, const Node* b) { return a->id() > b->id(); };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later)> ready(later);
  std::vector<Node*> order;
  // The edge NextIteration -> Merge is a while loop's back edge (graph/control_flow.h): it is
  // not an ordering constraint, so a loop is no cycle.
  auto back_edge = [](const Node* src) { return src->op() == "NextIteration"; };
  for (Node* n : nodes) {
    int count = 0;
    for (const Output& o : n->inputs()) count += !back_edge(o.node) && in_set.count(o.node);
    for (Node* c : n->control_inputs()) count += in_set.count(c);
    pending[n] = count;
    if (count == 0) ready.push(n);
  }
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    order.push_back(n);
    for (const auto& [dst, idx] : n->out_edges()) {
      if (!in_set.count(dst) || (idx >= 0 && back_edge(n))) continue;
      if (--pending[dst] == 0) ready.push(dst);
    }
  }
  if (order.size() != nodes.size()) {
    std::vector<std::string> stuck;
    for (Node* n : nodes) {
      if (pending[n] > 0 && stuck.size() < 8) stuck.push_back("'" + n->name() + "'");
    }
    throw Error(errors::InvalidArgument("graph has a cycle through nodes {}", fmt::join(stuck, ", ")));
  }
  return order;
}

}  // namespace weft
