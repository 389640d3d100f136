// weft.distribute: the C++ strategies (distributed/strategy.h). A strategy's scope is a per-thread
// stack here (`_enter` / `_exit`, driven by the Python context manager in weft/distribute.py).
#include <memory>
#include <vector>

#include "common.h"
#include "distributed/strategy.h"

namespace weft::python {
namespace {

thread_local std::vector<std::unique_ptr<Strategy::ScopeGuard>> scopes;

}  // namespace

void InitDistribute(py::module_& m) {
  py::class_<Strategy, std::shared_ptr<Strategy>>(m, "Strategy", "A distribution strategy (distributed/strategy.h).")
      .def_property_readonly("name", &Strategy::name)
      .def_property_readonly("num_replicas_in_sync", &Strategy::num_replicas_in_sync)
      .def_property_readonly("devices", &Strategy::devices)
      .def_property_readonly("mirrored", &Strategy::mirrored)
      .def_property_readonly("variable_device", &Strategy::variable_device)
      .def("_enter", [](const Strategy& s) { scopes.push_back(std::make_unique<Strategy::ScopeGuard>(&s)); })
      .def("_exit", [](const Strategy& s) {
        if (scopes.empty() || Strategy::Current() != &s) {
          throw Error(errors::FailedPrecondition("{}.scope() exited out of order", s.name()));
        }
        scopes.pop_back();
      });
  py::class_<OneDeviceStrategy, Strategy, std::shared_ptr<OneDeviceStrategy>>(m, "OneDeviceStrategy")
      .def(py::init<std::string>(), py::arg("device") = "/device:CPU:0");
  py::class_<MirroredStrategy, Strategy, std::shared_ptr<MirroredStrategy>>(m, "MirroredStrategy")
      .def(py::init<std::vector<std::string>>(), py::arg("devices"))
      .def(py::init<int>(), py::arg("num_cpu_devices"));
  py::class_<CentralStorageStrategy, Strategy, std::shared_ptr<CentralStorageStrategy>>(m, "CentralStorageStrategy")
      .def(py::init<std::vector<std::string>, std::string>(), py::arg("compute_devices"),
           py::arg("variable_device") = "/job:localhost/replica:0/task:0/device:CPU:0")
      .def(py::init<int>(), py::arg("num_cpu_devices"));
}

}  // namespace weft::python
