// weft.keras compile-time objects: losses (train/losses.h), metrics (train/metrics.h),
// optimizers (train/optimizers.h) and learning-rate schedules (train/schedules.h), bound as
// plain C++ values with Keras' argument names; python/weft/keras/{losses,metrics,optimizers}.py
// wrap them in Keras' classes. Also the model's learning-rate accessors callbacks use.
#include <optional>

#include "ops/math.h"
#include "train/losses.h"
#include "train/metrics.h"
#include "train/model.h"
#include "train/optimizers.h"

#include "keras_common.h"

namespace weft::python {
namespace {

using namespace weft::train;

// A schedule written in Python (a keras.optimizers.schedules.LearningRateSchedule subclass):
// called with the step on the host before each training step, under the GIL.
class PythonSchedule : public LearningRateSchedule {
 public:
  explicit PythonSchedule(py::object fn) : fn_(new py::object(std::move(fn))) {}
  ~PythonSchedule() override {
    py::gil_scoped_acquire gil;
    delete fn_;
  }
  double operator()(int64_t step) const override {
    py::gil_scoped_acquire gil;
    return py::float_((*fn_)(step)).cast<double>();
  }
  std::string ToString() const override {
    py::gil_scoped_acquire gil;
    return py::repr(*fn_).cast<std::string>();
  }

