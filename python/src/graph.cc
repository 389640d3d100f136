// weft.Graph, weft.Tensor (a node output), weft.Operation (a node), op building through the op
// registry, gradients, graph files and DOT.
#include "graph/gradients.h"
#include "graph/graph_io.h"
#include "graph/scope.h"
#include "ops/control.h"
#include "ops/op_def.h"

#include "common.h"

namespace weft::python {
namespace {

// A shape as Python sees it: a tuple with None for unknown dims, or None for an unknown rank.
py::object ShapeToPython(const TensorShape& s) {
  if (s.unknown_rank()) return py::none();
  py::tuple t(s.rank());
  for (int i = 0; i < s.rank(); ++i) t[i] = s.dim(i) < 0 ? py::object(py::none()) : py::object(py::int_(s.dim(i)));
  return t;
}

TensorShape ShapeFromPython(const py::handle& h) {
  if (h.is_none()) return TensorShape::Unknown();
  if (py::isinstance<py::int_>(h)) return TensorShape({h.cast<int64_t>()});
  std::vector<int64_t> dims;
  for (const py::handle& d : h) dims.push_back(d.is_none() ? TensorShape::kUnknownDim : d.cast<int64_t>());
  return TensorShape(dims);
}

template <typename T> std::vector<T> ListFromPython(const py::handle& h) {
  if (py::isinstance<py::int_>(h) || py::isinstance<py::float_>(h)) return {h.cast<T>()};
  std::vector<T> out;
  for (const py::handle& v : h) out.push_back(v.cast<T>());
  return out;
}

AttrValue AttrFromPython(const OpDef& def, const std::string& name, const py::handle& v) {
  const AttrDef* a = def.FindAttr(name);
  if (a == nullptr) {
    std::string known;
    for (const AttrDef& d : def.attrs) known += (known.empty() ? "" : ", ") + d.name;
    throw Error(errors::InvalidArgument("op {} has no attr '{}' (its attrs: {})", def.name, name,
                                        known.empty() ? "none" : known));
  }
  try {
    switch (a->type) {
      case AttrType::kBool: return v.cast<bool>();
      case AttrType::kInt: return v.cast<int64_t>();
      case AttrType::kFloat: return v.cast<double>();
      case AttrType::kString: return v.cast<std::string>();
      case AttrType::kType: return ToDType(v);
      case AttrType::kShape: return ShapeFromPython(v);
      case AttrType::kIntList: return ListFromPython<int64_t>(v);
      case AttrType::kFloatList: return ListFromPython<double>(v);
      case AttrType::kTensor: return NumpyToTensor(v).Clone();  // a graph never aliases a caller's array
    }
  } catch (const py::cast_error&) {
    throw Error(errors::InvalidArgument("op {}: attr '{}' must be {}, got {}", def.name, name,
                                        AttrTypeName(a->type), std::string(py::repr(v))));
  }
  throw Error(errors::Internal("attr type {} not handled", static_cast<int>(a->type)));
}

py::object AttrToPython(const AttrValue& v) {
  return std::visit([](const auto& x) -> py::object {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, TensorShape>) {
      return ShapeToPython(x);
    } else if constexpr (std::is_same_v<T, Tensor>) {
      return TensorToNumpy(x.Clone());
    } else {
      return py::cast(x);
    }
  }, v);
}

std::string ArgType(const ArgDef& a) { return a.type_attr.empty() ? std::string(DTypeName(a.fixed_type)) : a.type_attr; }

py::dict OpDefToPython(const OpDef& d) {
  py::dict out;
  out["name"] = d.name;
  py::list inputs, outputs, attrs;
  for (const ArgDef& a : d.inputs) inputs.append(py::make_tuple(a.name, ArgType(a), !a.number_attr.empty(), a.is_ref));
  for (const ArgDef& a : d.outputs) outputs.append(py::make_tuple(a.name, ArgType(a), !a.number_attr.empty()));
  for (const AttrDef& a : d.attrs) {
    py::dict ad;
    ad["name"] = a.name;
    ad["type"] = std::string(AttrTypeName(a.type));
    ad["has_default"] = a.default_value.has_value();
    ad["default"] = a.default_value ? AttrToPython(*a.default_value) : py::none();
    py::list allowed;
    for (DType t : a.allowed_types) allowed.append(t);
    ad["allowed"] = allowed;
    attrs.append(ad);
  }
  out["inputs"] = inputs;
  out["outputs"] = outputs;
  out["attrs"] = attrs;
  out["doc"] = d.doc;
  out["stateful"] = d.is_stateful;
  out["differentiable"] = static_cast<bool>(d.grad_fn) || d.no_gradient;
  return out;
}

PyTensor MakeTensor(const py::object& graph, Output out) { return PyTensor{graph, out}; }

Graph* GraphOf(const py::object& g) { return g.cast<Graph*>(); }

// Nodes of two graphs never mix: the error names the op being built and the stray input.
void SameGraph(const py::object& g, const py::object& other, const std::string& op, const std::string& what) {
  WEFT_REQUIRE(GraphOf(g) == GraphOf(other), "{}: {} is from another graph", op, what);
}

std::vector<Output> Outputs(const std::vector<PyTensor>& ts) {
  std::vector<Output> out;
  for (const PyTensor& t : ts) out.push_back(t.out);
  return out;
}

// Applies name prefix, op name, device specs (outer first) and control inputs, as Scope does in C++.
Scope MakeScope(Graph* g, const std::string& prefix, const std::string& name, const std::vector<std::string>& devices,
                const std::vector<PyOperation>& control) {
  Scope s = Scope::Root(g);
  if (!prefix.empty()) s = s.NewSubScope(prefix);
  if (!name.empty()) s = s.WithOpName(name);
  for (const std::string& d : devices) {
    if (!d.empty()) s = s.WithDevice(d);
  }
  std::vector<Node*> deps;
  for (const PyOperation& op : control) deps.push_back(op.node);
  if (!deps.empty()) s = s.WithControlDependencies(deps);
  return s;
}

}  // namespace

