// The `weft._weft` extension module; the `weft` package (python/weft/) is the public face.
#include "common.h"
#include "data_common.h"

namespace weft::python {
void InitInterrupt();
}

PYBIND11_MODULE(_weft, m) {
  using namespace weft::python;
  m.doc() = "weft's C++ core (graph, session, training); use the `weft` package.";
  InitInterrupt();
  InitErrors(m);
  InitTensors(m);
  InitNumpyAllocator(m);
  InitGraph(m);
  InitSession(m);
  py::module_ data = m.def_submodule("data", "The input pipeline (data/dataset.h).");
  InitData(data);
  InitTf1Io(m);
  py::module_ keras = m.def_submodule("keras", "The C++ training API (train/).");
  InitKeras(keras);
  InitKerasModel(keras);
  InitKerasCompile(keras);
  InitKerasConfig(keras);
  py::module_ distribute = m.def_submodule("distribute", "Distribution strategies (train/strategy.h).");
  InitDistribute(distribute);
#ifdef WEFT_HAVE_UCX
  InitServer(distribute);
#endif
}
