// What whole-model files and get_config need from the C++ layers: each layer's Keras
// constructor arguments (recorded by weft.keras._config when the layer is made, as JSON) and the
// functional graph of symbolic tensors (which layer made a KerasTensor from which inputs).
//
// The arguments live in a table keyed by the C++ layer, not on the Python wrapper: a wrapper can
// be dropped (`Dense(10)(x)` inline) and remade later for the same layer, and its attributes
// would go with it. The table holds weak pointers, so it never keeps a layer alive.
// Also: weft checkpoint files (train/checkpoint.h) as {name: numpy array}, for model files.
#include <map>
#include <mutex>

#include "train/checkpoint.h"

#include "keras_common.h"

namespace weft::python {
namespace {

using train::Layer;

struct ConfigEntry {
  std::weak_ptr<Layer> layer;
  std::string json;
};

std::mutex config_mu;
std::map<const Layer*, ConfigEntry>& Configs() {
  static auto* table = new std::map<const Layer*, ConfigEntry>;  // never destroyed: used until exit
  return *table;
}

}  // namespace

void InitKerasConfig(py::module_& k) {
  k.def("_set_layer_config", [](const std::shared_ptr<Layer>& layer, const std::string& json) {
    std::lock_guard<std::mutex> l(config_mu);
    auto& table = Configs();
    for (auto it = table.begin(); it != table.end();) {  // drop the entries of layers that are gone
      it = it->second.layer.expired() ? table.erase(it) : std::next(it);
    }
    table[layer.get()] = ConfigEntry{layer, json};
  }, py::arg("layer"), py::arg("json"), "Records a layer's Keras constructor arguments (JSON).");
  k.def("_layer_config", [](const std::shared_ptr<Layer>& layer) -> py::object {
    std::lock_guard<std::mutex> l(config_mu);
    auto it = Configs().find(layer.get());
    // The address may have been reused by a new layer: the entry must point at this one.
    if (it == Configs().end() || it->second.layer.lock() != layer) return py::none();
    return py::str(it->second.json);
  }, py::arg("layer"), "The JSON recorded by _set_layer_config, or None.");
  k.def("_layer_key", [](const std::shared_ptr<Layer>& layer) { return reinterpret_cast<uintptr_t>(layer.get()); },
        py::arg("layer"), "An id equal for wrappers of the same C++ layer (while it lives).");
  k.def("_sym_history", [](const PySym& s) {
    py::list inputs;
    for (const train::Sym& in : s.sym->inputs) inputs.append(PySym{in});
    py::object layer = s.sym->layer ? py::cast(std::shared_ptr<Layer>(s.sym->layer)) : py::none();
    py::object first = s.sym->first ? py::cast(PySym{s.sym->first}) : py::none();
    return py::make_tuple(layer, inputs, s.sym->index, first);
  }, py::arg("tensor"),
        "(layer or None for an Input, [input KerasTensors], which output of the call it is, the call's output 0 "
        "or None) of a KerasTensor.");
  k.def("_sym_id", [](const PySym& s) { return reinterpret_cast<uintptr_t>(s.sym.get()); }, py::arg("tensor"),
        "An id equal for KerasTensors that are the same symbolic tensor.");
  k.def("_save_checkpoint", [](const std::string& path, const py::dict& tensors) {
    std::vector<std::pair<std::string, Tensor>> named;
    for (const auto& [name, value] : tensors) {
      named.emplace_back(name.cast<std::string>(), NumpyToTensor(py::reinterpret_borrow<py::object>(value)));
    }
    py::gil_scoped_release nogil;
    train::SaveCheckpoint(path, named);
  }, py::arg("path"), py::arg("tensors"), "Writes {name: array} as a weft checkpoint file (atomically).");
  k.def("_load_checkpoint", [](const std::string& path) {
    std::map<std::string, Tensor> loaded;
    {
      py::gil_scoped_release nogil;
      loaded = train::LoadCheckpoint(path);
    }
    py::dict out;
    for (auto& [name, t] : loaded) out[py::str(name)] = TensorToNumpy(std::exchange(t, Tensor()));
    return out;
  }, py::arg("path"), "Reads and verifies a weft checkpoint file: {name: array} (DataLoss on damage).");
}

}  // namespace weft::python