 private:
  py::object* fn_;  // owned; released under the GIL
};

Schedule ScheduleArg(const py::handle& h) {
  if (py::isinstance<PySchedule>(h)) return h.cast<const PySchedule&>().schedule;
  if (py::hasattr(h, "_schedule")) return h.attr("_schedule").cast<const PySchedule&>().schedule;
  return ConstantLR(h.cast<double>());
}

// Keras' clipping arguments: None or a number (0 and None are off).
double ClipArg(const py::handle& h) { return h.is_none() ? 0.0 : h.cast<double>(); }

Optimizer WithExtras(Optimizer o, const py::object& clipnorm, const py::object& clipvalue,
                     const py::object& global_clipnorm, const py::object& weight_decay) {
  o.clipnorm = ClipArg(clipnorm);
  o.clipvalue = ClipArg(clipvalue);
  o.global_clipnorm = ClipArg(global_clipnorm);
  if (!weight_decay.is_none()) o.weight_decay = weight_decay.cast<double>();
  o.Validate();
  return o;
}

// f(y_true, y_pred) over two arrays, run without the GIL; its tensor as a numpy array.
template <typename F>
py::array OnArrays(const py::object& y_true, const py::object& y_pred, F f) {
  const Tensor y = NumpyToTensor(y_true), p = NumpyToTensor(y_pred);
  Tensor out;
  {
    py::gil_scoped_release nogil;
    out = f(y, p);
  }
  return TensorToNumpy(out);
}

// Defines optimizer `name` with its own arguments followed by the ones every Keras optimizer takes
// (clipnorm, clipvalue, global_clipnorm, weight_decay), which `f` receives last.
template <typename F, typename... Args>
void DefOptimizer(py::module_& m, const char* name, F&& f, Args&&... args) {
  m.def(name, std::forward<F>(f), std::forward<Args>(args)..., py::arg("clipnorm") = py::none(),
        py::arg("clipvalue") = py::none(), py::arg("global_clipnorm") = py::none(), py::arg("weight_decay") = py::none());
}

void InitLosses(py::module_& k) {
  py::class_<Loss>(k, "Loss", "A loss (train/losses.h): pass it to Model.compile(loss=...).")
      .def_property_readonly("name", &Loss::name)
      .def_readonly("from_logits", &Loss::from_logits)
      .def_readonly("label_smoothing", &Loss::label_smoothing)
      .def_readonly("delta", &Loss::delta)
      .def("per_example", [](const Loss& l, const py::object& y_true, const py::object& y_pred) {
        return OnArrays(y_true, y_pred, [&](const Tensor& y, const Tensor& p) { return LossPerExample(l, y, p); });
      }, py::arg("y_true"), py::arg("y_pred"), "The per-example loss values (float32 [batch]) of arrays.")
      .def("_build_in_graph", [](const Loss& l, const PyTensor& y_true, const PyTensor& y_pred) {
        WEFT_REQUIRE(y_true.graph.is(y_pred.graph), "loss '{}': y_true and y_pred are tensors of different graphs",
                     l.name());
        Scope s = Scope::Root(y_pred.graph.cast<Graph*>()).NewSubScope(l.name());
        Output y = y_true.out;
        if (y.dtype() != l.label_dtype()) y = ops::Cast(s, y, l.label_dtype());
        return PyTensor{y_pred.graph, l.Build(s, y, y_pred.out)};
      }, py::arg("y_true"), py::arg("y_pred"),
         "The per-example loss (float32 [batch]) of graph tensors, as new nodes in their graph (custom training steps).")
      .def("__repr__", [](const Loss& l) { return "<weft.keras.losses." + l.name() + (l.from_logits ? " from_logits>" : ">"); });
  py::module_ losses = k.def_submodule("losses", "Keras losses.");
  losses.def("SparseCategoricalCrossentropy", &SparseCategoricalCrossentropy, py::arg("from_logits") = false);
  losses.def("CategoricalCrossentropy", &CategoricalCrossentropy, py::arg("from_logits") = false,
             py::arg("label_smoothing") = 0.0);
  losses.def("BinaryCrossentropy", &BinaryCrossentropy, py::arg("from_logits") = false, py::arg("label_smoothing") = 0.0);
  losses.def("MeanSquaredError", &MeanSquaredError);
  losses.def("MeanAbsoluteError", &MeanAbsoluteError);
  losses.def("Huber", &Huber, py::arg("delta") = 1.0);
  losses.def("get", &LossByName, py::arg("name"), "A loss by Keras name (probabilities, not logits).");
}

void InitMetrics(py::module_& k) {
  py::class_<Metric>(k, "Metric", "A metric (train/metrics.h): statistics per batch, a value from their totals.")
      .def_readonly("name", &Metric::name)
      .def_readonly("threshold", &Metric::threshold)
      .def_readonly("k", &Metric::k)
      .def_readonly("num_thresholds", &Metric::num_thresholds)
      .def_readonly("pr_curve", &Metric::pr_curve)
      .def_readonly("beta", &Metric::beta)
      .def_readonly("average", &Metric::average)
      .def("stats", [](const Metric& m, const py::object& y_true, const py::object& y_pred) {
        Tensor y = NumpyToTensor(y_true), p = NumpyToTensor(y_pred);
        py::gil_scoped_release nogil;
        return EvaluateMetricStats(m, y, p);
      }, py::arg("y_true"), py::arg("y_pred"), "The statistics of one batch of arrays (sums over its examples).")
      .def("values", [](const Metric& m, const py::object& y_true, const py::object& y_pred) {
        return OnArrays(y_true, y_pred, [&](const Tensor& y, const Tensor& p) { return MetricValues(m, y, p); });
      }, py::arg("y_true"), py::arg("y_pred"), "Per-example values of a mean metric (float32 [batch]).")
      .def("renamed", [](Metric m, const std::string& name) {
        m.name = name;
        return m;
      }, py::arg("name"), "A copy logged under another name.")
      .def("result", &Metric::Result, py::arg("stats"), "The metric's value from accumulated statistics.")
      .def("__repr__", [](const Metric& m) { return "<weft.keras.metrics '" + m.name + "'>"; });
  py::module_ metrics = k.def_submodule("metrics", "Keras metrics.");
  metrics.def("get", [](const std::string& name) { return Metric(name); }, py::arg("name"));
  metrics.def("Accuracy", &ExactAccuracy, py::arg("name") = "accuracy");
  metrics.def("BinaryAccuracy", &BinaryAccuracy, py::arg("threshold") = 0.5, py::arg("name") = "binary_accuracy");
  metrics.def("CategoricalAccuracy", &CategoricalAccuracy, py::arg("name") = "categorical_accuracy");
  metrics.def("SparseCategoricalAccuracy", &SparseCategoricalAccuracy, py::arg("name") = "sparse_categorical_accuracy");
  metrics.def("TopKCategoricalAccuracy", &TopKCategoricalAccuracy, py::arg("k") = 5,
              py::arg("name") = "top_k_categorical_accuracy");
  metrics.def("SparseTopKCategoricalAccuracy", &SparseTopKCategoricalAccuracy, py::arg("k") = 5,
              py::arg("name") = "sparse_top_k_categorical_accuracy");
  metrics.def("LossMetric", &LossMetric, py::arg("loss"), py::arg("name"));
  metrics.def("RootMeanSquaredError", &RootMeanSquaredError, py::arg("name") = "root_mean_squared_error");
  metrics.def("R2Score", &R2Score, py::arg("name") = "r2_score");
  metrics.def("FBetaScore", [](const py::object& average, double beta, const py::object& threshold, const std::string& name) {
    return FBetaScore(average.is_none() ? "" : average.cast<std::string>(), beta,
                      threshold.is_none() ? -1.0 : threshold.cast<double>(), name);
  }, py::arg("average") = py::none(), py::arg("beta") = 1.0, py::arg("threshold") = py::none(),
     py::arg("name") = "fbeta_score");
  metrics.def("fbeta_per_class", &FBetaPerClass, py::arg("metric"), py::arg("stats"),
              "FBetaScore's score per class (one, pooled, for average='micro') from accumulated statistics.");
  metrics.def("AUC", &AUC, py::arg("num_thresholds") = 200, py::arg("name") = "auc", py::arg("pr_curve") = false);
  for (const auto& [cls, kind] : {std::pair{"TruePositives", Metric::Kind::kTruePositives},
                                  std::pair{"FalsePositives", Metric::Kind::kFalsePositives},
                                  std::pair{"TrueNegatives", Metric::Kind::kTrueNegatives},
                                  std::pair{"FalseNegatives", Metric::Kind::kFalseNegatives}}) {
    metrics.def(cls, [kind](double threshold, const std::string& name) { return ConfusionCount(kind, threshold, name); },
                py::arg("threshold") = 0.5, py::arg("name") = "");
  }
  metrics.def("Precision", &Precision, py::arg("threshold") = 0.5, py::arg("name") = "precision");
  metrics.def("Recall", &Recall, py::arg("threshold") = 0.5, py::arg("name") = "recall");
}

void InitSchedules(py::module_& k) {
  py::class_<PySchedule>(k, "LearningRateSchedule", "A learning rate as a function of the step.")
      .def("__call__", [](const PySchedule& s, int64_t step) { return (*s.schedule)(step); }, py::arg("step"))
      .def("__repr__", [](const PySchedule& s) { return s.schedule->ToString(); });
  py::module_ sched = k.def_submodule("schedules", "Learning-rate schedules (train/schedules.h).");
  sched.def("Constant", [](double lr) { return PySchedule{ConstantLR(lr)}; }, py::arg("learning_rate"));
  sched.def("StepDecay", [](double lr, int64_t step_size, double gamma) { return PySchedule{StepDecay(lr, step_size, gamma)}; },
            py::arg("initial_learning_rate"), py::arg("step_size"), py::arg("gamma") = 0.1);
  sched.def("ExponentialDecay", [](double lr, int64_t decay_steps, double decay_rate, bool staircase) {
    return PySchedule{ExponentialDecay(lr, decay_steps, decay_rate, staircase)};
  }, py::arg("initial_learning_rate"), py::arg("decay_steps"), py::arg("decay_rate"), py::arg("staircase") = false);
  sched.def("PiecewiseConstantDecay", [](std::vector<int64_t> boundaries, std::vector<double> values) {
    return PySchedule{PiecewiseConstantDecay(std::move(boundaries), std::move(values))};
  }, py::arg("boundaries"), py::arg("values"));
  sched.def("CosineDecay", [](double lr, int64_t decay_steps, double alpha, std::optional<double> warmup_target,
                              int64_t warmup_steps) {
    return PySchedule{CosineDecay(lr, decay_steps, alpha, warmup_target, warmup_steps)};
  }, py::arg("initial_learning_rate"), py::arg("decay_steps"), py::arg("alpha") = 0.0,
     py::arg("warmup_target") = py::none(), py::arg("warmup_steps") = 0);
  sched.def("InverseTimeDecay", [](double lr, int64_t decay_steps, double decay_rate, bool staircase) {
    return PySchedule{InverseTimeDecay(lr, decay_steps, decay_rate, staircase)};
  }, py::arg("initial_learning_rate"), py::arg("decay_steps"), py::arg("decay_rate"), py::arg("staircase") = false);
  sched.def("PolynomialDecay", [](double lr, int64_t decay_steps, double end, double power, bool cycle) {
    return PySchedule{PolynomialDecay(lr, decay_steps, end, power, cycle)};
  }, py::arg("initial_learning_rate"), py::arg("decay_steps"), py::arg("end_learning_rate") = 0.0001,
     py::arg("power") = 1.0, py::arg("cycle") = false);
  sched.def("CosineDecayRestarts", [](double lr, int64_t first_decay_steps, double t_mul, double m_mul, double alpha) {
    return PySchedule{CosineDecayRestarts(lr, first_decay_steps, t_mul, m_mul, alpha)};
  }, py::arg("initial_learning_rate"), py::arg("first_decay_steps"), py::arg("t_mul") = 2.0, py::arg("m_mul") = 1.0,
     py::arg("alpha") = 0.0);
  sched.def("FromPython", [](py::object fn) { return PySchedule{std::make_shared<PythonSchedule>(std::move(fn))}; },
            py::arg("schedule"), "A schedule that calls schedule(step) (a Python object) before each step.");
  sched.def("LinearWarmup", [](const py::object& after, int64_t warmup_steps) {
    return PySchedule{LinearWarmup(ScheduleArg(after), warmup_steps)};
  }, py::arg("after"), py::arg("warmup_steps"));
}

void InitOptimizers(py::module_& k) {
  py::class_<Optimizer>(k, "Optimizer", "An optimizer (train/optimizers.h): pass it to Model.compile(optimizer=...).")
      .def_property_readonly("name", &Optimizer::name)
      .def_readonly("momentum", &Optimizer::momentum)
      .def_readonly("nesterov", &Optimizer::nesterov)
      .def_readonly("beta_1", &Optimizer::beta_1)
      .def_readonly("beta_2", &Optimizer::beta_2)
      .def_readonly("epsilon", &Optimizer::epsilon)
      .def_readonly("amsgrad", &Optimizer::amsgrad)
      .def_readonly("rho", &Optimizer::rho)
      .def_readonly("centered", &Optimizer::centered)
      .def_readonly("beta_2_decay", &Optimizer::beta_2_decay)
      .def_readonly("epsilon_1", &Optimizer::epsilon_1)
      .def_readonly("epsilon_2", &Optimizer::epsilon_2)
      .def_readonly("clip_threshold", &Optimizer::clip_threshold)
      .def_readonly("relative_step", &Optimizer::relative_step)
      .def_readonly("initial_accumulator_value", &Optimizer::initial_accumulator_value)
      .def_readonly("learning_rate_power", &Optimizer::learning_rate_power)
      .def_readonly("l1_regularization_strength", &Optimizer::l1_regularization_strength)
      .def_readonly("l2_regularization_strength", &Optimizer::l2_regularization_strength)
      .def_readonly("l2_shrinkage_regularization_strength", &Optimizer::l2_shrinkage_regularization_strength)
      .def_readonly("beta", &Optimizer::beta)
      .def_readonly("weight_decay", &Optimizer::weight_decay)
      .def_readonly("clipnorm", &Optimizer::clipnorm)
      .def_readonly("clipvalue", &Optimizer::clipvalue)
      .def_readonly("global_clipnorm", &Optimizer::global_clipnorm)
      .def_readonly("gradient_accumulation_steps", &Optimizer::gradient_accumulation_steps)
      .def("with_gradient_accumulation_steps", [](Optimizer o, int steps) {
        o.gradient_accumulation_steps = steps;
        o.Validate();
        return o;
      }, py::arg("steps"), "A copy that applies the mean gradient every `steps` steps (Keras 3's argument).")
      .def_property_readonly("learning_rate_is_schedule", [](const Optimizer& o) { return !o.learning_rate->constant(); })
      .def_property_readonly("schedule", [](const Optimizer& o) { return PySchedule{o.learning_rate}; })
      .def("learning_rate_at", [](const Optimizer& o, int64_t step) { return (*o.learning_rate)(step); }, py::arg("step"))
      .def("_apply_in_graph", [](const Optimizer& o, const std::vector<PyTensor>& vars,
                                 const std::vector<std::optional<PyTensor>>& grads, const PyTensor& lr,
                                 const PyTensor& step, const py::function& make_slot) {
        WEFT_REQUIRE(vars.size() == grads.size(), "{}: {} variables but {} gradients", o.name(), vars.size(),
                     grads.size());
        WEFT_REQUIRE(!vars.empty(), "{}.apply_gradients: no variables", o.name());
        std::vector<Output> vs, gs;
        for (size_t i = 0; i < vars.size(); ++i) {
          WEFT_REQUIRE(vars[i].graph.is(lr.graph) && (!grads[i] || grads[i]->graph.is(lr.graph)),
                       "{}.apply_gradients: variable '{}' or its gradient is in another graph", o.name(),
                       vars[i].out.node->name());
          vs.push_back(vars[i].out);
          gs.push_back(grads[i] ? grads[i]->out : Output());
        }
        const py::object graph = lr.graph;
        SlotFactory slot = [&](const Output& var, const std::string& name) {
          return make_slot(PyTensor{graph, var}, name).cast<PyTensor>().out;
        };
        Scope s = Scope::Root(graph.cast<Graph*>()).NewSubScope(o.name());
        py::list out;
        for (const Output& u : o.Apply(s, vs, gs, lr.out, step.out, slot)) out.append(PyTensor{graph, u});
        return out;
      }, py::arg("variables"), py::arg("gradients"), py::arg("learning_rate"), py::arg("step"), py::arg("make_slot"),
         "The update ops of (variable, gradient) pairs as new nodes in their graph (custom training steps): lr a "
         "float32 scalar tensor, step the int64 step before this update, make_slot(variable, name) a zero-initialized "
         "variable of the variable's shape.")
      .def("with_learning_rate", [](Optimizer o, const py::object& lr) {
        o.learning_rate = ScheduleArg(lr);
        return o;
      }, py::arg("learning_rate"), "A copy with another learning rate (a number or a schedule).")
      .def("__repr__", &Optimizer::ToString);
  py::module_ opt = k.def_submodule("optimizers", "Keras optimizers.");
  DefOptimizer(opt, "SGD", [](const py::object& lr, double momentum, bool nesterov, const py::object& cn, const py::object& cv,
                    const py::object& gcn, const py::object& wd) {
    return WithExtras(SGD(ScheduleArg(lr), momentum, nesterov), cn, cv, gcn, wd);
  }, py::arg("learning_rate") = 0.01, py::arg("momentum") = 0.0, py::arg("nesterov") = false);
  DefOptimizer(opt, "Adam", [](const py::object& lr, double b1, double b2, double eps, bool amsgrad, const py::object& cn,
                     const py::object& cv, const py::object& gcn, const py::object& wd) {
    return WithExtras(Adam(ScheduleArg(lr), b1, b2, eps, amsgrad), cn, cv, gcn, wd);
  }, py::arg("learning_rate") = 0.001, py::arg("beta_1") = 0.9, py::arg("beta_2") = 0.999, py::arg("epsilon") = 1e-7,
     py::arg("amsgrad") = false);
  opt.def("AdamW", [](const py::object& lr, double wd, double b1, double b2, double eps, bool amsgrad,
                      const py::object& cn, const py::object& cv, const py::object& gcn) {
    return WithExtras(AdamW(ScheduleArg(lr), wd, b1, b2, eps, amsgrad), cn, cv, gcn, py::none());
  }, py::arg("learning_rate") = 0.001, py::arg("weight_decay") = 0.004, py::arg("beta_1") = 0.9,
     py::arg("beta_2") = 0.999, py::arg("epsilon") = 1e-7, py::arg("amsgrad") = false, py::arg("clipnorm") = py::none(),
     py::arg("clipvalue") = py::none(), py::arg("global_clipnorm") = py::none());
  DefOptimizer(opt, "RMSprop", [](const py::object& lr, double rho, double momentum, double eps, bool centered,
                        const py::object& cn, const py::object& cv, const py::object& gcn, const py::object& wd) {
    return WithExtras(RMSprop(ScheduleArg(lr), rho, momentum, eps, centered), cn, cv, gcn, wd);
  }, py::arg("learning_rate") = 0.001, py::arg("rho") = 0.9, py::arg("momentum") = 0.0, py::arg("epsilon") = 1e-7,
     py::arg("centered") = false);
  DefOptimizer(opt, "Adagrad", [](const py::object& lr, double init, double eps, const py::object& cn, const py::object& cv,
                        const py::object& gcn, const py::object& wd) {
    return WithExtras(Adagrad(ScheduleArg(lr), init, eps), cn, cv, gcn, wd);
  }, py::arg("learning_rate") = 0.001, py::arg("initial_accumulator_value") = 0.1, py::arg("epsilon") = 1e-7);
  for (const auto& [cls, factory] : {std::pair{"Nadam", &Nadam}, std::pair{"Adamax", &Adamax}}) {
    DefOptimizer(opt, cls, [factory](const py::object& lr, double b1, double b2, double eps, const py::object& cn,
                                     const py::object& cv, const py::object& gcn, const py::object& wd) {
      return WithExtras(factory(ScheduleArg(lr), b1, b2, eps), cn, cv, gcn, wd);
    }, py::arg("learning_rate") = 0.001, py::arg("beta_1") = 0.9, py::arg("beta_2") = 0.999, py::arg("epsilon") = 1e-7);
  }
  DefOptimizer(opt, "Adadelta", [](const py::object& lr, double rho, double eps, const py::object& cn, const py::object& cv,
                         const py::object& gcn, const py::object& wd) {
    return WithExtras(Adadelta(ScheduleArg(lr), rho, eps), cn, cv, gcn, wd);
  }, py::arg("learning_rate") = 0.001, py::arg("rho") = 0.95, py::arg("epsilon") = 1e-7);
  DefOptimizer(opt, "Ftrl", [](const py::object& lr, double power, double init, double l1, double l2, double l2_shrinkage,
                     double beta, const py::object& cn, const py::object& cv, const py::object& gcn, const py::object& wd) {
    return WithExtras(Ftrl(ScheduleArg(lr), power, init, l1, l2, l2_shrinkage, beta), cn, cv, gcn, wd);
  }, py::arg("learning_rate") = 0.001, py::arg("learning_rate_power") = -0.5,
     py::arg("initial_accumulator_value") = 0.1, py::arg("l1_regularization_strength") = 0.0,
     py::arg("l2_regularization_strength") = 0.0, py::arg("l2_shrinkage_regularization_strength") = 0.0,
     py::arg("beta") = 0.0);
  DefOptimizer(opt, "Lion", [](const py::object& lr, double b1, double b2, const py::object& cn, const py::object& cv,
                     const py::object& gcn, const py::object& wd) {
    return WithExtras(Lion(ScheduleArg(lr), b1, b2), cn, cv, gcn, wd);
  }, py::arg("learning_rate") = 0.001, py::arg("beta_1") = 0.9, py::arg("beta_2") = 0.99);
  DefOptimizer(opt, "Lamb", [](const py::object& lr, double b1, double b2, double eps, const py::object& cn,
                     const py::object& cv, const py::object& gcn, const py::object& wd) {
    return WithExtras(Lamb(ScheduleArg(lr), b1, b2, eps), cn, cv, gcn, wd);
  }, py::arg("learning_rate") = 0.001, py::arg("beta_1") = 0.9, py::arg("beta_2") = 0.999, py::arg("epsilon") = 1e-7);
  DefOptimizer(opt, "Adafactor", [](const py::object& lr, double decay, double eps1, double eps2, double clip,
                          bool relative, const py::object& cn, const py::object& cv, const py::object& gcn,
                          const py::object& wd) {
    return WithExtras(Adafactor(ScheduleArg(lr), decay, eps1, eps2, clip, relative), cn, cv, gcn, wd);
  }, py::arg("learning_rate") = 0.001, py::arg("beta_2_decay") = -0.8, py::arg("epsilon_1") = 1e-30,
     py::arg("epsilon_2") = 1e-3, py::arg("clip_threshold") = 1.0, py::arg("relative_step") = true);
  opt.def("get", &OptimizerByName, py::arg("name"), "An optimizer by name with Keras' defaults.");
}

}  // namespace

void InitKerasCompile(py::module_& k) {
  InitLosses(k);
  InitMetrics(k);
  InitSchedules(k);
  InitOptimizers(k);
  // The compiled model's learning rate, for the Python optimizer object and the callbacks that
  // change the rate between epochs (ReduceLROnPlateau, LearningRateScheduler).
  auto model = py::reinterpret_borrow<py::class_<Model, std::shared_ptr<Model>>>(k.attr("Model"));
  // (`learning_rate` itself, read and set, is a property defined with the Model class.)
  model.def("set_learning_rate", &Model::SetLearningRate, py::arg("learning_rate"),
           "Sets a constant rate from the next step on (FailedPrecondition when the optimizer has a schedule).")
      .def_property_readonly("iterations", &Model::step, "Training steps taken (Keras' optimizer.iterations).");
}

}  // namespace weft::python