void InitGraph(py::module_& m) {
  py::class_<Graph, GraphPtr>(m, "Graph", py::dynamic_attr(), "A dataflow graph (graph/graph.h).")
      .def(py::init([](const py::object& path, const py::object& serialized) -> GraphPtr {
             if (!path.is_none()) return GraphPtr(LoadGraph(path.cast<std::string>()));
             if (!serialized.is_none()) return GraphPtr(ParseGraph(serialized.cast<std::string>()));
             return std::make_shared<Graph>();
           }),
           py::arg("path") = py::none(), py::arg("serialized") = py::none(),
           "An empty graph, or one loaded from a graph file (`path`) or from serialize()'d bytes.")
      .def("_add_op",
           [](py::object self, const std::string& op, const py::list& inputs, const py::dict& attrs,
              const std::string& name, const std::string& prefix, const std::vector<std::string>& devices,
              const std::vector<PyOperation>& control) {
             Graph* g = GraphOf(self);
             const OpDef& def = OpRegistry::Global().Lookup(op);
             std::vector<Output> ins;
             auto add = [&](const py::handle& h) {
               const PyTensor& t = h.cast<const PyTensor&>();
               SameGraph(self, t.graph, op, "input " + t.out.name());
               ins.push_back(t.out);
             };
             for (const py::handle& in : inputs) {
               if (py::isinstance<PyTensor>(in)) {
                 add(in);
               } else {
                 for (const py::handle& t : in) add(t);
               }
             }
             for (const PyOperation& c : control) SameGraph(self, c.graph, op, "control input " + c.node->name());
             AttrMap am;
             for (const auto& [k, v] : attrs) {
               const std::string key = k.cast<std::string>();
               am[key] = AttrFromPython(def, key, v);
             }
             Node* n = MakeScope(g, prefix, name, devices, control).AddNode(op, std::move(ins), std::move(am));
             return PyOperation{self, n};
           },
           py::arg("op"), py::arg("inputs"), py::arg("attrs"), py::arg("name") = "", py::arg("prefix") = "",
           py::arg("devices") = std::vector<std::string>{}, py::arg("control_inputs") = std::vector<PyOperation>{})
      .def("get_operation_by_name",
           [](py::object self, const std::string& name) {
             Node* n = GraphOf(self)->FindNode(name);
             if (n == nullptr) throw Error(errors::NotFound("no operation named '{}' in the graph", name));
             return PyOperation{self, n};
           }, py::arg("name"), "The operation (node) named `name`; NotFoundError if there is none.")
      .def("get_tensor_by_name",
           [](py::object self, const std::string& name) { return MakeTensor(self, GraphOf(self)->FindOutput(name)); },
           py::arg("name"), "The tensor \"node:index\" (or \"node\" for output 0); NotFoundError if absent.")
      .def("get_operations",
           [](py::object self) {
             std::vector<PyOperation> out;
             for (Node* n : GraphOf(self)->nodes()) out.push_back(PyOperation{self, n});
             return out;
           }, "Every operation, in creation order.")
      .def_property_readonly("num_nodes", &Graph::num_nodes)
      .def_property_readonly("version", &Graph::version, "Bumped on every change.")
      .def_property("seed", &Graph::seed, &Graph::set_seed,
                    "Graph-level random seed (0: none); random ops and initializers derive theirs from it.")
      .def("unique_name", [](Graph& g, const std::string& base) { return g.UniqueName(base); }, py::arg("base"))
      .def("serialize", [](const Graph& g) { return py::bytes(SerializeGraph(g)); },
           "The graph file's bytes (docs/graph-format.md).")
      .def("save", [](const Graph& g, const std::string& path) { SaveGraph(g, path); }, py::arg("path"),
           "Writes the graph to a versioned, checksummed graph file.")
      .def("to_dot", [](const Graph& g) { return ToDot(g); },
           "Graphviz text: one box per node, edges labelled with dtype and shape (`dot -Tpng` draws it).");

  py::class_<PyTensor>(m, "Tensor", "A symbolic value: output `value_index` of an operation in a graph.")
      .def(py::init([](const PyTensor& t) { return t; }), py::arg("other"), "Another handle to the same output.")
      .def_property_readonly("name", [](const PyTensor& t) { return t.out.name(); }, "\"node:index\".")
      .def_property_readonly("dtype", [](const PyTensor& t) { return t.out.dtype(); })
      .def_property_readonly("shape", [](const PyTensor& t) { return ShapeToPython(t.out.shape()); },
                             "The static shape: a tuple with None for unknown dims (None if the rank is unknown).")
      .def_property_readonly("op", [](const PyTensor& t) { return PyOperation{t.graph, t.out.node}; })
      .def_property_readonly("graph", [](const PyTensor& t) { return t.graph; })
      .def_property_readonly("value_index", [](const PyTensor& t) { return t.out.index; })
      .def_property_readonly("device", [](const PyTensor& t) { return t.out.node->requested_device(); })
      .def("get_shape", [](const PyTensor& t) { return ShapeToPython(t.out.shape()); })
      .def("__hash__", [](const PyTensor& t) { return std::hash<const void*>()(t.out.node) ^ t.out.index; })
      .def("_same", [](const PyTensor& a, const PyTensor& b) { return a.out == b.out; })
      .def("_rebind", [](PyTensor& t, const PyTensor& other) { t = other; },
           "Makes this handle refer to `other`'s output (Tensor.set_shape: the handle the user holds "
           "becomes the EnsureShape node's output).");

  py::class_<PyOperation>(m, "Operation", "A node of a graph: one op with its inputs and attrs.")
      .def_property_readonly("name", [](const PyOperation& o) { return o.node->name(); })
      .def_property_readonly("type", [](const PyOperation& o) { return o.node->op(); }, "The op's name (\"MatMul\").")
      .def_property_readonly("device", [](const PyOperation& o) { return o.node->requested_device(); },
                             "The device spec it was built under (weft.device).")
      .def_property_readonly("assigned_device", [](const PyOperation& o) { return o.node->assigned_device(); })
      .def_property_readonly("graph", [](const PyOperation& o) { return o.graph; })
      .def_property_readonly("inputs",
                             [](const PyOperation& o) {
                               std::vector<PyTensor> out;
                               for (const Output& i : o.node->inputs()) out.push_back(MakeTensor(o.graph, i));
                               return out;
                             })
      .def_property_readonly("outputs",
                             [](const PyOperation& o) {
                               std::vector<PyTensor> out;
                               for (int i = 0; i < o.node->num_outputs(); ++i) {
                                 out.push_back(MakeTensor(o.graph, Output(o.node, i)));
                               }
                               return out;
                             })
      .def_property_readonly("control_inputs",
                             [](const PyOperation& o) {
                               std::vector<PyOperation> out;
                               for (Node* n : o.node->control_inputs()) out.push_back(PyOperation{o.graph, n});
                               return out;
                             })
      .def("get_attr",
           [](const PyOperation& o, const std::string& name) {
             auto it = o.node->attrs().find(name);
             if (it == o.node->attrs().end()) {
               throw Error(errors::NotFound("{} has no attr '{}'", o.node->Describe(), name));
             }
             return AttrToPython(it->second);
           }, py::arg("name"))
      .def_property_readonly("attrs",
                             [](const PyOperation& o) {
                               py::dict d;
                               for (const auto& [k, v] : o.node->attrs()) d[py::str(k)] = AttrToPython(v);
                               return d;
                             })
      .def("__eq__", [](const PyOperation& a, const py::object& b) {
        return py::isinstance<PyOperation>(b) && b.cast<const PyOperation&>().node == a.node;
      })
      .def("__hash__", [](const PyOperation& o) { return std::hash<const void*>()(o.node); })
      .def("__repr__", [](const PyOperation& o) {
        return "<weft.Operation '" + o.node->name() + "' type=" + o.node->op() + ">";
      });

  m.def("op_defs", [] {
    py::list out;
    for (const std::string& name : OpRegistry::Global().OpNames()) out.append(OpDefToPython(OpRegistry::Global().Lookup(name)));
    return out;
  }, "Every registered op's schema: name, inputs, outputs, attrs (type, default), doc.");

  m.def("_gradients",
        [](const std::vector<PyTensor>& ys, const std::vector<PyTensor>& xs, const std::vector<PyTensor>& grad_ys,
           const std::string& prefix, const std::vector<std::vector<std::string>>& recompute) {
          WEFT_REQUIRE(!ys.empty(), "gradients: ys is empty");
          for (const auto* list : {&ys, &xs, &grad_ys}) {
            for (const PyTensor& t : *list) SameGraph(ys[0].graph, t.graph, "gradients", "tensor " + t.out.name());
          }
          Scope s = Scope::Root(GraphOf(ys[0].graph));
          if (!prefix.empty()) s = s.NewSubScope(prefix);
          GradientOptions options;  // tf.recompute_grad's blocks, by node name (graph/recompute.h)
          for (const std::vector<std::string>& names : recompute) {
            std::vector<const Node*>& block = options.recompute.emplace_back();
            for (const std::string& name : names) {
              const Node* n = s.graph()->FindNode(name);
              WEFT_REQUIRE(n != nullptr, "gradients: recompute_grad's block names node '{}', which the graph lacks", name);
              block.push_back(n);
            }
          }
          std::vector<Output> g = Gradients(s, Outputs(ys), Outputs(xs), Outputs(grad_ys), options);
          py::list out;
          for (const Output& o : g) out.append(o.valid() ? py::cast(MakeTensor(ys[0].graph, o)) : py::none());
          return out;
        },
        py::arg("ys"), py::arg("xs"), py::arg("grad_ys"), py::arg("prefix") = "",
        py::arg("recompute") = std::vector<std::vector<std::string>>());

  // The control-flow builders (ops/control.h) with Python branch and body functions, which take
  // and return flat lists of tensors (weft/control_flow_ops.py handles nested structures).
  m.def("_cond",
        [](const PyTensor& pred, const py::function& true_fn, const py::function& false_fn, const std::string& prefix,
           const std::vector<std::string>& devices) {
          const py::object graph = pred.graph;
          auto branch = [&](const py::function& fn, const char* which) {
            return [&fn, &graph, which](const Scope&) {
              std::vector<Output> outs;
              for (const py::handle& h : py::list(fn())) {
                WEFT_REQUIRE(py::isinstance<PyTensor>(h), "cond: {} returned {}, not a tensor", which,
                             std::string(py::repr(h)));
                const PyTensor& t = h.cast<const PyTensor&>();
                SameGraph(graph, t.graph, "cond", "tensor " + t.out.name());
                outs.push_back(t.out);
              }
              return outs;
            };
          };
          const Scope s = MakeScope(GraphOf(graph), prefix, "", devices, {});
          py::list out;
          for (const Output& o : ops::Cond(s, pred.out, branch(true_fn, "true_fn"), branch(false_fn, "false_fn"))) {
            out.append(MakeTensor(graph, o));
          }
          return out;
        },
        py::arg("pred"), py::arg("true_fn"), py::arg("false_fn"), py::arg("prefix") = "",
        py::arg("devices") = std::vector<std::string>{});
  m.def("_while_loop",
        [](const std::vector<PyTensor>& loop_vars, const py::function& cond, const py::function& body,
           int64_t parallel_iterations, const std::optional<PyTensor>& maximum_iterations,
           const std::vector<py::object>& shape_invariants, const std::vector<std::string>& names,
           const std::string& prefix, const std::vector<std::string>& devices) {
          WEFT_REQUIRE(!loop_vars.empty(), "while_loop: loop_vars is empty");
          const py::object graph = loop_vars[0].graph;
          for (const PyTensor& t : loop_vars) SameGraph(graph, t.graph, "while_loop", "loop variable " + t.out.name());
          auto wrap = [&](const std::vector<Output>& vars) {
            py::list l;
            for (const Output& o : vars) l.append(MakeTensor(graph, o));
            return l;
          };
          auto tensor = [&](const py::handle& h, const std::string& what) {
            WEFT_REQUIRE(py::isinstance<PyTensor>(h), "while_loop: {} is {}, not a tensor", what,
                         std::string(py::repr(h)));
            const PyTensor& t = h.cast<const PyTensor&>();
            SameGraph(graph, t.graph, "while_loop", what);
            return t.out;
          };
          ops::WhileOptions options;
          options.parallel_iterations = parallel_iterations;
          if (maximum_iterations) options.maximum_iterations = maximum_iterations->out;
          for (const py::object& sh : shape_invariants) options.shape_invariants.push_back(ShapeFromPython(sh));
          options.names = names;
          const Scope s = MakeScope(GraphOf(graph), prefix, "", devices, {});
          std::vector<Output> out = ops::WhileLoop(
              s, Outputs(loop_vars),
              [&](const Scope&, const std::vector<Output>& v) { return tensor(cond(wrap(v)), "cond's result"); },
              [&](const Scope&, const std::vector<Output>& v) {
                std::vector<Output> outs;
                for (const py::handle& h : py::list(body(wrap(v)))) outs.push_back(tensor(h, "a result of body"));
                return outs;
              },
              options);
          return wrap(out);
        },
        py::arg("loop_vars"), py::arg("cond"), py::arg("body"), py::arg("parallel_iterations") = 10,
        py::arg("maximum_iterations") = py::none(), py::arg("shape_invariants") = std::vector<py::object>{},
        py::arg("names") = std::vector<std::string>{}, py::arg("prefix") = "",
        py::arg("devices") = std::vector<std::string>{});

  m.def("merge_device", [](const std::string& outer, const std::string& inner) {
    Graph g;
    return Scope::Root(&g).WithDevice(outer).WithDevice(inner).device();
  }, py::arg("outer"), py::arg("inner"), "The device spec `inner` merged over `outer` (the inner one wins).");
}

}  // namespace weft::python
