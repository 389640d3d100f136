// weft.keras models: the C++ train::Model / train::Sequential with compile, fit, evaluate,
// predict, weights files and callbacks (built-in C++ ones, and Python ones called through a
// trampoline that takes the GIL). fit/evaluate/predict release the GIL; Ctrl-C stops the step
// (Model::StopTraining + Session::Cancel) and raises KeyboardInterrupt, leaving the model usable.
#include <cstdio>
#include <sstream>

#include "graph/graph_io.h"
#include "ops/math.h"
#include "train/callbacks.h"
#include "train/model.h"

#include "data_common.h"
#include "keras_common.h"

namespace weft::python {
namespace {

using namespace weft::train;

py::dict LogsToDict(const Logs& logs) {
  py::dict d;
  for (const auto& [k, v] : logs) d[py::str(k)] = v;
  return d;
}

// Calls a weft.keras.callbacks.Callback's Keras methods from the training thread.
class PyCallback : public Callback {
 public:
  explicit PyCallback(py::object cb) : cb_(std::move(cb)) {}
  ~PyCallback() override {
    py::gil_scoped_acquire gil;
    cb_ = py::object();
  }
  void OnTrainBegin(Model&) override { Call("on_train_begin", {}); }
  void OnEpochBegin(Model&, int epoch) override { Call("on_epoch_begin", epoch, {}); }
  void OnBatchBegin(Model&, int64_t batch) override { Call("on_train_batch_begin", batch, {}); }
  void OnBatchEnd(Model&, int64_t batch, const Logs& logs) override { Call("on_train_batch_end", batch, logs); }
  void OnEpochEnd(Model&, int epoch, const Logs& logs) override { Call("on_epoch_end", epoch, logs); }
  void OnTrainEnd(Model&) override { Call("on_train_end", {}); }

 private:
  void Call(const char* method, const Logs& logs) {
    py::gil_scoped_acquire gil;
    cb_.attr(method)(LogsToDict(logs));
  }
  void Call(const char* method, int64_t index, const Logs& logs) {
    py::gil_scoped_acquire gil;
    cb_.attr(method)(index, LogsToDict(logs));
  }
  py::object cb_;
};

std::vector<Sym> Syms(const py::object& o) {
  std::vector<Sym> out;
  if (py::isinstance<PySym>(o)) {
    out.push_back(o.cast<const PySym&>().sym);
  } else {
    for (const py::handle& h : o) out.push_back(h.cast<const PySym&>().sym);
  }
  return out;
}

// Model arrays: one numpy array (n == 1), or a list / tuple of n (a model with several inputs or outputs).
std::vector<Tensor> Arrays(const py::object& o, size_t n) {
  std::vector<Tensor> out;
  if (n > 1 && (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o))) {
    for (const py::handle& h : o) out.push_back(NumpyToTensor(py::reinterpret_borrow<py::object>(h)));
  } else {
    out.push_back(NumpyToTensor(o));
  }
  return out;
}

// Predict's result: one array, or a list for a model with several outputs.
py::object OutputsToPython(const Model& m, std::vector<Tensor> outs) {
  if (m.num_outputs() == 1) return TensorToNumpy(std::exchange(outs[0], Tensor()));
  py::list l;
  for (Tensor& t : outs) l.append(TensorToNumpy(std::exchange(t, Tensor())));
  return l;
}

py::object ShapeTuple(const TensorShape& s) {
  py::tuple t(s.rank());
  for (int i = 0; i < s.rank(); ++i) t[i] = s.dim(i) < 0 ? py::object(py::none()) : py::object(py::int_(s.dim(i)));
  return t;
}

// C's stdout (the progress bar) and Python's sys.stdout share one file: keep them in order.
void FlushPythonStdout() {
  py::object out = py::module_::import("sys").attr("stdout");
  if (!out.is_none() && py::hasattr(out, "flush")) out.attr("flush")();
}

void Cancel(Model& m) {
  m.StopTraining();
  if (m.session() != nullptr) m.session()->Cancel();
}

}  // namespace

