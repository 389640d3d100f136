// Shared pieces of the `weft._weft` extension: the handles Python holds (a graph shared by its
// tensors and operations), numpy conversion, and the interruptible call that runs C++ work with
// the GIL released while Ctrl-C stays effective.
//
//   py::array a = TensorToNumpy(t);            // zero-copy when t's buffer is not shared
//   Tensor t = NumpyToTensor(a);               // zero-copy when C-contiguous, a weft dtype, 64-byte aligned
//   auto out = RunInterruptible([&] { return sess.Run(feeds, fetches); }, [&] { sess.Cancel(); });
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "graph/graph.h"
#include "graph/session.h"

namespace weft::python {

namespace py = pybind11;

// The C++ graph behind a `weft.Graph` (held by shared_ptr).
using GraphPtr = std::shared_ptr<Graph>;

// `weft.Tensor`: one output of a node (a symbolic value). It holds the Python graph object (not
// just the C++ graph) so a handle never outlives the nodes it points at and `.graph` returns the
// user's weft.Graph with its name-scope state. Copied and destroyed only with the GIL held.
struct PyTensor {
  py::object graph;
  Output out;
};

// `weft.Operation`: one node.
struct PyOperation {
  py::object graph;
  Node* node = nullptr;  // owned by graph
};

// ---- dtypes and numpy (tensors.cc) -----------------------------------------------------------

// weft dtype <-> numpy dtype (float16 is storage only; bfloat16 has no numpy dtype).
py::dtype NumpyDType(DType dt);
DType FromNumpyDType(const py::dtype& dt);  // throws InvalidArgument naming the numpy dtype
// A DType from "float32", a weft.DType, a numpy dtype or a numpy scalar type.
DType ToDType(const py::handle& h);

// Returns the tensor as a numpy array: zero-copy (the array's base holds the buffer) when nobody
// else holds the buffer (a variable's storage or a constant is copied, so the array never changes
// under the caller), else a copy.
py::array TensorToNumpy(const Tensor& t);
// The one conversion of a Python value (int, float, list, numpy array) to a numpy array of `dtype`
// (default: the value's own) that loses nothing silently: an integer target rejects values out
// of its range (2**40 as int32, -1 as uint8, an int64 array holding 2**40 fed to int32), NaN and
// infinities, and Python floats with a fraction (1.5 as int32, as TF); a Python int beyond int64
// is rejected with or without a dtype. Each is InvalidArgument naming the value and the dtype.
// Other conversions are numpy's astype (float64 -> float32 rounds, as TF).
py::array CheckedArray(const py::handle& value, std::optional<DType> dtype);
// Wraps a numpy array (or anything np.asarray accepts) as a Tensor. C-contiguous arrays of a weft
// dtype whose data is 64-byte aligned are shared (the tensor keeps the array alive); others are
// copied. `dtype`, when given, converts Python scalars and lists (not ndarrays) to it, checked
// as CheckedArray.
Tensor NumpyToTensor(const py::handle& value, std::optional<DType> dtype = std::nullopt);

// ---- running C++ work (interrupt.cc) ---------------------------------------------------------

// Runs `work` with the GIL released, on the calling thread. On the main thread, a SIGINT during
// the call runs `cancel` (from a watcher thread, repeated every 50 ms until `work` ends); then the
// Python exception the signal handler raises (KeyboardInterrupt) is thrown and work's own error
// dropped. Otherwise returns work's result or rethrows its exception. Call with the GIL held.
// See interrupt.cc.
void RunInterruptibleVoid(const std::function<void()>& work, const std::function<void()>& cancel);

template <typename F>
auto RunInterruptible(F&& work, const std::function<void()>& cancel) {
  using R = decltype(work());
  if constexpr (std::is_void_v<R>) {
    RunInterruptibleVoid(work, cancel);
  } else {
    std::optional<R> result;
    RunInterruptibleVoid([&] { result.emplace(work()); }, cancel);
    return std::move(*result);
  }
}

// ---- module parts ----------------------------------------------------------------------------

void InitErrors(py::module_& m);
void InitTensors(py::module_& m);
void InitGraph(py::module_& m);
void InitSession(py::module_& m);
void InitKeras(py::module_& m);
void InitKerasModel(py::module_& m);
void InitKerasCompile(py::module_& m);  // keras_compile.cc
void InitKerasConfig(py::module_& m);  // keras_config.cc: layer configs, functional graph walk
void InitNumpyAllocator(py::module_& m);
void InitDistribute(py::module_& m);
// Checkpoint files of weft.train.Saver, CRC-32C and graph nodes for TensorBoard (tf1_io.cc).
void InitTf1Io(py::module_& m);
#ifdef WEFT_HAVE_UCX
// weft.distribute.Server and the runner of weft.Session(target=...) (python/src/server.cc).
void InitServer(py::module_& m);
std::function<std::unique_ptr<RemoteRunner>(Graph*)> RemoteRunnerFor(py::object server, int64_t step_timeout_ms);
#endif

}  // namespace weft::python
