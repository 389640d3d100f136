// weft._weft.data: the C++ input pipeline (data/dataset.h) for weft.data (python/weft/data/).
// Python keeps the element structure (tuples, dicts) and traces map/filter functions into graphs;
// this module sees flat lists of components. Iteration releases the GIL: the stages, including
// traced map functions (train/graph_function.h), run in C++ on the pipeline's threads.
#include "train/graph_function.h"
#include "train/strategy.h"

#include "data_common.h"

namespace weft::python {
namespace {

using data::Dataset;

std::vector<Output> Outputs(const std::vector<PyTensor>& ts, Graph* g, const char* what) {
  std::vector<Output> out;
  for (const PyTensor& t : ts) {
    WEFT_REQUIRE(t.graph.cast<Graph*>() == g, "{}: tensor {} is not in the function's graph (a tensor made outside "
                 "the function?)", what, t.out.name());
    out.push_back(t.out);
  }
  return out;
}

// Destroyed by Python (with the GIL): the iterator's destructor joins the pipeline's threads,
// which may be waiting for the GIL (a from_generator source), so it runs without it.
struct PyIterator {
  explicit PyIterator(std::unique_ptr<data::Iterator> i) : it(std::move(i)) {}
  PyIterator(PyIterator&&) = default;
  ~PyIterator() {
    if (it != nullptr && PyGILState_Check()) {
      py::gil_scoped_release nogil;
      it.reset();
    }
  }
  std::unique_ptr<data::Iterator> it;
};

// Elements from a Python iterator of lists of arrays (weft.data's from_generator checks and
// flattens them); takes the GIL for each element, on whichever pipeline thread asks.
class PythonIterator : public data::Iterator {
 public:
  explicit PythonIterator(py::object it) : it_(std::move(it)) {}
  ~PythonIterator() override {
    py::gil_scoped_acquire gil;
    it_ = py::object();
  }
  bool Next(data::Element* out) override {
    py::gil_scoped_acquire gil;
    if (it_.is_none()) return false;
    try {
      py::object item = it_.attr("__next__")();
      out->clear();
      for (const py::handle& a : item) out->push_back(NumpyToTensor(a));
      return true;
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_StopIteration)) {
        it_ = py::none();
        return false;
      }
      // A Python exception must not travel to other threads: it becomes a weft error with its text.
      throw Error(errors::InvalidArgument("Dataset.from_generator: {}", e.what()));
    }
  }

 private:
  py::object it_;
};

}  // namespace