void InitKerasModel(py::module_& k) {
  py::class_<Callback, std::shared_ptr<Callback>>(k, "CppCallback", "A callback implemented in C++ (train/callbacks.h).");
  py::class_<ModelCheckpoint, Callback, std::shared_ptr<ModelCheckpoint>>(k, "ModelCheckpoint",
      "Saves the model's weights after each epoch to `filepath` ('{epoch}' is replaced by the 1-based\n"
      "epoch); with save_best_only, only when `monitor` improves (mode 'min', 'max' or 'auto').")
      .def(py::init<std::string, std::string, bool, std::string>(), py::arg("filepath"), py::arg("monitor") = "val_loss",
           py::arg("save_best_only") = false, py::arg("mode") = "auto")
      .def_property_readonly("last_saved", &ModelCheckpoint::last_saved);
  py::class_<EarlyStopping, Callback, std::shared_ptr<EarlyStopping>>(k, "EarlyStopping",
      "Stops training when `monitor` has not improved by more than min_delta for `patience` epochs;\n"
      "restore_best_weights puts back the best epoch's weights.")
      .def(py::init([](const std::string& monitor, double min_delta, int patience, const std::string& mode,
                       bool restore_best_weights) {
             return std::make_shared<EarlyStopping>(monitor, patience, min_delta, mode, restore_best_weights);
           }),
           py::arg("monitor") = "val_loss", py::arg("min_delta") = 0.0, py::arg("patience") = 0,
           py::arg("mode") = "auto", py::arg("restore_best_weights") = false)
      .def_property_readonly("stopped_epoch", &EarlyStopping::stopped_epoch);
  py::class_<CSVLogger, Callback, std::shared_ptr<CSVLogger>>(k, "CSVLogger",
      "Writes one CSV row per epoch ('epoch' and the logs); append continues an existing file.")
      .def(py::init<std::string, bool>(), py::arg("filename"), py::arg("append") = false);

  py::class_<Model, std::shared_ptr<Model>>(k, "Model", "A model from symbolic inputs to an output (train/model.h).")
      .def(py::init([](const py::object& inputs, const py::object& outputs, const std::string& name) {
             return std::make_shared<Model>(Syms(inputs), Syms(outputs), name);
           }),
           py::arg("inputs"), py::arg("outputs"), py::arg("name") = "model")
      .def_property_readonly("name", &Model::name)
      .def_property_readonly("layers", [](const Model& m) {
        std::vector<std::shared_ptr<Layer>> out(m.layers().begin(), m.layers().end());
        return out;
      })
      .def("get_layer", [](const Model& m, const std::string& name) { return std::shared_ptr<Layer>(m.GetLayer(name)); },
           py::arg("name"))
      .def_property_readonly("input_shape", [](const Model& m) { return ShapeTuple(m.input_shape()); })
      .def_property_readonly("output_shape", [](const Model& m) { return ShapeTuple(m.output_shape()); })
      .def("count_params", &Model::CountParams)
      .def("train_step_dot", [](Model& m, bool partitioned) {
             return partitioned ? PartitionsToDot(m.TrainStepPartitions()) : ToDot(*m.graph());
           },
           py::arg("partitioned") = true,
           "DOT text of the compiled training step; partitioned: one cluster per device with the Send/Recv pairs.")
      .def("summary_text", [](const Model& m) {
        std::ostringstream os;
        m.Summary(os);
        return os.str();
      })
      .def("compile", [](Model& m, const Loss& loss, const Optimizer& optimizer, const std::vector<Metric>& metrics,
                         int inter_op_threads, int intra_op_threads, int64_t seed, bool use_gpus,
                         int64_t device_memory_limit, const std::vector<std::string>& recompute) {
             CompileOptions o;
             o.recompute = recompute;
             o.loss = loss;
             o.optimizer = optimizer;
             o.metrics = metrics;
             o.session.inter_op_threads = inter_op_threads;
             o.session.intra_op_threads = intra_op_threads;
             o.session.use_gpus = use_gpus;
             o.session.device_memory_limit = device_memory_limit;
             o.seed = seed;
             py::gil_scoped_release nogil;
             m.Compile(o);
           },
           py::arg("loss"), py::arg("optimizer"), py::arg("metrics"), py::arg("inter_op_threads") = 0,
           py::arg("intra_op_threads") = 0, py::arg("seed") = 0, py::arg("use_gpus") = true,
           py::arg("device_memory_limit") = 0, py::arg("recompute") = std::vector<std::string>())
      .def_property_readonly("compiled", &Model::compiled)
      .def("fit",
           [](Model& m, const py::object& x, const py::object& y, int64_t batch_size, int epochs, int initial_epoch,
              int64_t steps_per_epoch, bool shuffle, uint64_t shuffle_seed, const py::object& validation_x,
              const py::object& validation_y, const py::list& callbacks, int verbose, const py::object& sample_weight,
              int64_t validation_steps, const std::vector<int>& validation_epochs) {
             FitOptions o;
             o.validation_epochs = validation_epochs;
             o.batch_size = batch_size;
             o.epochs = epochs;
             o.initial_epoch = initial_epoch;
             o.steps_per_epoch = steps_per_epoch;
             o.shuffle = shuffle;
             o.shuffle_seed = shuffle_seed;
             o.verbose = verbose;
             const bool dataset = py::isinstance<PyDataset>(x);  // x: a weft.data pipeline of {x, y} batches
             std::vector<Tensor> tx = dataset ? std::vector<Tensor>() : Arrays(x, m.num_inputs());
             std::vector<Tensor> ty = dataset ? std::vector<Tensor>() : Arrays(y, m.num_outputs());
             Tensor vx, vy, sw;
             if (!sample_weight.is_none()) {
               sw = NumpyToTensor(sample_weight);
               o.sample_weight = &sw;
             }
             data::Dataset vds;
             if (py::isinstance<PyDataset>(validation_x)) {
               vds = validation_x.cast<const PyDataset&>().ds;
               o.validation_data = &vds;
               o.validation_steps = validation_steps;
             } else if (!validation_x.is_none()) {
               vx = NumpyToTensor(validation_x);
               vy = NumpyToTensor(validation_y);
               o.validation_x = &vx;
               o.validation_y = &vy;
             }
             for (const py::handle& cb : callbacks) {
               if (py::isinstance<Callback>(cb)) {
                 o.callbacks.push_back(cb.cast<std::shared_ptr<Callback>>());
               } else {
                 o.callbacks.push_back(std::make_shared<PyCallback>(py::reinterpret_borrow<py::object>(cb)));
               }
             }
             FlushPythonStdout();
             History h = RunInterruptible([&] {
               History r = dataset ? m.Fit(x.cast<const PyDataset&>().ds, o) : m.Fit(tx, ty, o);
               std::fflush(stdout);
               return r;
             }, [&] { Cancel(m); });
             py::dict history;
             for (const auto& [k, v] : h.history) history[py::str(k)] = py::cast(v);
             return py::make_tuple(py::cast(h.epochs), history);
           },
           py::arg("x"), py::arg("y"), py::arg("batch_size") = 32, py::arg("epochs") = 1, py::arg("initial_epoch") = 0,
           py::arg("steps_per_epoch") = -1, py::arg("shuffle") = true, py::arg("shuffle_seed") = 0,
           py::arg("validation_x") = py::none(), py::arg("validation_y") = py::none(),
           py::arg("callbacks") = py::list(), py::arg("verbose") = 1, py::arg("sample_weight") = py::none(),
           py::arg("validation_steps") = -1, py::arg("validation_epochs") = std::vector<int>{},
           "Model::Fit (x, validation_x: arrays or a _weft.data.Dataset); returns (epochs, history dict). "
           "sample_weight: per-example loss weights [N] (arrays only).")
      .def("evaluate",
           [](Model& m, const py::object& x, const py::object& y, int64_t batch_size) {
             if (py::isinstance<PyDataset>(x)) {
               data::Dataset ds = x.cast<const PyDataset&>().ds;
               return LogsToDict(RunInterruptible([&] { return m.Evaluate(ds); }, [&] { Cancel(m); }));
             }
             std::vector<Tensor> tx = Arrays(x, m.num_inputs()), ty = Arrays(y, m.num_outputs());
             Logs logs = RunInterruptible([&] { return m.Evaluate(tx, ty, batch_size); }, [&] { Cancel(m); });
             return LogsToDict(logs);
           }, py::arg("x"), py::arg("y"), py::arg("batch_size") = 32, "Model::Evaluate: mean loss and metrics.")
      .def("predict",
           [](Model& m, const py::object& x, int64_t batch_size) {
             std::vector<Tensor> out;
             if (py::isinstance<PyDataset>(x)) {
               data::Dataset ds = x.cast<const PyDataset&>().ds;
               out = RunInterruptible([&] { return m.PredictAll(ds); }, [&] { Cancel(m); });
             } else {
               std::vector<Tensor> tx = Arrays(x, m.num_inputs());
               out = RunInterruptible([&] { return m.PredictAll(tx, batch_size); }, [&] { Cancel(m); });
             }
             return OutputsToPython(m, std::move(out));
           }, py::arg("x"), py::arg("batch_size") = 32,
           "Model::PredictAll: the outputs for every row of x (a list of arrays for several inputs); one array, or "
           "a list of one per output.")
      .def_property_readonly("num_inputs", &Model::num_inputs)
      .def_property_readonly("num_outputs", &Model::num_outputs)
      .def_property_readonly("input_dtypes", [](const Model& m) {
        std::vector<std::string> out;
        for (const Sym& s : m.inputs()) out.emplace_back(DTypeName(s->dtype));
        return out;
      })
      .def("train_on_batch",
           [](Model& m, const py::object& x, const py::object& y, const py::object& sample_weight) {
             std::vector<Tensor> tx = Arrays(x, m.num_inputs()), ty = Arrays(y, m.num_outputs());
             Tensor sw = sample_weight.is_none() ? Tensor() : NumpyToTensor(sample_weight, DType::kFloat32);
             const Tensor* w = sample_weight.is_none() ? nullptr : &sw;
             return LogsToDict(RunInterruptible([&] { return m.TrainOnBatch(tx, ty, w); }, [&] { Cancel(m); }));
           }, py::arg("x"), py::arg("y"), py::arg("sample_weight") = py::none())
      .def("save_weights", [](Model& m, const std::string& path) {
        py::gil_scoped_release nogil;
        m.SaveWeights(path);
      }, py::arg("filepath"), "Writes every variable (weights, optimizer slots, step) to a checkpoint file.")
      .def("load_weights", [](Model& m, const std::string& path) {
        py::gil_scoped_release nogil;
        m.LoadWeights(path);
      }, py::arg("filepath"), "Reads a checkpoint written by save_weights (each variable must match in dtype and shape).")
      .def("get_weights", [](Model& m) {
        WEFT_REQUIRE(m.compiled(), "Model '{}'.get_weights: compile the model first", m.name());
        const std::vector<std::string> names = m.LayerWeightNames();
        std::vector<Tensor> values;
        {
          py::gil_scoped_release nogil;
          values = m.session()->Run(std::vector<std::pair<std::string, Tensor>>{}, names, {});
        }
        py::list out;
        for (Tensor& t : values) out.append(TensorToNumpy(std::exchange(t, Tensor())));
        return out;
      }, "The layers' weights (kernels, biases, batch-norm statistics) as numpy arrays, in layer order.")
      .def("set_variables", [](Model& m, const py::dict& values, const std::string& source) {
        std::map<std::string, Tensor> t;
        for (const auto& [k, v] : values) t.emplace(k.cast<std::string>(), NumpyToTensor(py::reinterpret_borrow<py::object>(v)));
        py::gil_scoped_release nogil;
        m.SetVariables(t, source);
      }, py::arg("values"), py::arg("source"),
         "Assigns variables by name ({name: array}); all are checked first, so on error nothing changes.")
      .def("variable_values", [](Model& m) {
        const std::vector<std::string> names = m.VariableNames();
        std::vector<Tensor> values;
        {
          py::gil_scoped_release nogil;
          values = m.session()->Run(std::vector<std::pair<std::string, Tensor>>{}, names, {});
        }
        py::dict out;
        for (size_t i = 0; i < names.size(); ++i) out[py::str(names[i])] = TensorToNumpy(std::exchange(values[i], Tensor()));
        return out;
      }, "Every checkpointed variable (weights, optimizer slots, step) by name, as numpy arrays.")
      .def_property_readonly("layer_weight_names", &Model::LayerWeightNames)
      .def_property_readonly("_weight_trainable", [](const Model& m) {
        std::vector<bool> out;
        for (const LayerPtr& l : m.layers()) for (const Weight& w : l->weights()) out.push_back(w.trainable);
        return out;
      }, "Per weight in layer_weight_names' order: whether it is trainable.")
      .def("_apply_in_graph", [](const Model& m, const std::vector<PyTensor>& xs, bool training,
                                 const std::vector<PyTensor>& weights) {
        WEFT_REQUIRE(!xs.empty(), "Model '{}': no input tensors", m.name());
        const py::object graph = xs[0].graph;
        for (const PyTensor& t : xs)
          WEFT_REQUIRE(t.graph.is(graph), "Model '{}': its input tensors are in different graphs", m.name());
        for (const PyTensor& w : weights)
          WEFT_REQUIRE(w.graph.is(graph), "Model '{}': a weight tensor is in another graph than the input", m.name());
        std::vector<Output> ins, ws;
        for (const PyTensor& t : xs) ins.push_back(t.out);
        for (const PyTensor& w : weights) ws.push_back(w.out);
        Scope s = Scope::Root(graph.cast<Graph*>()).NewSubScope(m.name());
        std::vector<Output> updates, losses;
        const std::vector<Output> ys = m.Apply(s, ins, training, ws, &updates, &losses);
        auto wrap = [&](const std::vector<Output>& v) {
          py::list l;
          for (const Output& o : v) l.append(PyTensor{graph, o});
          return l;
        };
        return py::make_tuple(wrap(ys), wrap(updates), wrap(losses));
      }, py::arg("xs"), py::arg("training"), py::arg("weights"),
         "(outputs, state updates, loss terms) of the model applied to graph tensors xs (one per input) in their "
         "graph over the weight tensors given (layer_weight_names' order): custom training steps. The "
         "outputs are float32.")
      .def_property("learning_rate", &Model::learning_rate, &Model::SetLearningRate,
                    "The rate the next step uses; setting it (a constant optimizer rate only, as Keras) changes it from the next step on.")
      .def_property_readonly("variable_names", &Model::VariableNames)
      .def_property_readonly("step", &Model::step, "Training steps taken (restored by load_weights).")
      .def("stop_training", &Model::StopTraining, "Asks fit to stop after the current step.")
      .def_property_readonly("stop_requested", &Model::stop_requested);

  py::class_<Sequential, Model, std::shared_ptr<Sequential>>(k, "Sequential", "A linear stack of layers.")
      .def(py::init([](const std::vector<int64_t>& input_shape, const std::vector<std::shared_ptr<Layer>>& layers,
                       const std::string& name, const std::string& dtype) {
             std::vector<LayerPtr> ls(layers.begin(), layers.end());
             return std::make_shared<Sequential>(TensorShape(input_shape), ls, name, ParseDType(dtype));
           }),
           py::arg("input_shape"), py::arg("layers"), py::arg("name") = "sequential", py::arg("dtype") = "float32")
      .def("add", [](Sequential& s, const std::shared_ptr<Layer>& l) { s.Add(l); }, py::arg("layer"));
}

}  // namespace weft::python
