// Keras' custom layers (Python classes subclassing keras.layers.Layer) and TF ops on KerasTensors:
// the trace recorder the Python side drives (python/weft/keras/_custom.py), over
// train::TraceRecorder, and the traces handed to a train::TracedLayer before its first call.
#include "train/initializers.h"
#include "train/layers_traced.h"

#include "keras_common.h"

namespace weft::python {
namespace {

using namespace weft::train;

// A recorder and the Python graph objects of its passes (tensors it returns hold them).
struct PyRecorder {
  explicit PyRecorder(std::string what) : rec(std::move(what)) {}
  TraceRecorder rec;
  py::object graph;  // the pass being traced
};

PyTensor InPass(const PyRecorder& r, const PyTensor& t, const char* what) {
  WEFT_REQUIRE(!r.graph.is_none() && t.graph.is(r.graph), "{}: {} '{}' is not a tensor of the traced call (made "
               "outside call, or in another layer's?)", r.rec.what(), what, t.out.name());
  return t;
}

}  // namespace

void InitKerasCustom(py::module_& k) {
  py::class_<PyRecorder>(k, "_TraceRecorder",
                         "Records the traces of a custom layer's call (train/layers_traced.h); used by weft.keras.")
      .def(py::init<std::string>(), py::arg("what"))
      .def("begin", [](PyRecorder& r, const py::object& graph) {
        r.rec.Begin(graph.cast<GraphPtr>());
        r.graph = graph;
      }, py::arg("graph"))
      .def("own_weight", [](PyRecorder& r, int64_t key, const std::string& name, const std::vector<int64_t>& shape,
                            const py::object& initializer, bool trainable, const py::object& regularizer,
                            const py::object& constraint) {
        Weight w{name, TensorShape(shape), InitializerArg(initializer, "add_weight initializer"), trainable};
        std::tie(w.l1, w.l2) = RegularizerArg(regularizer, "add_weight regularizer");
        w.constraint = ConstraintArg(constraint, "add_weight constraint");
        return PyTensor{r.graph, r.rec.OwnWeight(key, w)};
      }, py::arg("key"), py::arg("name"), py::arg("shape"), py::arg("initializer"), py::arg("trainable"),
         py::arg("regularizer"), py::arg("constraint"))
      .def("apply", [](PyRecorder& r, const std::shared_ptr<Layer>& layer, const std::vector<PyTensor>& inputs,
                       bool training) {
        std::vector<Output> ins;
        for (const PyTensor& t : inputs) ins.push_back(InPass(r, t, "the input").out);
        const std::vector<Output> outs = r.rec.ApplyOutputs(layer, ins, training);
        if (outs.size() == 1) return py::cast(PyTensor{r.graph, outs[0]});
        py::list all;  // several outputs (an RNN with return_state): a list, as Keras returns them
        for (const Output& o : outs) all.append(PyTensor{r.graph, o});
        return py::object(all);
      }, py::arg("layer"), py::arg("inputs"), py::arg("training"))
      .def("apply_outputs", [](PyRecorder& r, const std::shared_ptr<Layer>& layer, const std::vector<PyTensor>& inputs,
                               bool training) {
        std::vector<Output> ins;
        for (const PyTensor& t : inputs) ins.push_back(InPass(r, t, "the input").out);
        std::vector<PyTensor> outs;
        for (const Output& y : r.rec.ApplyOutputs(layer, ins, training)) outs.push_back(PyTensor{r.graph, y});
        return outs;
      }, py::arg("layer"), py::arg("inputs"), py::arg("training"), "Every output of the call (an RNN cell's step).")
      .def("add_loss", [](PyRecorder& r, const PyTensor& t) { r.rec.AddLoss(InPass(r, t, "the loss").out); },
           py::arg("loss"))
      .def("add_update", [](PyRecorder& r, const PyTensor& t) { r.rec.AddUpdate(InPass(r, t, "the update").out); },
           py::arg("update"))
      .def("finish", [](PyRecorder& r, bool training, const std::vector<PyTensor>& inputs,
                        const std::vector<PyTensor>& outputs) {
        std::vector<Output> ins, outs;
        for (const PyTensor& t : inputs) ins.push_back(t.out);
        for (const PyTensor& t : outputs) outs.push_back(InPass(r, t, "the output").out);
        r.rec.Finish(training, ins, outs);
        r.graph = py::none();
      }, py::arg("training"), py::arg("inputs"), py::arg("outputs"),
         "Ends the pass: the call's outputs (one, or several for an RNN cell: output, new states).");

  // The initial value of a tf.Variable a custom layer holds (tf.keras 2's guide: self.w =
  // tf.Variable(w_init(shape=...))), as the initializer of the weight it becomes.
  k.def("_initializer_from_array", [](const py::handle& value) { return FromTensor(NumpyToTensor(value, DType::kFloat32)); },
        py::arg("value"));

  py::object layer_class = k.attr("Layer");
  layer_class.attr("_set_traces") = py::cpp_function(
      [](Layer& l, const PyRecorder& r, int num_inputs) {
        auto* traced = dynamic_cast<TracedLayer*>(&l);
        WEFT_REQUIRE(traced != nullptr, "{} '{}' is not a traced layer", l.type(), l.name());
        traced->SetTraces(r.rec, num_inputs);
      },
      py::is_method(layer_class), py::arg("recorder"), py::arg("num_inputs"));
  layer_class.attr("_traced") = py::cpp_function(
      [](const Layer& l) {
        auto* traced = dynamic_cast<const TracedLayer*>(&l);
        return traced != nullptr && traced->traced();
      },
      py::is_method(layer_class));
}

}  // namespace weft::python