void InitData(py::module_& m) {
  py::class_<PyIterator>(m, "Iterator", "One pass over a Dataset.")
      .def("__iter__", [](PyIterator& self) -> PyIterator& { return self; })
      .def("__next__", [](PyIterator& self) {
        data::Element e;
        bool more;
        {
          py::gil_scoped_release nogil;
          more = self.it->Next(&e);
        }
        if (!more) throw py::stop_iteration();
        py::list out;
        for (Tensor& t : e) out.append(TensorToNumpy(std::exchange(t, Tensor())));
        return out;
      }, "The next element's components as numpy arrays (StopIteration at the end).");

  py::class_<PyDataset>(m, "Dataset", "A C++ data::Dataset over flat lists of components (weft.data wraps it).")
      .def_static("from_tensors", [](const py::list& components) {
        std::vector<Tensor> ts;
        for (const py::handle& c : components) ts.push_back(NumpyToTensor(c));
        return PyDataset{Dataset::FromTensors(std::move(ts))};
      }, py::arg("components"), "Element i is row i of every component (shared, not copied).")
      .def_static("from_iterators", [](py::function make, int64_t cardinality) {
        auto holder = std::shared_ptr<py::object>(new py::object(std::move(make)), [](py::object* f) {
          py::gil_scoped_acquire gil;
          delete f;
        });
        return PyDataset{Dataset::FromIterators([holder] {
          py::gil_scoped_acquire gil;
          return std::unique_ptr<data::Iterator>(new PythonIterator((*holder)()));
        }, cardinality)};
      }, py::arg("make"), py::arg("cardinality") = data::kUnknownCardinality,
      "Elements from make() (called once per pass): an iterator of lists of arrays; `cardinality`: how many "
      "each pass yields, when the caller knows it.")
      .def_static("range", [](int64_t start, int64_t stop, int64_t step, const py::object& dtype) {
        return PyDataset{Dataset::Range(start, stop, step, ToDType(dtype))};
      }, py::arg("start"), py::arg("stop"), py::arg("step"), py::arg("dtype"))
      .def_static("zip", [](const std::vector<PyDataset>& ds) {
        std::vector<Dataset> v;
        for (const PyDataset& d : ds) v.push_back(d.ds);
        return PyDataset{Dataset::Zip(v)};
      }, py::arg("datasets"))
      .def("concatenate", [](const PyDataset& a, const PyDataset& b) { return PyDataset{a.ds.Concatenate(b.ds)}; },
           py::arg("other"))
      .def("shuffle", [](const PyDataset& d, uint64_t seed, int64_t buffer_size, bool reshuffle) {
        return PyDataset{d.ds.Shuffle(seed, buffer_size, reshuffle)};
      }, py::arg("seed"), py::arg("buffer_size"), py::arg("reshuffle_each_iteration"))
      .def("batch", [](const PyDataset& d, int64_t n, bool drop) { return PyDataset{d.ds.Batch(n, drop)}; },
           py::arg("batch_size"), py::arg("drop_remainder"))
      .def("padded_batch", [](const PyDataset& d, int64_t n, std::vector<std::vector<int64_t>> shapes,
                              const py::list& values, bool drop) {
        std::vector<Tensor> pads;
        for (const py::handle& v : values) pads.push_back(NumpyToTensor(v));
        return PyDataset{d.ds.PaddedBatch(n, std::move(shapes), std::move(pads), drop)};
      }, py::arg("batch_size"), py::arg("padded_shapes"), py::arg("padding_values"), py::arg("drop_remainder"),
      "padded_batch: padded_shapes per component (-1: the batch's largest), scalar padding values as arrays.")
      .def("repeat", [](const PyDataset& d, int64_t n) { return PyDataset{d.ds.Repeat(n)}; }, py::arg("count"))
      .def("shard", [](const PyDataset& d, int64_t n, int64_t i) { return PyDataset{d.ds.Shard(n, i)}; },
           py::arg("num_shards"), py::arg("index"))
      .def("take", [](const PyDataset& d, int64_t n) { return PyDataset{d.ds.Take(n)}; }, py::arg("count"))
      .def("skip", [](const PyDataset& d, int64_t n) { return PyDataset{d.ds.Skip(n)}; }, py::arg("count"))
      .def("cache", [](const PyDataset& d) { return PyDataset{d.ds.Cache()}; })
      .def("prefetch", [](const PyDataset& d, int64_t n) { return PyDataset{d.ds.Prefetch(n)}; }, py::arg("buffer_size"))
      .def("unbatch", [](const PyDataset& d, int64_t known) { return PyDataset{d.ds.Unbatch(known)}; },
           py::arg("known_batch") = -1)
      .def("map_graph",
           [](const PyDataset& d, const py::object& graph, const std::vector<PyTensor>& inputs,
              const std::vector<PyTensor>& outputs, int num_parallel_calls) {
             auto g = graph.cast<GraphPtr>();
             data::MapFn fn = train::GraphMapFn(g, Outputs(inputs, g.get(), "Dataset.map"),
                                                Outputs(outputs, g.get(), "Dataset.map"));
             return PyDataset{d.ds.Map(std::move(fn), num_parallel_calls)};
           },
           py::arg("graph"), py::arg("inputs"), py::arg("outputs"), py::arg("num_parallel_calls"),
           "Maps every element through the graph: component i feeds inputs[i]; the outputs are the new components.")
      .def("filter_graph",
           [](const PyDataset& d, const py::object& graph, const std::vector<PyTensor>& inputs, const PyTensor& output) {
             auto g = graph.cast<GraphPtr>();
             return PyDataset{d.ds.Filter(train::GraphPredicate(g, Outputs(inputs, g.get(), "Dataset.filter"),
                                                                Outputs({output}, g.get(), "Dataset.filter")[0]))};
           },
           py::arg("graph"), py::arg("inputs"), py::arg("output"))
      .def("distribute", [](const PyDataset& d, const Strategy& s) {
        return PyDataset{s.ExperimentalDistributeDataset(d.ds)};
      }, py::arg("strategy"), "Global batches as this process's replicas' parts {x_0, y_0, x_1, y_1, ...}.")
      .def("cardinality", [](const PyDataset& d) { return d.ds.Cardinality(); })
      .def("debug_string", [](const PyDataset& d) { return d.ds.DebugString(); })
      .def("make_iterator", [](const PyDataset& d) {
        py::gil_scoped_release nogil;  // a Prefetch stage starts its thread here
        return PyIterator(d.ds.MakeIterator());
      });
  m.attr("INFINITE_CARDINALITY") = data::kInfiniteCardinality;
  m.attr("UNKNOWN_CARDINALITY") = data::kUnknownCardinality;
}

}  // namespace weft::python
