// The C++ pieces behind the TensorFlow-shaped file writers of the Python package: the checkpoint
// files of weft.train.Saver (weft's own format, train/checkpoint.h) and what the TensorBoard event
// writer (python/weft/_events.py) needs from C++: CRC-32C, and a graph's nodes as TensorBoard's
// GraphDef wants them (name, op, inputs, device), for a weft.Graph or a Keras model's graph.
//
//   _weft._save_checkpoint("/tmp/m.ckpt-10.weft", [("w", np.ones(3, np.float32))])
//   d = _weft._load_checkpoint("/tmp/m.ckpt-10.weft")        # {"w": array([1., 1., 1.])}
//   _weft._crc32c(b"123456789")                                # 0xE3069283
//   _weft._graph_nodes(graph)   # [("x", "Placeholder", [], "", "float32"), ...]
#include "core/crc32c.h"
#include "core/file.h"
#include "train/checkpoint.h"
#include "train/model.h"

#include "common.h"

namespace weft::python {
namespace {

// TensorBoard's input names: "node" for output 0, "node:i" otherwise, "^node" for control inputs.
std::vector<std::string> InputNames(const Node& n) {
  std::vector<std::string> out;
  for (const Output& o : n.inputs()) {
    out.push_back(o.index == 0 ? o.node->name() : o.node->name() + ":" + std::to_string(o.index));
  }
  for (const Node* c : n.control_inputs()) out.push_back("^" + c->name());
  return out;
}

py::list GraphNodes(const Graph& g) {
  py::list out;
  for (const Node* n : g.nodes()) {
    if (n == nullptr) continue;
    const std::string dtype = n->num_outputs() > 0 ? std::string(DTypeName(n->output_dtype(0))) : "";
    const std::string& device = n->assigned_device().empty() ? n->requested_device() : n->assigned_device();
    out.append(py::make_tuple(n->name(), n->op(), InputNames(*n), device, dtype));
  }
  return out;
}

}  // namespace

void InitTf1Io(py::module_& m) {
  m.def("_save_checkpoint",
        [](const std::string& path, const std::vector<std::pair<std::string, py::object>>& named) {
          std::vector<std::pair<std::string, Tensor>> tensors;
          tensors.reserve(named.size());
          for (const auto& [name, value] : named) tensors.emplace_back(name, NumpyToTensor(value));
          py::gil_scoped_release release;
          train::SaveCheckpoint(path, tensors);
        },
        py::arg("path"), py::arg("tensors"),
        "Writes (name, array) pairs to one checkpoint file, atomically (train/checkpoint.h).");
  m.def("_load_checkpoint",
        [](const std::string& path) {
          std::map<std::string, Tensor> loaded;
          {
            py::gil_scoped_release release;
            loaded = train::LoadCheckpoint(path);
          }
          py::dict d;
          for (auto& [name, t] : loaded) d[py::str(name)] = TensorToNumpy(t);
          return d;
        },
        py::arg("path"), "Reads and verifies a checkpoint file: {name: array}.");
  m.def("_latest_weft_checkpoint", &train::LatestCheckpoint, py::arg("dir"),
        "The highest-step `dir`/ckpt-<step>.weft (weft's training-loop convention), or \"\".");
  m.def("_check_regular_file",
        [](const std::string& path, const std::string& what) { ThrowIfError(CheckRegularFile(path, what)); },
        py::arg("path"), py::arg("what"),
        "Raises NotFoundError / FailedPreconditionError (naming `what` and the path) unless `path` is a regular "
        "file: the check every reader of a file makes before opening it (core/file.h).");
  m.def("_crc32c",
        [](const py::bytes& data) {
          std::string_view s = data;
          return Crc32c(s.data(), s.size());
        },
        py::arg("data"), "CRC-32C (Castagnoli) of the bytes.");
  m.def("_graph_nodes",
        [](const py::object& graph_or_model) -> py::list {
          if (py::isinstance<train::Model>(graph_or_model)) {
            Graph* g = graph_or_model.cast<train::Model&>().graph();
            if (g == nullptr) throw Error(errors::FailedPrecondition("the model has no graph yet (compile it first)"));
            return GraphNodes(*g);
          }
          return GraphNodes(*graph_or_model.cast<Graph*>());
        },
        py::arg("graph"),
        "The nodes of a weft.Graph or a compiled Keras model: [(name, op, inputs, device, dtype of output 0)].");
}

}  // namespace weft::python
